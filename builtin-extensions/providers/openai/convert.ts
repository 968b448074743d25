/**
 * Builds the Responses API request body from a provider request: instructions, input items, tools, tool choice,
 * reasoning and limits. Requests are stateless (`store: false`): everything the model needs, including its own
 * encrypted reasoning, is sent again each time.
 */
import type {
  AssistantMessage,
  ImageContent,
  LlmMessage,
  ModelInfo,
  ProviderStreamRequest,
  TextContent,
  ThinkingLevel,
  ToolResultMessage,
} from "@knightcodeai/cli/kit";
import { DEFAULT_BASE_URL, OPENAI_RESPONSES_API } from "./models.js";

/** What a thinking block from this API keeps in `thinkingSignature` (as JSON): the reasoning item to send back. */
export interface ReasoningSignature {
  id: string;
  encrypted_content: string;
  summary: { type: "summary_text"; text: string }[];
}

type Item = Record<string, unknown>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The reasoning item a thinking block carries, or undefined when it did not come from this API. */
export function parseReasoningSignature(signature: string | undefined): ReasoningSignature | undefined {
  if (!signature) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(signature);
  } catch {
    return undefined;
  }
  if (!isRecord(parsed) || typeof parsed.id !== "string" || typeof parsed.encrypted_content !== "string") {
    return undefined;
  }
  const summary = Array.isArray(parsed.summary)
    ? parsed.summary
        .filter((part): part is { text: string } => isRecord(part) && typeof part.text === "string")
        .map((part) => ({ type: "summary_text" as const, text: part.text }))
    : [];
  return { id: parsed.id, encrypted_content: parsed.encrypted_content, summary };
}

function imagePart(image: ImageContent): Item {
  return { type: "input_image", image_url: `data:${image.mimeType};base64,${image.data}`, detail: "auto" };
}

function userContent(content: string | (TextContent | ImageContent)[]): Item[] {
  if (typeof content === "string") return content ? [{ type: "input_text", text: content }] : [];
  const parts: Item[] = [];
  for (const part of content) {
    if (part.type === "text") {
      if (part.text) parts.push({ type: "input_text", text: part.text });
    } else if (part.type === "image") parts.push(imagePart(part));
  }
  return parts;
}

function toolOutput(message: ToolResultMessage): string | Item[] {
  const text = message.content
    .filter((part): part is TextContent => part.type === "text")
    .map((part) => part.text)
    .join("\n");
  const images = message.content.filter((part): part is ImageContent => part.type === "image");
  if (images.length === 0) return text || (message.isError ? "(error without a message)" : "(no output)");
  return [...(text ? [{ type: "input_text", text }] : []), ...images.map(imagePart)];
}

/** Reasoning is only valid for the model that produced it, so it goes back only to the same provider and model. */
function ownReasoning(message: AssistantMessage, model: ModelInfo): boolean {
  return (
    message.api === OPENAI_RESPONSES_API && message.provider === model.provider && message.model === model.id
  );
}

function assistantItems(message: AssistantMessage, model: ModelInfo, answered: ReadonlySet<string>): Item[] {
  const items: Item[] = [];
  const blocks = message.content;
  const keepReasoning = ownReasoning(message, model);
  blocks.forEach((block, index) => {
    if (block.type === "thinking") {
      // Thinking of other providers (or without the encrypted item) cannot be sent back: it is dropped.
      const reasoning = keepReasoning ? parseReasoningSignature(block.thinkingSignature) : undefined;
      // A reasoning item must be followed by the output it led to; a turn cut off right after it has none.
      const followed = blocks
        .slice(index + 1)
        .some((next) => next.type === "toolCall" || (next.type === "text" && next.text !== ""));
      if (reasoning && followed) items.push({ type: "reasoning", ...reasoning });
    } else if (block.type === "text") {
      if (block.text) {
        items.push({
          type: "message",
          role: "assistant",
          content: [{ type: "output_text", text: block.text, annotations: [] }],
          status: "completed",
        });
      }
    } else {
      items.push({
        type: "function_call",
        call_id: block.id,
        name: block.name,
        arguments: JSON.stringify(block.arguments ?? {}),
      });
      // Every call needs an output; a turn that was interrupted before the tool ran has none in the transcript.
      if (!answered.has(block.id)) {
        items.push({
          type: "function_call_output",
          call_id: block.id,
          output: "No result: the call was interrupted before the tool ran.",
        });
      }
    }
  });
  return items;
}

