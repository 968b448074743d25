/**
 * The Gemini models this provider offers, and how each takes a thinking setting.
 *
 * Context windows, output limits and prices (USD per million tokens) are the figures of pi's Gemini catalogue
 * (`@earendil-works/pi-ai` 0.85, `google-generative-ai`), which follows Google's pricing page
 * (ai.google.dev/gemini-api/docs/pricing). `cacheRead` is the price of context-cache hits; Gemini bills no cache
 * writes as such (explicit caches are billed by storage time, which no per-token price can show). Gemini 2.5 Pro and
 * some other models cost more for prompts over 200,000 tokens; the figures are those of shorter prompts. Prices
 * change: override them in `<agentDir>/models.json` when they do.
 */
import type { ModelInfo, ProviderModelConfig, ThinkingLevel } from "@knightcodeai/cli/kit";

export const GOOGLE_PROVIDER = "google";
export const GOOGLE_API = "google-generative-ai";
export const GOOGLE_BASE_URL = "https://generativelanguage.googleapis.com";
export const GOOGLE_KEY_ENV = "GEMINI_API_KEY";

type Level = Exclude<ThinkingLevel, "off">;

/**
 * How a model takes its thinking setting (ai.google.dev/gemini-api/docs/thinking):
 * - `budget` (Gemini 2.5): `thinkingConfig.thinkingBudget`, tokens; `budgets` per level, `off` the budget that turns
 *   thinking off (`0`) or, where it cannot be turned off (2.5 Pro), the least one.
 * - `level` (Gemini 3 and later, Gemma 4): `thinkingConfig.thinkingLevel`; `levels` per KnightCode level, `off` the
 *   lowest level the model takes (none of them turns thinking off).
 */
export type GeminiThinking =
  | { kind: "budget"; budgets: Readonly<Record<Level, number>>; off: number }
  | { kind: "level"; levels: Readonly<Record<Level, GeminiLevel>>; off: GeminiLevel };

export type GeminiLevel = "MINIMAL" | "LOW" | "MEDIUM" | "HIGH";

const PRO_25: GeminiThinking = {
  kind: "budget",
  budgets: { minimal: 128, low: 2048, medium: 8192, high: 24576, xhigh: 32768 },
  off: 128, // 2.5 Pro always thinks: 128 is its least budget
};
const FLASH_25: GeminiThinking = {
  kind: "budget",
  budgets: { minimal: 128, low: 2048, medium: 8192, high: 16384, xhigh: 24576 },
  off: 0,
};
const FLASH_LITE_25: GeminiThinking = {
  kind: "budget",
  budgets: { minimal: 512, low: 2048, medium: 8192, high: 16384, xhigh: 24576 },
  off: 0,
};
/** Gemini 3 Flash and later Flash models: all four levels; MINIMAL is as close to off as they go. */
const FLASH_3: GeminiThinking = {
  kind: "level",
  levels: { minimal: "MINIMAL", low: "LOW", medium: "MEDIUM", high: "HIGH", xhigh: "HIGH" },
  off: "MINIMAL",
};
/** Gemini 3 Pro models take LOW and HIGH only. */
const PRO_3: GeminiThinking = {
  kind: "level",
  levels: { minimal: "LOW", low: "LOW", medium: "HIGH", high: "HIGH", xhigh: "HIGH" },
  off: "LOW",
};
/** Gemma 4 takes MINIMAL and HIGH. */
const GEMMA_4: GeminiThinking = {
  kind: "level",
  levels: { minimal: "MINIMAL", low: "MINIMAL", medium: "HIGH", high: "HIGH", xhigh: "HIGH" },
  off: "MINIMAL",
};

const WINDOW = 1_048_576;
const OUTPUT = 65_536;

function gemini(
  id: string,
  name: string,
  cost: { input: number; output: number; cacheRead: number },
): ProviderModelConfig {
  return {
    id,
    name,
    contextWindow: WINDOW,
    maxTokens: OUTPUT,
    reasoning: true,
    input: ["text", "image"],
    cost: { ...cost, cacheWrite: 0 },
  };
}

