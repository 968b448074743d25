/**
 * The Claude models this provider offers, and what each accepts on the wire.
 *
 * Prices are Anthropic's LIST prices in USD per million tokens at the time of writing (October 2026), taken from
 * https://platform.claude.com/docs/en/about-claude/pricing and the model pages under
 * https://platform.claude.com/docs/en/models/ (context window, max output, thinking). `cacheWrite` is the price of
 * a 5-minute cache write (the `ephemeral` default this provider uses), `cacheRead` the price of a cache hit.
 * Claude Haiku 5.5 is priced by prompt length; the figures below are those of prompts up to 100,000 tokens.
 * Prices change: check the pricing page, and override them in `<agentDir>/models.json` when they do.
 */
import type { ModelInfo, ProviderModelConfig } from "@knightcodeai/cli/kit";

export const ANTHROPIC_PROVIDER = "anthropic";
export const ANTHROPIC_API = "anthropic-messages";
export const ANTHROPIC_BASE_URL = "https://api.anthropic.com";
export const ANTHROPIC_KEY_ENV = "ANTHROPIC_API_KEY";

/**
 * What a model accepts, which differs between Claude generations (see the "Troubleshooting thinking" page and the
 * migration guides on platform.claude.com):
 * - `thinking`: `"budget"` models take `thinking: {type: "enabled", budget_tokens}` (Claude 4.5 and earlier);
 *   `"adaptive"` models reject budgets with a 400 and take `thinking: {type: "adaptive"}` plus
 *   `output_config.effort` (Claude 4.6 and later).
 * - `thinkingOff`: what turns thinking off on an adaptive model that thinks by default (`"disabled"`, or
 *   `"between_tools"` on Sonnet 5.5); absent when thinking cannot be turned off (Opus 5.5, Fable 5.1).
 * - `sampling`: whether `temperature` is accepted (Claude 5 models answer a non-default one with a 400).
 * - `forcedToolChoice`: whether `tool_choice: {type: "tool"}` is accepted (Opus 5.5, Sonnet 5.5 and Fable 5.1
 *   answer it with a 400; this provider then sends `{type: "auto"}`).
 */
export interface ClaudeTraits {
  thinking: "budget" | "adaptive";
  thinkingOff?: "disabled" | "between_tools";
  sampling: boolean;
  forcedToolChoice: boolean;
}

interface CatalogueEntry extends ProviderModelConfig {
  traits: ClaudeTraits;
}

const ADAPTIVE_ALWAYS_ON: ClaudeTraits = { thinking: "adaptive", sampling: false, forcedToolChoice: false };

const CATALOGUE: readonly CatalogueEntry[] = [
  {
    id: "claude-opus-5-5",
    name: "Claude Opus 5.5",
    contextWindow: 1_000_000,
    maxTokens: 128_000,
    reasoning: true,
    input: ["text", "image"],
    cost: { input: 4, output: 20, cacheRead: 0.2, cacheWrite: 5 },
    traits: ADAPTIVE_ALWAYS_ON,
  },
  {
    id: "claude-sonnet-5-5",
    name: "Claude Sonnet 5.5",
    contextWindow: 1_000_000,
    maxTokens: 128_000,
    reasoning: true,
    input: ["text", "image"],
    cost: { input: 2, output: 10, cacheRead: 0.1, cacheWrite: 2.5 },
    traits: { ...ADAPTIVE_ALWAYS_ON, thinkingOff: "between_tools" },
  },
  {
    id: "claude-haiku-5-5",
    name: "Claude Haiku 5.5",
    contextWindow: 1_000_000,
    maxTokens: 128_000,
    reasoning: true,
    input: ["text", "image"],
    cost: { input: 0.1, output: 0.5, cacheRead: 0.01, cacheWrite: 0.125 },
    traits: { ...ADAPTIVE_ALWAYS_ON, thinkingOff: "disabled" },
  },
  {
    id: "claude-fable-5-1",
    name: "Claude Fable 5.1",
    contextWindow: 1_000_000,
    maxTokens: 128_000,
    reasoning: true,
    input: ["text", "image"],
    cost: { input: 10, output: 50, cacheRead: 0.25, cacheWrite: 12.5 },
    traits: ADAPTIVE_ALWAYS_ON,
  },
  {
    id: "claude-opus-5",
    name: "Claude Opus 5",
    contextWindow: 1_000_000,
    maxTokens: 128_000,
    reasoning: true,
    input: ["text", "image"],
    cost: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
    traits: { thinking: "adaptive", thinkingOff: "disabled", sampling: false, forcedToolChoice: true },
  },
  {
    id: "claude-sonnet-5",
    name: "Claude Sonnet 5",
    contextWindow: 1_000_000,
    maxTokens: 128_000,
    reasoning: true,
    input: ["text", "image"],
    cost: { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 },
    traits: { thinking: "adaptive", thinkingOff: "disabled", sampling: false, forcedToolChoice: true },
  },
  {
    id: "claude-haiku-4-5",
    name: "Claude Haiku 4.5",
    contextWindow: 200_000,
    maxTokens: 64_000,
    reasoning: true,
    input: ["text", "image"],
    cost: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
    traits: { thinking: "budget", sampling: true, forcedToolChoice: true },
  },
];