/** The transcript as Responses input items. */
export function convertMessages(messages: readonly LlmMessage[], model: ModelInfo): Item[] {
  const answered = new Set(
    messages.filter((m): m is ToolResultMessage => m.role === "toolResult").map((m) => m.toolCallId),
  );
  const input: Item[] = [];
  for (const message of messages) {
    if (message.role === "user") {
      const content = userContent(message.content);
      if (content.length > 0) input.push({ type: "message", role: "user", content });
    } else if (message.role === "assistant") {
      input.push(...assistantItems(message, model, answered));
    } else if (message.role === "toolResult") {
      input.push({ type: "function_call_output", call_id: message.toolCallId, output: toolOutput(message) });
    }
  }
  return input;
}

function nullable(schema: unknown): unknown {
  if (!isRecord(schema)) return schema;
  const withNullEnum =
    Array.isArray(schema.enum) && !schema.enum.includes(null) ? [...schema.enum, null] : null;
  if (typeof schema.type === "string") {
    return {
      ...schema,
      type: [schema.type, "null"],
      ...(withNullEnum ? { enum: withNullEnum } : {}),
    };
  }
  if (Array.isArray(schema.type)) {
    return {
      ...schema,
      type: schema.type.includes("null") ? schema.type : [...schema.type, "null"],
      ...(withNullEnum ? { enum: withNullEnum } : {}),
    };
  }
  return { anyOf: [schema, { type: "null" }] };
}

const SCHEMA_LISTS = ["anyOf", "oneOf", "allOf", "prefixItems"];
const SCHEMA_MAPS = ["properties", "$defs", "definitions"];

/**
 * A JSON schema that OpenAI's strict mode accepts: every object closed (`additionalProperties: false`) with all of
 * its properties required. A property that was optional becomes nullable instead, so the model may still leave it
 * out (by sending null). Schemas that already follow the rules come out unchanged.
 */
export function strictSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(strictSchema);
  if (!isRecord(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (SCHEMA_MAPS.includes(key) && isRecord(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, strictSchema(v)]));
    } else if (SCHEMA_LISTS.includes(key) && Array.isArray(value)) out[key] = value.map(strictSchema);
    else if (key === "items") out[key] = strictSchema(value);
    else out[key] = value;
  }
  const isObject =
    out.type === "object" ||
    (Array.isArray(out.type) && out.type.includes("object")) ||
    isRecord(out.properties);
  if (isObject) {
    const properties = isRecord(out.properties) ? { ...out.properties } : {};
    const required = new Set(Array.isArray(out.required) ? out.required : []);
    for (const key of Object.keys(properties)) {
      if (!required.has(key)) properties[key] = nullable(properties[key]);
    }
    out.properties = properties;
    out.required = Object.keys(properties);
    out.additionalProperties = false;
  }
  return out;
}

/** Plain JSON (drops TypeBox's symbol keys and anything JSON cannot carry). */
function plainJson(value: unknown): unknown {
  const text = JSON.stringify(value ?? { type: "object", properties: {} });
  return JSON.parse(text);
}

/**
 * Effort for a thinking level. The GPT-6 models accept low to max and reject `minimal` (and `none`), so minimal
 * asks them for low and xhigh keeps its own value; other models get the classic mapping (xhigh is high).
 */
