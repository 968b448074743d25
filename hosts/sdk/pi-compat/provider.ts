/**
 * A provider an extension written for pi registers in pi's shape: pi 1.x's `streamSimple(model, context, options)`
 * (pi-ai's `Model`, a transcript context whose leading system message carries the prompt and the tools, and
 * `SimpleStreamOptions`), returning pi-ai's event stream. `adaptPiProvider` turns such a configuration into
 * KnightCode's (`streamSimple(request)`); the pi dialect (scan.ts) applies it to every `registerProvider` of an
 * extension written for pi. The events are the same on both sides (`start`, `text_delta`, ..., `done`, `error`),
 * so they pass through; the stream is closed off with an `error` event when the provider throws or stops early.
 * pi-ai's transcript helpers such a provider calls (`collapseSystemMessages`, `getCurrentSystemPrompt`,
 * `getCurrentTools`) are here too, written over that transcript shape.
 */
import type {
  AssistantMessage,
  AssistantMessageEvent,
  AssistantMessageStream,
  LlmMessage,
  ProviderConfig,
  ProviderStreamRequest,
  ToolDeclaration,
} from "../../../kernel/index.js";
import { PushStream } from "../../../plugins/kit/provider/assistant-writer.js";

/** pi-ai's system message: the prompt (`content`, named `sections`) and tool changes at that point. */
export interface PiSystemMessage {
  role: "system";
  content: string | { type: string; text?: string }[];
  sections?: Record<string, string | null>;
  toolsAdded?: ToolDeclaration[];
  toolsRemoved?: { name: string }[];
  timestamp: number;
}

type PiMessage = LlmMessage | PiSystemMessage | { role: string; [field: string]: unknown };

const isSystem = (message: PiMessage): message is PiSystemMessage => message?.role === "system";

function textOf(content: PiSystemMessage["content"] | undefined): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((block) => block?.type === "text" && typeof block.text === "string")
    .map((block) => block.text)
    .join("\n");
}

function checkedMessages(messages: unknown, name: string): PiMessage[] {
  if (!Array.isArray(messages)) {
    throw new TypeError(
      `${name}: expected an array of messages, got ${messages === null ? "null" : typeof messages}`,
    );
  }
  return messages as PiMessage[];
}

/** pi-ai's `getCurrentTools`: the tools after every system message's removals and additions, in order. */
export function getCurrentTools(messages: readonly PiMessage[]): ToolDeclaration[] {
  const tools = new Map<string, ToolDeclaration>();
  for (const message of checkedMessages(messages, "getCurrentTools")) {
    if (!isSystem(message)) continue;
    for (const removed of message.toolsRemoved ?? []) tools.delete(removed.name);
    for (const added of message.toolsAdded ?? []) tools.set(added.name, added);
  }
  return [...tools.values()];
}

