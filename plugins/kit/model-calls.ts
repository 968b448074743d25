/**
 * Model calls from module scope: `complete(model, context, options)` and `getModel(provider, id)`, the shape
 * extensions written for pi use (`@mariozechner/pi-ai`). KnightCode has no process-wide provider table: providers,
 * models.json and keys belong to a session. Each open session's model service publishes its `ctx.modelRegistry`
 * here while it lives, and a call goes through the session whose extension code made it: the session runtime binds
 * factories, handlers, tools and commands to their session (kernel/lifecycle/session-binding.ts), and everything
 * they start inherits it. A call made outside any session's code goes through the only open session; with more
 * than one open it is refused, since picking one would send one project's request through another's providers and
 * hooks. Inside a session, `ctx.modelRegistry.streamSimple()` is always that session's own.
 */
import type {
  AssistantMessage,
  AssistantMessageEvent,
  LlmMessage,
  ModelInfo,
  ModelRuntime,
  StreamSimpleOptions,
  ThinkingLevel,
  ToolDeclaration,
} from "../../kernel/index.js";
import { boundSession, KernelError } from "../../kernel/index.js";

/** The open sessions' model runtimes, by the session they belong to (what `boundSession()` returns). */
const live = new Map<object, ModelRuntime>();

/**
 * Called by the model service when a session opens, with the session it belongs to; the returned function
 * withdraws it when the session ends.
 */
export function publishModelRuntime(session: object, runtime: ModelRuntime): () => void {
  live.set(session, runtime);
  return () => {
    if (live.get(session) === runtime) live.delete(session);
  };
}

let modelsOf: ((session: object) => ModelRuntime | undefined) | undefined;

/**
 * How to reach a session's models before its model service has published them (an extension factory that calls
 * `getModel()` while the session loads): the composition root installs it.
 */
export function setSessionModelsResolver(resolve: (session: object) => ModelRuntime | undefined): void {
  modelsOf = resolve;
}

/** The calling session's models; undefined when no session is open. Throws when the caller's session is ambiguous. */
function find(): ModelRuntime | undefined {
  const bound = boundSession();
  if (bound) {
    const own = live.get(bound) ?? modelsOf?.(bound);
    if (own) return own;
    throw new KernelError(
      "KC_ERR_NOT_AVAILABLE",
      "The session this model call was made for has ended (or has no model service); make calls while it is open",
    );
  }
  if (live.size <= 1) return live.values().next().value;
  throw new KernelError(
    "KC_ERR_NO_SESSION",
    `${live.size} KnightCode sessions are open in this process and this model call was made outside all of them, ` +
      "so it is not clear whose providers, keys and hooks it should use: make it from an extension's handler, " +
      "tool or command (or anything they start), or use ctx.modelRegistry",
  );
}

function current(): ModelRuntime {
  const runtime = find();
  if (!runtime) {
    throw new Error(
      "No KnightCode session is open in this process, so there are no providers to call: call models from a session (an extension handler, command or tool)",
    );
  }
  return runtime;
}

/** What a model call sends: the system prompt, the conversation and the tools the model may call. */
export interface ModelCallContext {
  systemPrompt?: string;
  messages: LlmMessage[];
  tools?: ToolDeclaration[];
}

/** Options of a model call (pi's `reasoning` is KnightCode's `thinkingLevel`). */
export interface ModelCallOptions extends Omit<StreamSimpleOptions, "systemPrompt" | "tools"> {
  reasoning?: ThinkingLevel;
}

/** A model as a call needs it: the object `getModel()` or `ctx.model` gives. */
export type ModelRef = Pick<ModelInfo, "provider" | "id"> & Partial<ModelInfo>;

function resolve(model: ModelRef): ModelInfo {
  if (!model || typeof model.provider !== "string" || typeof model.id !== "string") {
    throw new TypeError(
      "A model call needs a model object with `provider` and `id` (from getModel() or ctx.model)",
    );
  }
  const known = current().find(model.provider, model.id);
  if (known) return known;
  if (typeof model.api === "string") return model as ModelInfo;
  throw new Error(`Unknown model ${model.provider}/${model.id}: it is not in this session's model list`);
}

/** Streams one response. Failures end the stream with an error message; they are not thrown. */
export function streamSimple(
  model: ModelRef,
  context: ModelCallContext,
  options: ModelCallOptions = {},
): AsyncIterable<AssistantMessageEvent> & { result(): Promise<AssistantMessage> } {
  const { reasoning, ...rest } = options;
  const thinkingLevel = rest.thinkingLevel ?? reasoning;
  return current().streamSimple(resolve(model), context.messages, {
    ...rest,
    ...(thinkingLevel ? { thinkingLevel } : {}),
    ...(context.systemPrompt !== undefined ? { systemPrompt: context.systemPrompt } : {}),
    ...(context.tools ? { tools: context.tools } : {}),
  });
}

/** The final assistant message of one call; `stopReason` `"error"`/`"aborted"` says it failed, with `errorMessage`. */
export function complete(
  model: ModelRef,
  context: ModelCallContext,
  options?: ModelCallOptions,
): Promise<AssistantMessage> {
  return streamSimple(model, context, options).result();
}

/** A model of the calling session's list, or `undefined`. */
export function getModel(provider: string, modelId: string): ModelInfo | undefined {
  return find()?.find(provider, modelId);
}

/** The models of the calling session's list, optionally of one provider. */
export function getModels(provider?: string): ModelInfo[] {
  const all = find()?.getAvailable() ?? [];
  return provider === undefined ? all : all.filter((m) => m.provider === provider);
}
