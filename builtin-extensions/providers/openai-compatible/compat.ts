/**
 * The `compat` options of an `openai-completions` provider in `<agentDir>/models.json`. The key names are the
 * closest peer's (pi-ai's `OpenAICompletionsCompat`), so a models.json written for it works here unchanged.
 *
 * Unknown keys and invalid values never fail a request: they are reported once per provider per process, through
 * the provider extension's `knightcode.log.warn` (an error would turn a harmless typo into a failed turn).
 */

export type MaxTokensField = "max_completion_tokens" | "max_tokens";

/**
 * How a reasoning model is asked to think (or not), besides OpenAI's `reasoning_effort`:
 * - `openai`: `reasoning_effort` (the default);
 * - `openrouter`: `reasoning: {effort}` (OpenRouter's normalised field; `effort: "none"` turns thinking off);
 * - `deepseek`: `thinking: {type: "enabled" | "disabled"}`, and `reasoning_effort` when supportsReasoningEffort;
 * - `zai`: `thinking: {type: "enabled", clear_thinking: false}` or `{type: "disabled"}` (Z.ai's GLM; `false` keeps
 *   earlier turns' reasoning on the server), and `reasoning_effort` when supportsReasoningEffort;
 * - `together`: `reasoning: {enabled}`, and `reasoning_effort` when supportsReasoningEffort;
 * - `baseten`: `chat_template_args` from `chatTemplateArgs`, and `reasoning_effort` when supportsReasoningEffort;
 * - `qwen`: `enable_thinking: true | false` (Alibaba's DashScope), and `reasoning_effort` when supportsReasoningEffort;
 * - `ant-ling`: `reasoning: {effort}` while thinking, nothing when off (Ant Group's Ling and Ring models).
 */
export type ThinkingFormat =
  | "openai"
  | "openrouter"
  | "deepseek"
  | "zai"
  | "together"
  | "baseten"
  | "qwen"
  | "ant-ling";
const THINKING_FORMATS: readonly ThinkingFormat[] = [
  "openai",
  "openrouter",
  "deepseek",
  "zai",
  "together",
  "baseten",
  "qwen",
  "ant-ling",
];

/** pi's thinking levels, `max` above `xhigh`. */
export const MAP_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"] as const;
export type MapLevel = (typeof MAP_LEVELS)[number];
/**
 * What each thinking level sends: a string is the value sent (as the effort, or as `reasoning_effort` for `off`);
 * `null` means the model does not offer the level (a request for it gets the nearest offered level, higher first;
 * `off: null`, a model that always thinks, sends nothing to turn thinking off). `xhigh` and `max` are offered only
 * when mapped to a string.
 */
export type ThinkingLevelMap = Partial<Record<MapLevel, string | null>>;

/** A `chatTemplateArgs` value: a literal, or `{"$var": "thinking.enabled"}` (whether thinking is on). */
export type TemplateArg = string | number | boolean | null | { $var: "thinking.enabled" };

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
  /** How thinking is asked for (see ThinkingFormat). Default `openai`. */
  thinkingFormat: ThinkingFormat;
  /** Per-level values (see ThinkingLevelMap); unset: each level sends its own name, `xhigh` sends `high`. */
  thinkingLevelMap?: ThinkingLevelMap;
  /**
   * Send the thinking of earlier assistant messages back as `reasoning_content` (an empty string when a reasoning
   * model's message had none): DeepSeek and Kimi refuse a tool-call turn of thinking mode without it. Default false.
   */
  requiresReasoningContentOnAssistantMessages: boolean;
  /** Send `tool_stream: true` with tools (Z.ai streams tool arguments in pieces only then). Default false. */
  zaiToolStream: boolean;
  /** Send an `x-session-affinity` header with the session id (Fireworks routes a session to one replica). */
  sendSessionAffinityHeaders: boolean;
  /** `chat_template_args` of the `baseten` format. */
  chatTemplateArgs?: Record<string, TemplateArg>;
  /**
   * The header that carries the key, as `Bearer <key>`, instead of `Authorization` (which is then not sent): a
   * gateway's own key (Cloudflare AI Gateway's `cf-aig-authorization`), the upstream keys being the gateway's.
   */
  keyHeader?: string;
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
  thinkingFormat: "openai",
  requiresReasoningContentOnAssistantMessages: false,
  zaiToolStream: false,
  sendSessionAffinityHeaders: false,
});

