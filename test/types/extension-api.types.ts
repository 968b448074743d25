/**
 * Type-level checks of the public API, compiled by `npm run typecheck` (not run by mocha). A line marked
 * `@ts-expect-error` fails the type-check when it stops being an error.
 */
import type { ExtensionAPI } from "@knightcodeai/cli";

export function handlersAreCheckedPerEvent(kc: ExtensionAPI, flag: boolean): void {
  // Results keep their literal types without `as const`.
  kc.on("project_trust", (event) => ({ trusted: event.cwd === "/trusted" ? "yes" : "no" }));
  kc.on("input", (event) =>
    flag ? { action: "handled" } : { action: "transform", text: event.text.trim() },
  );
  kc.on("tool_call", async (event, ctx) => {
    if (!ctx.hasUI) return { block: true, reason: `${event.toolName} needs a person to approve it` };
    return undefined;
  });
  kc.on("turn_end", (event) => ({
    entries: [...event.entries, { type: "custom", customType: "audit" }],
    continue: false,
  }));
  // @ts-expect-error a block flag is a boolean
  kc.on("tool_call", () => ({ block: "yes" }));
  // @ts-expect-error unknown event name
  kc.on("tool_cal", () => {});
  const unsubscribe: () => void = kc.on("agent_start", () => {});
  unsubscribe();
}
