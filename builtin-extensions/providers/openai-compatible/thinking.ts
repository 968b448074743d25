/**
 * The request fields that ask a reasoning model to think, or not, in the provider's own format (compat
 * `thinkingFormat`), with the values of compat `thinkingLevelMap`. A model that does not reason gets none.
 */
import type { ThinkingLevel } from "@knightcodeai/cli/kit";
import { MAP_LEVELS, type MapLevel, type ResolvedCompat, type ThinkingLevelMap } from "./compat.js";

/** What a thinking level comes to for one model: thinking off (with the map's `off`), or on with an effort. */
export type ThinkingChoice =
  | {
      on: false;
      /** The map's `off`: a value to send, null (cannot be turned off), undefined (not mapped). */
      off?: string | null;
    }
  | {
      on: true;
      /** The effort to send; undefined when the model offers no level to name. */
      effort?: string;
    };

/** The levels a reasoning model offers besides `off`: not mapped to null; `xhigh` and `max` only when mapped. */
export function offeredLevels(map: ThinkingLevelMap | undefined): MapLevel[] {
  return MAP_LEVELS.filter((level) => {
    if (level === "off") return false;
    const mapped = map?.[level];
    if (mapped === null) return false;
    return level === "xhigh" || level === "max" ? typeof mapped === "string" : true;
  });
}

/**
 * The choice for a requested level. A level the model does not offer becomes the nearest one it offers, the next
 * higher first (so `xhigh` on a model whose highest is `max` asks for `max`, and on one whose highest is `high`
 * asks for `high`).
 */
export function thinkingChoice(
  level: ThinkingLevel | undefined,
  map: ThinkingLevelMap | undefined,
): ThinkingChoice {
  if (!level || level === "off") return map && "off" in map ? { on: false, off: map.off } : { on: false };
  const offered = offeredLevels(map);
  const at = MAP_LEVELS.indexOf(level);
  const chosen =
    MAP_LEVELS.slice(at).find((l) => offered.includes(l)) ??
    [...MAP_LEVELS.slice(0, at)].reverse().find((l) => offered.includes(l));
  if (!chosen) return { on: true };
  return { on: true, effort: map?.[chosen] ?? chosen };
}

/** The fields to add to the request body. */
export function thinkingFields(
  level: ThinkingLevel | undefined,
  reasoning: boolean,
  compat: ResolvedCompat,
): Record<string, unknown> {
  if (!reasoning) return {};
  const choice = thinkingChoice(level, compat.thinkingLevelMap);
  const fields: Record<string, unknown> = {};
  /** `reasoning_effort` as OpenAI names it, when the compat allows it. */
  const effort = () => {
    if (!compat.supportsReasoningEffort) return;
    const value = choice.on ? choice.effort : choice.off;
    if (typeof value === "string") fields.reasoning_effort = value;
  };
  // A model whose map says it cannot stop thinking gets nothing that tries to stop it.
  const canStop = choice.on || choice.off !== null;
  switch (compat.thinkingFormat) {
    case "openrouter":
      if (choice.on) fields.reasoning = choice.effort ? { effort: choice.effort } : { enabled: true };
      else if (canStop) fields.reasoning = { effort: choice.off ?? "none" };
      break;
    case "deepseek":
      if (choice.on || canStop) fields.thinking = { type: choice.on ? "enabled" : "disabled" };
      if (choice.on) effort();
      break;
    case "zai":
      if (choice.on) fields.thinking = { type: "enabled", clear_thinking: false };
      else if (canStop) fields.thinking = { type: "disabled" };
      if (choice.on) effort();
      break;
    case "together":
      if (choice.on || canStop) fields.reasoning = { enabled: choice.on };
      if (choice.on) effort();
      break;
    case "qwen":
      if (choice.on || canStop) fields.enable_thinking = choice.on;
      if (choice.on) effort();
      break;
    case "ant-ling":
      if (choice.on && choice.effort) fields.reasoning = { effort: choice.effort };
      break;
    case "baseten": {
      const args: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(compat.chatTemplateArgs ?? {})) {
        args[name] = value !== null && typeof value === "object" ? choice.on : value;
      }
      if (Object.keys(args).length > 0) fields.chat_template_args = args;
      effort();
      break;
    }
    default:
      // `off` sends reasoning_effort only when the map names a value for it ("none").
      effort();
  }
  return fields;
}