/** One system message holding the prompt and tools all of `messages`' system messages add up to. */
function currentSystemMessage(messages: readonly PiMessage[]): PiSystemMessage | undefined {
  const texts: string[] = [];
  const sections = new Map<string, string>();
  let timestamp: number | undefined;
  for (const message of messages) {
    if (!isSystem(message)) continue;
    timestamp ??= message.timestamp;
    const text = textOf(message.content);
    if (text) texts.push(text);
    for (const [name, value] of Object.entries(message.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
  }
  const tools = getCurrentTools(messages);
  if (timestamp === undefined && tools.length === 0) return undefined;
  return {
    role: "system",
    content: texts.join("\n\n"),
    ...(sections.size > 0 ? { sections: Object.fromEntries(sections) } : {}),
    ...(tools.length > 0 ? { toolsAdded: tools } : {}),
    timestamp: timestamp ?? 0,
  };
}

/** pi-ai's `getCurrentSystemPrompt`: the prompt text (content, then sections) after every system message. */
export function getCurrentSystemPrompt(messages: readonly PiMessage[]): string {
  const head = currentSystemMessage(checkedMessages(messages, "getCurrentSystemPrompt"));
  if (!head) return "";
  const parts = [textOf(head.content), ...Object.values(head.sections ?? {}).filter((s) => s !== null)];
  return parts.filter((part) => part.length > 0).join("\n\n");
}

/** pi-ai's `collapseSystemMessages`: one leading system message with the current prompt and tools, the rest without. */
export function collapseSystemMessages(context: { messages: PiMessage[] }): { messages: PiMessage[] } {
  const messages = checkedMessages(context?.messages, "collapseSystemMessages");
  const head = currentSystemMessage(messages);
  const rest = messages.filter((message) => !isSystem(message));
  return { messages: head ? [head, ...rest] : rest };
}

/** pi's `streamSimple(model, context, options)`. */
type PiStreamSimple = (
  model: Record<string, unknown>,
  context: Record<string, unknown>,
  options: Record<string, unknown>,
) => unknown;

/** pi-ai's `Model` for a KnightCode request: the model with the provider's endpoint, headers and compat. */
function piModel(request: ProviderStreamRequest): Record<string, unknown> {
  const model = request.model;
  return {
    ...model,
    name: model.name ?? model.id,
    baseUrl: request.baseUrl ?? "",
    input: (model as { input?: unknown }).input ?? ["text"],
    cost: { cacheRead: 0, cacheWrite: 0, input: 0, output: 0, ...model.cost },
    ...(request.headers ? { headers: request.headers } : {}),
    ...(request.compat ? { compat: request.compat } : {}),
  };
}

/**
 * pi's context for a KnightCode request: pi 1.x's transcript (a leading system message with the prompt and the
 * tools), plus the `systemPrompt` and `tools` fields of pi's older `Context` for providers that read those.
 */
function piContext(request: ProviderStreamRequest): Record<string, unknown> {
  const messages: PiMessage[] = [...request.messages];
  if (request.systemPrompt || request.tools.length > 0) {
    messages.unshift({
      role: "system",
      content: request.systemPrompt ?? "",
      ...(request.tools.length > 0 ? { toolsAdded: request.tools } : {}),
      timestamp: 0,
    });
  }
  return { messages, systemPrompt: request.systemPrompt, tools: request.tools };
}

/** pi's `SimpleStreamOptions` for a KnightCode request; the payload and response hooks keep extensions seeing it. */
function piOptions(request: ProviderStreamRequest): Record<string, unknown> {
  const options: Record<string, unknown> = {
    signal: request.signal,
    apiKey: request.apiKey,
    maxTokens: request.maxTokens,
    temperature: request.temperature,
    headers: request.headers,
    sessionId: request.sessionId,
    onPayload: (payload: unknown) => request.hooks.payload(payload),
    onResponse: (response: { status?: number; headers?: Record<string, string> }) =>
      request.hooks.response(response?.status ?? 0, response?.headers ?? {}),
    onProviderStreamEvent: (data: unknown) => request.hooks.streamEvent(data),
  };
  if (request.thinkingLevel && request.thinkingLevel !== "off") options.reasoning = request.thinkingLevel;
  for (const key of Object.keys(options)) if (options[key] === undefined) delete options[key];
  return options;
}

function failed(request: ProviderStreamRequest, provider: string, message: string): AssistantMessage {
  const aborted = request.signal?.aborted === true;
  return {
    role: "assistant",
    content: [],
    api: request.model.api,
    provider: request.model.provider,
    model: request.model.id,
    usage: {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 0,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: aborted ? "aborted" : "error",
    errorMessage: aborted ? "aborted" : `provider ${provider} (pi's streamSimple): ${message}`,
    errorKind: aborted ? "aborted" : "unknown",
    timestamp: Date.now(),
  };
}

function isIterable(value: unknown): value is AsyncIterable<unknown> {
  return typeof (value as AsyncIterable<unknown>)?.[Symbol.asyncIterator] === "function";
}

/** KnightCode's stream over what pi's `streamSimple` returned: its events, closed off with `done` or `error`. */
function fromPiStream(
  request: ProviderStreamRequest,
  provider: string,
  call: () => unknown,
): AssistantMessageStream {
  const out = new PushStream<AssistantMessageEvent, AssistantMessage>();
  const fail = (message: string, partial?: AssistantMessage) => {
    const error = {
      ...failed(request, provider, message),
      ...(partial ? { content: partial.content, usage: partial.usage } : {}),
    };
    out.push({ type: "error", reason: error.stopReason as "error" | "aborted", error });
    out.end(error);
  };
  void (async () => {
    let last: AssistantMessage | undefined;
    try {
      const source = await call();
      if (!isIterable(source)) {
        fail("it returned no event stream (expected pi-ai's AssistantMessageEventStream)");
        return;
      }
      for await (const item of source) {
        const event = item as AssistantMessageEvent & { reason?: string };
        if (!event || typeof event.type !== "string") continue;
        if (event.type === "done") {
          if ((event.reason as string) === "deferred") {
            fail("it answered with a deferred handle, which KnightCode does not fetch", event.message);
            return;
          }
          out.push(event);
          out.end(event.message);
          return;
        }
        if (event.type === "error") {
          const error: AssistantMessage = {
            ...event.error,
            stopReason: event.error?.stopReason === "aborted" ? "aborted" : "error",
            errorKind:
              event.error?.errorKind ?? (event.error?.stopReason === "aborted" ? "aborted" : "unknown"),
            errorMessage: event.error?.errorMessage ?? "the provider reported an error",
          };
          out.push({ type: "error", reason: error.stopReason as "error" | "aborted", error });
          out.end(error);
          return;
        }
        if ("partial" in event && event.partial) last = event.partial;
        out.push(event);
      }
      fail("its stream ended without a done or error event", last);
    } catch (error) {
      fail(error instanceof Error ? error.message : String(error), last);
    }
  })();
  return out;
}

/**
 * A provider configuration from an extension written for pi, as KnightCode takes it: pi's three-argument
 * `streamSimple` is called with pi's model, transcript and options, and an `apiKey` of `$NAME` or `${NAME}` names
 * the environment variable NAME. pi's `oauth` block becomes a login method and `refreshCredential`
 * (`adaptPiOAuth`).
 */
export function adaptPiProvider(given: ProviderConfig): ProviderConfig {
  if (typeof given !== "object" || given === null) return given;
  // pi writes an environment variable as `$NAME` or `${NAME}`; KnightCode's configuration names it bare.
  const variable =
    typeof given.apiKey === "string"
      ? /^\$(?:\{([A-Z_][A-Z0-9_]*)\}|([A-Z_][A-Z0-9_]*))$/.exec(given.apiKey)
      : null;
  const named = variable ? { ...given, apiKey: (variable[1] ?? variable[2])! } : given;
  const { oauth, ...withoutOAuth } = named as ProviderConfig & { oauth?: PiOAuth };
  const config: ProviderConfig = oauth ? { ...withoutOAuth, ...adaptPiOAuth(oauth) } : named;
  const piStream = (config as { streamSimple?: unknown }).streamSimple;
  if (typeof piStream !== "function") return config;
  const rest = config;
  return {
    ...rest,
    streamSimple(request: ProviderStreamRequest): AssistantMessageStream {
      const provider = request.model.provider;
      return fromPiStream(request, provider, () =>
        (piStream as PiStreamSimple)(piModel(request), piContext(request), piOptions(request)),
      );
    },
  };
}

/** pi's OAuth credentials: what its `login` and `refreshToken` return, and `getApiKey` reads. */
interface PiOAuthCredentials {
  refresh: string;
  access: string;
  expires: number;
  [field: string]: unknown;
}

/** pi's `ProviderConfig.oauth`. */
interface PiOAuth {
  name?: string;
  login(callbacks: Record<string, unknown>): Promise<PiOAuthCredentials>;
  refreshToken(credentials: PiOAuthCredentials): Promise<PiOAuthCredentials>;
  getApiKey(credentials: PiOAuthCredentials): string;
  modifyModels?: unknown;
}

type StoredCredential = { type: string; key: string; [field: string]: unknown };

/**
 * pi's `oauth` block as KnightCode's `login` and `refreshCredential`. `auth.json` keeps pi's credentials as they are
 * (`access`, `refresh`, `expires` and the rest) with `type: "oauth"` and `key`, what `getApiKey` makes of them and
 * what requests send. pi's login callbacks ask and tell through the login's `io`: `onAuth` and `onDeviceCode` show
 * the URL or the code, `onPrompt` and `onManualCodeInput` ask for a line, `onSelect` asks for an option's id
 * (typed; the options are listed). `modifyModels` has no counterpart: the models stay those registered.
 */
export function adaptPiOAuth(oauth: PiOAuth): Pick<ProviderConfig, "login" | "refreshCredential"> {
  const stored = (credentials: PiOAuthCredentials): StoredCredential => {
    const key = oauth.getApiKey(credentials);
    if (typeof key !== "string" || !key)
      throw new Error("the provider's getApiKey() gave no key for the sign-in");
    return { ...credentials, type: "oauth", key };
  };
  return {
    login: [
      {
        label: typeof oauth.name === "string" && oauth.name ? oauth.name : "Sign in",
        async login(io) {
          const ask = async (title: string, placeholder?: string) => {
            const answer = await io.input(title, {
              ...(placeholder ? { placeholder } : {}),
              ...(io.signal ? { signal: io.signal } : {}),
            });
            if (answer === undefined) throw new Error("Sign-in was cancelled");
            return answer;
          };
          const callbacks = {
            onAuth: (info: { url: string; instructions?: string }) =>
              io.notify(info.instructions ? `${info.instructions}\n${info.url}` : `Open ${info.url}`),
            onDeviceCode: (info: { userCode: string; verificationUri: string }) =>
              io.notify(`Enter the code ${info.userCode} at ${info.verificationUri}`),
            onPrompt: (prompt: { message: string; placeholder?: string }) =>
              ask(prompt.message, prompt.placeholder),
            onProgress: (message: string) => io.notify(message),
            onManualCodeInput: () => ask("Paste the code or the redirect URL"),
            onSelect: async (prompt: { message: string; options: { id: string; label: string }[] }) => {
              const list = prompt.options.map((o) => `${o.id}: ${o.label}`).join("\n");
              const answer = (await ask(`${prompt.message}\n${list}`)).trim();
              return prompt.options.find((o) => o.id === answer || o.label === answer)?.id;
            },
            ...(io.signal ? { signal: io.signal } : {}),
          };
          return stored(await oauth.login(callbacks));
        },
      },
    ],
    async refreshCredential(credential) {
      const { type: _type, key, ...fields } = credential;
      const current = { ...fields, access: typeof fields.access === "string" ? fields.access : key };
      return stored(await oauth.refreshToken(current as PiOAuthCredentials));
    },
  };
}

/** Incomplete JSON closed off: an open string ended, a dangling key dropped, open arrays and objects closed. */
function closedOff(text: string): string {
  const stack: string[] = [];
  let inString = false;
  let escaped = false;
  for (const char of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (char === "\\") escaped = true;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === "{") stack.push("}");
    else if (char === "[") stack.push("]");
    else if (char === "}" || char === "]") stack.pop();
  }
  let closed = text;
  if (inString) closed += escaped ? '\\"' : '"';
  // A dangling comma, colon or key without a value cannot be closed: drop it.
  closed = closed.replace(/,\s*$/, "");
  if (stack.at(-1) === "}") {
    // A string right after `{` or `,` of an object is a key, whose value has not come yet.
    closed = closed.replace(/([{,])\s*"(?:[^"\\]|\\.)*"\s*:?\s*$/, (_match, before: string) =>
      before === "{" ? "{" : "",
    );
  }
  return closed + stack.reverse().join("");
}

/**
 * pi-ai's `ToolCallArgumentsStream`: a tool call's argument text arriving in pieces, with the arguments parsed so far
 * after each (`append`, `replace`) and the final ones, or why they do not parse, at the end (`finish`).
 */
export class ToolCallArgumentsStream {
  #text = "";
  #arguments: Record<string, unknown> = {};

  get text(): string {
    return this.#text;
  }

  append(delta: string): Record<string, unknown> {
    this.#text += String(delta ?? "");
    const closed = closedOff(this.#text);
    try {
      const parsed: unknown = JSON.parse(closed);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) {
        if (JSON.stringify(parsed) !== JSON.stringify(this.#arguments))
          this.#arguments = parsed as Record<string, unknown>;
      }
    } catch {
      // Not parseable yet: the arguments so far stay as they were.
    }
    return this.#arguments;
  }

  replace(text: string): { delta: string | undefined; arguments: Record<string, unknown> } {
    if (text.startsWith(this.#text)) {
      const delta = text.slice(this.#text.length);
      return { delta, arguments: delta === "" ? this.#arguments : this.append(delta) };
    }
    this.#text = "";
    this.#arguments = {};
    return { delta: undefined, arguments: this.append(text) };
  }

  finish(): { arguments: Record<string, unknown>; argumentsError?: string } {
    if (!this.#text.trim()) return { arguments: {} };
    try {
      const parsed: unknown = JSON.parse(this.#text);
      if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) {
        throw new Error("Tool arguments must be a JSON object");
      }
      return { arguments: parsed as Record<string, unknown> };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { arguments: {}, argumentsError: `${message}\n\nReceived arguments:\n${this.#text}` };
    }
  }
}