const BOOLEAN_KEYS = [
  "supportsDeveloperRole",
  "supportsReasoningEffort",
  "supportsUsageInStreaming",
  "supportsStore",
  "requiresToolResultName",
  "requiresAssistantAfterToolResult",
  "requiresReasoningContentOnAssistantMessages",
  "zaiToolStream",
  "sendSessionAffinityHeaders",
] as const;

/**
 * Keys accepted without effect (pi's catalogue sets them):
 * - `supportsStrictMode`: this provider never sends `strict` in tool definitions, which is what `false` asks for;
 * - `supportsLongCacheRetention`: KnightCode asks no server for long prompt-cache retention here;
 * - `cacheControlFormat`: Anthropic-style `cache_control` markers (OpenRouter's Claude models) are not added;
 * - `deferredToolsMode`: every tool is sent with every request.
 */
const ACCEPTED_KEYS = new Set([
  "supportsStrictMode",
  "supportsLongCacheRetention",
  "cacheControlFormat",
  "deferredToolsMode",
]);

const KNOWN_KEYS = new Set<string>([
  ...BOOLEAN_KEYS,
  "maxTokensField",
  "timeoutMs",
  "thinkingFormat",
  "thinkingLevelMap",
  "chatTemplateArgs",
  "keyHeader",
  ...ACCEPTED_KEYS,
]);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkLevelMap(value: unknown, problems: string[]): ThinkingLevelMap | undefined {
  if (!isPlainObject(value)) {
    problems.push(
      `compat.thinkingLevelMap must be an object of levels (got ${JSON.stringify(value)}); ignored`,
    );
    return undefined;
  }
  const map: ThinkingLevelMap = {};
  for (const [level, mapped] of Object.entries(value)) {
    if (!(MAP_LEVELS as readonly string[]).includes(level)) {
      problems.push(
        `compat.thinkingLevelMap has an unknown level "${level}" (levels: ${MAP_LEVELS.join(", ")}); ignored`,
      );
    } else if (mapped === null || typeof mapped === "string") map[level as MapLevel] = mapped;
    else {
      problems.push(
        `compat.thinkingLevelMap.${level} must be a string or null (got ${JSON.stringify(mapped)}); ignored`,
      );
    }
  }
  return map;
}

function checkTemplateArgs(value: unknown, problems: string[]): Record<string, TemplateArg> | undefined {
  if (!isPlainObject(value)) {
    problems.push(`compat.chatTemplateArgs must be an object (got ${JSON.stringify(value)}); ignored`);
    return undefined;
  }
  const args: Record<string, TemplateArg> = {};
  for (const [name, arg] of Object.entries(value)) {
    if (arg === null || ["string", "number", "boolean"].includes(typeof arg)) args[name] = arg as TemplateArg;
    else if (isPlainObject(arg) && arg.$var === "thinking.enabled" && Object.keys(arg).length === 1) {
      args[name] = { $var: "thinking.enabled" };
    } else {
      problems.push(
        `compat.chatTemplateArgs.${name} must be a literal or {"$var": "thinking.enabled"} ` +
          `(got ${JSON.stringify(arg)}); ignored`,
      );
    }
  }
  return args;
}

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
  const format = configured.thinkingFormat;
  if (format !== undefined) {
    if (THINKING_FORMATS.includes(format as ThinkingFormat)) compat.thinkingFormat = format as ThinkingFormat;
    else {
      problems.push(
        `compat.thinkingFormat must be one of ${THINKING_FORMATS.map((f) => `"${f}"`).join(", ")} ` +
          `(got ${JSON.stringify(format)}); using "openai"`,
      );
    }
  }
  if (configured.thinkingLevelMap !== undefined) {
    const map = checkLevelMap(configured.thinkingLevelMap, problems);
    if (map) compat.thinkingLevelMap = map;
  }
  if (configured.chatTemplateArgs !== undefined) {
    const args = checkTemplateArgs(configured.chatTemplateArgs, problems);
    if (args) compat.chatTemplateArgs = args;
  }
  const keyHeader = configured.keyHeader;
  if (keyHeader !== undefined) {
    if (typeof keyHeader === "string" && /^[A-Za-z0-9-]+$/.test(keyHeader)) compat.keyHeader = keyHeader;
    else
      problems.push(
        `compat.keyHeader must be a header name (got ${JSON.stringify(keyHeader)}); the key goes as Authorization`,
      );
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
