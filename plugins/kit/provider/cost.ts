import type { ModelInfo, Usage, UsageCost } from "../../../kernel/index.js";

/** Dollars for a usage at the model's prices (per million tokens); zero when the model has none. */
export function calculateCost(
  model: Pick<ModelInfo, "cost">,
  usage: Omit<Usage, "cost" | "totalTokens">,
): UsageCost {
  const price = model.cost;
  if (!price) return { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
  const cost = {
    input: (usage.input * price.input) / 1e6,
    output: (usage.output * price.output) / 1e6,
    cacheRead: (usage.cacheRead * price.cacheRead) / 1e6,
    cacheWrite: (usage.cacheWrite * price.cacheWrite) / 1e6,
  };
  return { ...cost, total: cost.input + cost.output + cost.cacheRead + cost.cacheWrite };
}
