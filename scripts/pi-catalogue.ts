/**
 * What the generators that read pi-ai's model catalogue share (scripts/gen-provider-catalogue.ts,
 * scripts/gen-copilot-catalogue.ts).
 */
import { claudeTraits } from "../builtin-extensions/providers/anthropic/models.js";

/**
 * pi-ai's `thinkingLevelMap` as the catalogue generators keep it: without the entries that say what no entry says
 * (`minimal` to `high` mapped to their own name, `xhigh` and `max` mapped to null, since neither is offered unless
 * mapped). Undefined when nothing is left.
 */
export function compactLevelMap(
  map: Record<string, string | null>,
): Record<string, string | null> | undefined {
  const kept = Object.entries(map).filter(([level, value]) => {
    if (["minimal", "low", "medium", "high"].includes(level)) return value !== level;
    if (level === "xhigh" || level === "max") return value !== null;
    return true;
  });
  return kept.length > 0 ? Object.fromEntries(kept) : undefined;
}

/** `text` as it stands inside a template literal: backslashes, backquotes and `${` escaped. */
export function inTemplateLiteral(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/`/g, "\\`").replace(/\$\{/g, "\\${");
}

/**
 * Where pi's Messages compat for a Claude model (`forceAdaptiveThinking`, `supportsTemperature`) asks for other than
 * what builtin:anthropic does for that id on its own; the other keys are returned for the caller to judge. A model
 * whose compat is left out of a generated catalogue must give no problems.
 */
export function claudeCompatProblems(
  id: string,
  compat: Record<string, unknown>,
): { problems: string[]; rest: Record<string, unknown> } {
  const { forceAdaptiveThinking, supportsTemperature, ...rest } = compat;
  const traits = claudeTraits({ id });
  const problems: string[] = [];
  if ((forceAdaptiveThinking === true) !== (traits.thinking === "adaptive"))
    problems.push(`pi's adaptive thinking (${forceAdaptiveThinking}) differs from builtin:anthropic's`);
  if (supportsTemperature === false && traits.sampling)
    problems.push("pi sends it no temperature; builtin:anthropic would");
  return { problems, rest };
}
