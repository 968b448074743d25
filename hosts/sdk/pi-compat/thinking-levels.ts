/** pi-ai's thinking-level helpers, as pi 1.6 counts levels (`xhigh` and `max` only where a model maps them). */

const LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"] as const;
type PiThinkingLevel = (typeof LEVELS)[number];
interface ThinkingModel {
  reasoning?: boolean;
  thinkingLevelMap?: Partial<Record<string, unknown>>;
}

/** The levels a model offers, as pi counts them: `off` alone without reasoning; `xhigh`/`max` only when mapped. */
export function getSupportedThinkingLevels(model: ThinkingModel): PiThinkingLevel[] {
  if (!model?.reasoning) return ["off"];
  return LEVELS.filter((level) => {
    const mapped = model.thinkingLevelMap?.[level];
    if (mapped === null) return false;
    return level === "xhigh" || level === "max" ? mapped !== undefined : true;
  });
}

/** The requested level when the model has it, else the next higher it has, else the next lower. */
export function clampThinkingLevel(model: ThinkingModel, level: string): PiThinkingLevel {
  const available = getSupportedThinkingLevels(model);
  if ((available as string[]).includes(level)) return level as PiThinkingLevel;
  const at = (LEVELS as readonly string[]).indexOf(level);
  if (at === -1) return available[0] ?? "off";
  const higher = LEVELS.slice(at).find((l) => available.includes(l));
  const lower = [...LEVELS.slice(0, at)].reverse().find((l) => available.includes(l));
  return higher ?? lower ?? available[0] ?? "off";
}