/**
 * The `compat` keys this provider reads. Its own: `cacheControl`, `timeoutMs`, `thinking`, `sampling`,
 * `forcedToolChoice`. pi's (its catalogue sets them for other services' Messages endpoints):
 * - `forceAdaptiveThinking: true`: `thinking: {type: "adaptive"}` with `output_config.effort`, `{type: "disabled"}`
 *   for off, whatever the model id says;
 * - `supportsTemperature: false`: no `temperature`;
 * - `allowEmptySignature: true`: thinking the service streamed without a signature goes back to it as a `thinking`
 *   block with an empty signature (otherwise unsigned thinking is not sent back);
 * - `sendSessionAffinityHeaders: true`: an `x-session-affinity` header with the session id.
 * And `xApiKeyHeader: true` (the named providers get it): the API key as `x-api-key` too; `keyHeader` (Cloudflare
 * AI Gateway's `cf-aig-authorization`): the key as `Bearer <key>` in that header, without `x-api-key` or
 * `Authorization`.
 */
export const ANTHROPIC_COMPAT_KEYS: readonly string[] = [
  "cacheControl",
  "timeoutMs",
  "thinking",
  "sampling",
  "forcedToolChoice",
  "forceAdaptiveThinking",
  "supportsTemperature",
  "allowEmptySignature",
  "sendSessionAffinityHeaders",
  "xApiKeyHeader",
  "keyHeader",
];

/** The catalogue as registered (without the traits). */
export const ANTHROPIC_MODELS: readonly ProviderModelConfig[] = CATALOGUE.map(
  ({ traits: _, ...model }) => model,
);

/**
 * `claude-<family>-<major>[-<minor>][-<date>]`, e.g. `claude-sonnet-4-5-20250929` (after `canonicalId`, so gateways'
 * dotted spelling such as GitHub Copilot's `claude-opus-4.7` reads the same).
 */
const CLAUDE_ID = /^claude-[a-z]+-(\d+)(?:-(\d{1,2}))?(?:-\d{8})?$/;

/**
 * The traits of a model: the catalogue's for a known id (or a dated snapshot of one), else guessed from the
 * version in the id (4.6 and later think adaptively, 4.7 and later take no temperature, 5.5 and later refuse a
 * forced tool), else the classic Messages API; a dotted version (`claude-opus-4.7`) counts as Anthropic's spelling.
 * `compat` (`thinking`, `sampling`, `forcedToolChoice`) overrides.
 */
export function claudeTraits(
  model: Pick<ModelInfo, "id">,
  compat: Record<string, unknown> = {},
): ClaudeTraits {
  const id = canonicalId(model.id);
  const base = id.replace(/-\d{8}$/, ""); // a dated snapshot has its model's traits
  const known = CATALOGUE.find((m) => m.id === base)?.traits;
  const traits: ClaudeTraits = known ? { ...known } : guessTraits(id);
  // pi's keys, as its catalogue sets them for other services' models (Kimi, Vercel's gateway): adaptive thinking,
  // turned off with `disabled`; no temperature.
  if (compat.forceAdaptiveThinking === true) {
    traits.thinking = "adaptive";
    traits.thinkingOff ??= "disabled";
  }
  if (compat.supportsTemperature === false) traits.sampling = false;
  if (compat.thinking === "budget" || compat.thinking === "adaptive") traits.thinking = compat.thinking;
  if (typeof compat.sampling === "boolean") traits.sampling = compat.sampling;
  if (typeof compat.forcedToolChoice === "boolean") traits.forcedToolChoice = compat.forcedToolChoice;
  return traits;
}

/** A version written with a dot (`claude-opus-4.7`, as GitHub Copilot names Claude) in Anthropic's spelling. */
function canonicalId(id: string): string {
  return id.replace(/^(claude-[a-z]+-\d+)\.(\d{1,2})(?=$|-)/, "$1-$2");
}

function guessTraits(id: string): ClaudeTraits {
  const match = CLAUDE_ID.exec(id);
  if (!match) return { thinking: "budget", sampling: true, forcedToolChoice: true };
  const version = Number(match[1]) + Number(match[2] ?? 0) / 10;
  return {
    thinking: version >= 4.6 ? "adaptive" : "budget",
    ...(version >= 4.6 && version < 5.5 ? { thinkingOff: "disabled" as const } : {}),
    sampling: version < 4.7,
    forcedToolChoice: version < 5.5,
  };
}
