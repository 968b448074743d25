/**
 * Model calls from module scope: `complete(model, context, options)` and `getModel(provider, id)`, the shape
 * extensions written for pi use (`@mariozechner/pi-ai`). KnightCode has no process-wide provider table: providers,
 * models.json and keys belong to a session. Each open session's model service publishes its `ctx.modelRegistry`
 * here while it lives, and these functions go through the most recently opened one; inside a session, prefer
 * `ctx.modelRegistry.streamSimple()`, which is always that session's own.
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

const live: ModelRuntime[] = [];

/** Called by the model service when a session opens; the returned function withdraws it when the session ends. */
export function publishModelRuntime(runtime: ModelRuntime): () => void {
  live.push(runtime);
  return () => {
    const at = live.lastIndexOf(runtime);
    if (at >= 0) live.splice(at, 1);
  };
}

function current(): ModelRuntime {
  const runtime = live.at(-1);
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

/** A model of the open session's list, or `undefined`. */
export function getModel(provider: string, modelId: string): ModelInfo | undefined {
  return live.at(-1)?.find(provider, modelId);
}

/** The models of the open session's list, optionally of one provider. */
export function getModels(provider?: string): ModelInfo[] {
  const all = live.at(-1)?.getAvailable() ?? [];
  return provider === undefined ? all : all.filter((m) => m.provider === provider);
}