export const GOOGLE_MODELS: readonly ProviderModelConfig[] = [
  gemini("gemini-2.5-pro", "Gemini 2.5 Pro", { input: 1.25, output: 10, cacheRead: 0.125 }),
  gemini("gemini-2.5-flash", "Gemini 2.5 Flash", { input: 0.3, output: 2.5, cacheRead: 0.03 }),
  gemini("gemini-2.5-flash-lite", "Gemini 2.5 Flash-Lite", { input: 0.1, output: 0.4, cacheRead: 0.01 }),
  gemini("gemini-3-flash-preview", "Gemini 3 Flash Preview", { input: 0.5, output: 3, cacheRead: 0.05 }),
  gemini("gemini-3.1-pro-preview", "Gemini 3.1 Pro Preview", { input: 2, output: 12, cacheRead: 0.2 }),
  gemini("gemini-3.1-flash-lite", "Gemini 3.1 Flash Lite", { input: 0.25, output: 1.5, cacheRead: 0.025 }),
  gemini("gemini-3.5-flash", "Gemini 3.5 Flash", { input: 1.5, output: 9, cacheRead: 0.15 }),
  gemini("gemini-3.5-flash-lite", "Gemini 3.5 Flash Lite", { input: 0.3, output: 2.5, cacheRead: 0.03 }),
  gemini("gemini-3.6-flash", "Gemini 3.6 Flash", { input: 0.75, output: 3.75, cacheRead: 0.075 }),
  gemini("gemini-3.7-flash", "Gemini 3.7 Flash", { input: 0.75, output: 3.75, cacheRead: 0.075 }),
  gemini("gemini-3.8-flash", "Gemini 3.8 Flash", { input: 0.75, output: 3.75, cacheRead: 0.075 }),
  gemini("gemini-flash-latest", "Gemini Flash Latest", { input: 1.5, output: 9, cacheRead: 0.15 }),
  gemini("gemini-flash-lite-latest", "Gemini Flash-Lite Latest", {
    input: 0.25,
    output: 1.5,
    cacheRead: 0.025,
  }),
];

/** `gemini-<major>[.<minor>]-...`, e.g. `gemini-2.5-flash-lite`, `gemini-3.1-pro-preview`. */
const GEMINI_ID = /^gemini-(\d+)(?:\.(\d+))?-/;

/** The Gemini major version of a model id (2 for `gemini-2.5-pro`), undefined for other ids. */
export function geminiMajor(id: string): number | undefined {
  const match = GEMINI_ID.exec(id.toLowerCase());
  return match ? Number(match[1]) : undefined;
}

/**
 * How a model takes its thinking setting: by its id (a model in models.json gets the setting of its family), and
 * `compat.thinking` (`"budget"` or `"level"`) overrides the kind.
 */
export function geminiThinking(
  model: Pick<ModelInfo, "id">,
  compat: Record<string, unknown> = {},
): GeminiThinking {
  const id = model.id.toLowerCase();
  let thinking: GeminiThinking;
  if (/gemma-?4/.test(id)) thinking = GEMMA_4;
  else if (id === "gemini-flash-latest" || id === "gemini-flash-lite-latest") thinking = FLASH_3;
  else {
    const major = geminiMajor(id);
    if (major !== undefined && major >= 3) thinking = /-pro/.test(id) ? PRO_3 : FLASH_3;
    else if (id.includes("flash-lite")) thinking = FLASH_LITE_25;
    else if (id.includes("flash")) thinking = FLASH_25;
    else thinking = PRO_25;
  }
  if (compat.thinking === "budget" && thinking.kind !== "budget") thinking = FLASH_25;
  if (compat.thinking === "level" && thinking.kind !== "level") thinking = FLASH_3;
  return thinking;
}
