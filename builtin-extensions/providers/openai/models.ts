/**
 * The OpenAI models this provider offers out of the box. More (or other endpoints speaking the same API) can be
 * added in `<agentDir>/models.json` with `"api": "openai-responses"`.
 *
 * Prices are OpenAI's standard list prices in dollars per million tokens at the time of writing (November 2026),
 * for prompts up to 272K input tokens: OpenAI's pricing page (developers.openai.com/api/docs/pricing) and model
 * pages, as quoted by the GPT-6.2 launch coverage of 17-18 November 2026 (gpt-6.2-astra $8 / $0.40 cached / $40,
 * gpt-6.2-sol $2 / $0.10 / $10) and the GPT-6.1 Sol and GPT-6 Luna launch notes (gpt-6.1-sol $2 / $0.10 / $10,
 * gpt-6-luna $0.10 / $0.01 / $0.50). Longer prompts are billed at 2x input and 1.5x output for the whole request,
 * which a flat price cannot show. OpenAI bills cache writes at 1.25x the input price on these models and reports
 * them as `input_tokens_details.cache_write_tokens`, so `cacheWrite` carries that price. Context windows (1,050,000)
 * and output limits (128,000) come from the same model pages. Check the pricing page before relying on the figures.
 */
import type { ProviderModelConfig } from "@knightcodeai/cli/kit";

export const OPENAI_PROVIDER = "openai";
export const OPENAI_RESPONSES_API = "openai-responses";
export const DEFAULT_BASE_URL = "https://api.openai.com/v1";
export const OPENAI_API_KEY_ENV = "OPENAI_API_KEY";

const CONTEXT_WINDOW = 1_050_000;
const MAX_OUTPUT = 128_000;

function price(input: number, cacheRead: number, output: number): NonNullable<ProviderModelConfig["cost"]> {
  return { input, output, cacheRead, cacheWrite: input * 1.25 };
}

export const OPENAI_MODELS: readonly ProviderModelConfig[] = [
  {
    id: "gpt-6.2-sol",
    name: "GPT-6.2 Sol",
    contextWindow: CONTEXT_WINDOW,
    maxTokens: MAX_OUTPUT,
    reasoning: true,
    input: ["text", "image"],
    cost: price(2, 0.1, 10),
  },
  {
    id: "gpt-6.2-astra",
    name: "GPT-6.2 Astra",
    contextWindow: CONTEXT_WINDOW,
    maxTokens: MAX_OUTPUT,
    reasoning: true,
    input: ["text", "image"],
    cost: price(8, 0.4, 40),
  },
  {
    id: "gpt-6.1-sol",
    name: "GPT-6.1 Sol",
    contextWindow: CONTEXT_WINDOW,
    maxTokens: MAX_OUTPUT,
    reasoning: true,
    input: ["text", "image"],
    cost: price(2, 0.1, 10),
  },
  {
    id: "gpt-6-luna",
    name: "GPT-6 Luna",
    contextWindow: CONTEXT_WINDOW,
    maxTokens: MAX_OUTPUT,
    reasoning: true,
    input: ["text", "image"],
    cost: price(0.1, 0.01, 0.5),
  },
];
