/**
 * `enabledModels` (pi's setting name): the models the cycling keys go through. Each entry is `provider/id`, an id,
 * or either with `*` for any characters (`anthropic/*`, `*sonnet*`). Unset, empty, or matching no usable model:
 * every usable model, so a stale list never leaves the keys with nothing.
 */
import type { UsableModel } from "../../kernel/index.js";

export function scopeModels(usable: UsableModel[], patterns: readonly string[] | undefined): UsableModel[] {
  if (!patterns || patterns.length === 0) return usable;
  const tests = patterns.map(toRegExp);
  const scoped = usable.filter(({ model }) =>
    tests.some((test) => test.test(`${model.provider}/${model.id}`) || test.test(model.id)),
  );
  return scoped.length > 0 ? scoped : usable;
}

function toRegExp(pattern: string): RegExp {
  const body = pattern
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${body}$`, "i");
}
