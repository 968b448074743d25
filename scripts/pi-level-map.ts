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
