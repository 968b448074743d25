/**
 * A permission gate that replaces the built-in classifier gate: tools on an allow list run, tools on a deny list
 * never do, and a person confirms everything else (without a UI, it is blocked).
 *
 * Shows: what a replacement of `builtin:classifier-gate` does so the rest of KnightCode uses it
 * (docs/swapping-builtins.md). Load it with `{"extensions": ["-builtin:classifier-gate"]}` in the settings and
 * `-e allowlist-gate.ts` (or the file's path in the same `extensions` list):
 * - it declares its row of tools.json with `registerToolSettings`, so `/tools` and the app-server's
 *   `tool/settings/*` list and change it (values of keys ending in `Key` masked);
 * - it reads the row with `ctx.toolSettings.read()` on every call (read again only when the file changed), and
 *   fails closed: a tools.json it cannot read makes every call need a person;
 * - it provides `permissionGateService`, so what listens to the gate's decisions hears this one's.
 */
import {
  type ExtensionAPI,
  type ExtensionContext,
  type GateDecision,
  permissionGateService,
  type ToolCallEvent,
  type ToolCallResult,
  type ToolSettingValue,
} from "@knightcodeai/cli";

export const GATE_NAME = "allowlist-gate";
export const DEFAULT_ALLOW = ["read", "grep", "find", "ls"];

/** `"read, mcp__docs__*"` or `["read"]` as a list of patterns; undefined when the value is neither. */
export function patterns(value: ToolSettingValue | undefined, fallback: string[]): string[] | undefined {
  if (value === undefined) return fallback;
  const items = typeof value === "string" ? value.split(",") : Array.isArray(value) ? value : undefined;
  return items?.map((p) => p.trim()).filter((p) => p !== "");
}

/** Whether a tool name matches a pattern; `*` matches any characters (`mcp__github__*`). */
export function matches(pattern: string, toolName: string): boolean {
  const source = pattern
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${source}$`).test(toolName);
}

export default function allowlistGate(knightcode: ExtensionAPI) {
  knightcode.registerToolSettings(GATE_NAME, {
    description: "Runs the tools on its allow list, never those on its deny list, and asks about the rest",
    enabledByDefault: true,
    settings: {
      allow: `tools that run without asking, separated by commas; * matches any characters (default: ${DEFAULT_ALLOW.join(", ")})`,
      deny: "tools that never run, separated by commas",
    },
  });

  const listeners = new Set<(decision: GateDecision) => void>();
  knightcode.services.provide(permissionGateService, () => ({
    onDecision(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
  }));

  const decide = (
    event: ToolCallEvent,
    decision: Pick<GateDecision, "outcome" | "by" | "reason" | "rule">,
  ): ToolCallResult | undefined => {
    const full: GateDecision = {
      toolCallId: event.toolCallId,
      toolName: event.toolName,
      ...(event.parentToolCallId ? { parentToolCallId: event.parentToolCallId } : {}),
      ...decision,
    };
    for (const listener of [...listeners]) {
      try {
        listener(full);
      } catch (error) {
        knightcode.log.error(`a decision listener failed: ${String(error)}`);
      }
    }
    if (full.outcome === "allowed") return undefined;
    return { block: true, reason: `${GATE_NAME}: ${full.reason}`, details: { permissionGate: full } };
  };

  /** A person decides; without one the call does not run. */
  const ask = async (event: ToolCallEvent, ctx: ExtensionContext, why: string) => {
    if (!ctx.hasUI) {
      return decide(event, {
        outcome: "denied",
        by: "policy",
        reason: `${why}, and no one is here to confirm it. Find another way, or ask the user.`,
      });
    }
    const approved = await ctx.ui.confirm(
      `Allow ${event.toolName}?`,
      `${event.toolName} ${JSON.stringify(event.input)}\nWhy you are asked: ${why}.`,
      ctx.signal ? { signal: ctx.signal } : undefined,
    );
    return approved
      ? decide(event, { outcome: "allowed", by: "user", reason: `the user approved it (${why})` })
      : decide(event, { outcome: "denied", by: "user", reason: `the user declined it (${why}).` });
  };

  // After every other tool_call handler (as the built-in gate), so it judges the arguments they may have changed.
  knightcode.on(
    "tool_call",
    async (event, ctx) => {
      const settings = ctx.toolSettings.read(GATE_NAME);
      if (settings.warning)
        return ask(event, ctx, `the permission file cannot be read (${settings.warning})`);
      if (!settings.enabled) return undefined;
      const allow = patterns(settings.values.allow, DEFAULT_ALLOW);
      const deny = patterns(settings.values.deny, []);
      if (!allow || !deny) {
        return ask(event, ctx, `"${GATE_NAME}" in ${settings.path} has an allow or deny that is not a list`);
      }
      const denied = deny.find((p) => matches(p, event.toolName));
      if (denied) {
        return decide(event, {
          outcome: "denied",
          by: "rule",
          rule: `deny ${denied}`,
          reason: `${event.toolName} is on the deny list. Do not retry it; find another way or ask the user.`,
        });
      }
      const allowed = allow.find((p) => matches(p, event.toolName));
      if (allowed) {
        return decide(event, {
          outcome: "allowed",
          by: "rule",
          rule: `allow ${allowed}`,
          reason: `${event.toolName} is on the allow list`,
        });
      }
      return ask(event, ctx, `${event.toolName} is not on the allow list`);
    },
    { fallback: true },
  );
}
