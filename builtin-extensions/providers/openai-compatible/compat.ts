/**
 * The `compat` options of an `openai-completions` provider in `<agentDir>/models.json`. The key names are the
 * closest peer's (pi-ai's `OpenAICompletionsCompat`), so a models.json written for it works here unchanged.
 *
 * Unknown keys and invalid values never fail a request: they are reported once per provider per process, through
 * the provider extension's `knightcode.log.warn` (an error would turn a harmless typo into a failed turn).
 */

export type MaxTokensField = "max_completion_tokens" | "max_tokens";

export interface ResolvedCompat {
  /** Send the system prompt of a reasoning model as a `developer` message (else `system`). Default true. */
  supportsDeveloperRole: boolean;
  /** Send `reasoning_effort` when a thinking level is set and the model reasons. Default true. */
  supportsReasoningEffort: boolean;
  /** Send `stream_options: {include_usage: true}`. Default true. */
  supportsUsageInStreaming: boolean;
  /** Send `store: false` (keeps OpenAI from storing the completion). Default true. */
  supportsStore: boolean;
  /** The field that carries the token limit; older servers know only `max_tokens`. */
  maxTokensField: MaxTokensField;
  /** Add the tool's `name` to each tool result message (Mistral). Default false. */
  requiresToolResultName: boolean;
  /** Put a short assistant message between a tool result and a following user message. Default false. */
  requiresAssistantAfterToolResult: boolean;
  /** The longest wait for the response headers, and then between two pieces of the stream. Default 10 minutes. */
  timeoutMs: number;
}

export const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000;

export const DEFAULT_COMPAT: Readonly<ResolvedCompat> = Object.freeze({
  supportsDeveloperRole: true,
  supportsReasoningEffort: true,
  supportsUsageInStreaming: true,
  supportsStore: true,
  maxTokensField: "max_completion_tokens",
  requiresToolResultName: false,
  requiresAssistantAfterToolResult: false,
  timeoutMs: DEFAULT_TIMEOUT_MS,
});

const BOOLEAN_KEYS = [
  "supportsDeveloperRole",
  "supportsReasoningEffort",
  "supportsUsageInStreaming",
  "supportsStore",
  "requiresToolResultName",
  "requiresAssistantAfterToolResult",
] as const;

/**
 * Keys accepted without effect: this provider never sends `strict` in tool definitions, which is what
 * `supportsStrictMode: false` asks for, so either value is already honoured.
 */
const ACCEPTED_KEYS = new Set(["supportsStrictMode"]);

const KNOWN_KEYS = new Set<string>([...BOOLEAN_KEYS, "maxTokensField", "timeoutMs", ...ACCEPTED_KEYS]);

/** Providers already warned about in this process. */
const warned = new Set<string>();

export interface CompatCheck {
  compat: ResolvedCompat;
  /** What is wrong with the configured object (empty when nothing is). */
  problems: string[];
}

/** Resolves the configured compat object over the defaults and lists unknown keys and invalid values. */
export function checkCompat(configured: Record<string, unknown> | undefined): CompatCheck {
  const compat: ResolvedCompat = { ...DEFAULT_COMPAT };
  const problems: string[] = [];
  if (configured === undefined || configured === null) return { compat, problems };
  if (typeof configured !== "object" || Array.isArray(configured)) {
    return { compat, problems: ["compat must be an object; it was ignored"] };
  }
  const unknown = Object.keys(configured).filter((key) => !KNOWN_KEYS.has(key));
  if (unknown.length > 0) {
    problems.push(
      `unknown compat key${unknown.length === 1 ? "" : "s"} ignored: ${unknown.join(", ")} ` +
        `(supported: ${[...KNOWN_KEYS].join(", ")})`,
    );
  }
  for (const key of BOOLEAN_KEYS) {
    const value = configured[key];
    if (value === undefined) continue;
    if (typeof value === "boolean") compat[key] = value;
    else
      problems.push(`compat.${key} must be true or false (got ${JSON.stringify(value)}); using the default`);
  }
  const field = configured.maxTokensField;
  if (field !== undefined) {
    if (field === "max_completion_tokens" || field === "max_tokens") compat.maxTokensField = field;
    else {
      problems.push(
        `compat.maxTokensField must be "max_completion_tokens" or "max_tokens" (got ${JSON.stringify(field)}); ` +
          "using max_completion_tokens",
      );
    }
  }
  const timeout = configured.timeoutMs;
  if (timeout !== undefined) {
    if (typeof timeout === "number" && Number.isFinite(timeout) && timeout > 0) compat.timeoutMs = timeout;
    else {
      problems.push(
        `compat.timeoutMs must be a positive number of milliseconds (got ${JSON.stringify(timeout)}); using 10 minutes`,
      );
    }
  }
  return { compat, problems };
}

/** `checkCompat`, reporting its problems through `warn` once per provider per process. */
export function resolveCompat(
  provider: string,
  configured: Record<string, unknown> | undefined,
  warn: (message: string) => void,
): ResolvedCompat {
  const { compat, problems } = checkCompat(configured);
  if (problems.length > 0 && !warned.has(provider)) {
    warned.add(provider);
    warn(`models.json provider "${provider}" (openai-completions): ${problems.join("; ")}`);
  }
  return compat;
}