export function reasoningEffort(level: ThinkingLevel, modelId: string): string {
  const gpt6 = /^gpt-6/.test(modelId);
  switch (level) {
    case "minimal":
      return gpt6 ? "low" : "minimal";
    case "low":
      return "low";
    case "medium":
      return "medium";
    case "xhigh":
      return gpt6 ? "xhigh" : "high";
    default:
      return "high";
  }
}

/**
 * The effort a model's level map names for a level (pi's per-model map: GitHub Copilot's GPT-5 models take `low`
 * for minimal, xAI's grok-4.3 `none` for off): the map the request carries from the model's registration, else
 * `compat.thinkingLevelMap`. Undefined when neither names one; then the mapping above applies.
 */
function mappedEffort(request: ProviderStreamRequest, level: ThinkingLevel): string | undefined {
  const map = request.thinkingLevelMap ?? request.compat?.thinkingLevelMap;
  if (typeof map !== "object" || map === null) return undefined;
  const effort = (map as Record<string, unknown>)[level];
  return typeof effort === "string" && effort ? effort : undefined;
}

/**
 * OpenAI's reasoning models reject `temperature` (the GPT-5 line accepted it only with effort "none", which the
 * GPT-6.2 models reject), so it is sent only to models that do not reason, or when `compat.supportsTemperature`
 * says the endpoint takes it.
 */
function sendsTemperature(request: ProviderStreamRequest): boolean {
  if (request.temperature === undefined) return false;
  const compat = request.compat?.supportsTemperature;
  if (typeof compat === "boolean") return compat;
  return !request.model.reasoning;
}

/** `prompt_cache_key` groups a session's requests for better cache hits; only OpenAI's own endpoint gets it. */
function isOpenAIEndpoint(baseUrl: string | undefined): boolean {
  try {
    return new URL(baseUrl ?? DEFAULT_BASE_URL).hostname === "api.openai.com";
  } catch {
    return false;
  }
}

/** The request body, before `before_provider_request` handlers see it. */
export function buildPayload(request: ProviderStreamRequest): Record<string, unknown> {
  const { model } = request;
  const forced = request.toolChoice?.name;
  const payload: Record<string, unknown> = { model: model.id };
  if (request.systemPrompt) payload.instructions = request.systemPrompt;
  payload.input = convertMessages(request.messages, model);
  if (request.tools.length > 0) {
    payload.tools = request.tools.map((tool) => ({
      type: "function",
      name: tool.name,
      description: tool.description,
      parameters:
        tool.name === forced ? strictSchema(plainJson(tool.parameters)) : plainJson(tool.parameters),
      strict: tool.name === forced,
    }));
  }
  if (forced) payload.tool_choice = { type: "function", name: forced };
  payload.max_output_tokens = request.maxTokens ?? model.maxTokens;
  if (sendsTemperature(request)) payload.temperature = request.temperature;
  const level = request.thinkingLevel;
  // A model's level map (its registration's `thinkingLevelMap`, as xAI's and Copilot's catalogue models have, or a
  // `compat.thinkingLevelMap`) says what each level sends: `off` (no level in the request) may map to an effort of
  // its own ("none"), `minimal` to "low", `xhigh` to the model's top effort.
  const mapped = mappedEffort(request, level ?? "off");
  if (model.reasoning && mapped !== undefined) {
    payload.reasoning = { effort: mapped, summary: "auto" };
  } else if (model.reasoning && level && level !== "off") {
    payload.reasoning = { effort: reasoningEffort(level, model.id), summary: "auto" };
  }
  // Encrypted reasoning comes back only when asked for; models that do not reason have none to return.
  if (model.reasoning) payload.include = ["reasoning.encrypted_content"];
  payload.store = false;
  if (request.sessionId && request.sessionId.length <= 64 && isOpenAIEndpoint(request.baseUrl)) {
    payload.prompt_cache_key = request.sessionId;
  }
  payload.stream = true;
  return payload;
}
