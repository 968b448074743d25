/**
 * Builds the Gemini API request body (`generateContent` / `streamGenerateContent`) from a provider request:
 * `contents`, `systemInstruction`, `tools` (with schemas Gemini accepts), `toolConfig` and `generationConfig` with the
 * thinking setting. Pure functions.
 */
import type {
  AssistantMessage,
  ImageContent,
  LlmMessage,
  ProviderStreamRequest,
  TextContent,
  ToolResultMessage,
} from "@knightcodeai/cli/kit";
import { SafeCallIds } from "@knightcodeai/cli/kit";
import { geminiMajor, geminiThinking } from "./models.js";

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  functionCall?: { name: string; args: Record<string, unknown>; id?: string };
  functionResponse?: { name: string; response: Record<string, unknown>; id?: string };
}

export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

export interface GeminiPayload {
  contents: GeminiContent[];
  systemInstruction?: { parts: { text: string }[] };
  tools?: { functionDeclarations: { name: string; description: string; parameters?: unknown }[] }[];
  toolConfig?: { functionCallingConfig: { mode: "ANY"; allowedFunctionNames: string[] } };
  generationConfig: {
    maxOutputTokens: number;
    temperature?: number;
    thinkingConfig?: {
      thinkingBudget?: number;
      thinkingLevel?: string;
      includeThoughts?: boolean;
    };
  };
}

/** What a thinking budget leaves for the answer when the output limit has to be raised for it. */
const ANSWER_TOKENS = 4096;

/** The request body for a provider request (before `before_provider_request` handlers see it). */
export function buildPayload(request: ProviderStreamRequest): GeminiPayload {
  const { model } = request;
  const payload: GeminiPayload = {
    contents: convertMessages(request.messages, model),
    generationConfig: { maxOutputTokens: request.maxTokens ?? model.maxTokens },
  };
  if (request.systemPrompt.trim()) payload.systemInstruction = { parts: [{ text: request.systemPrompt }] };
  if (request.tools.length > 0) {
    payload.tools = [
      {
        functionDeclarations: request.tools.map((tool) => {
          const parameters = cleanSchema(tool.parameters);
          return {
            name: tool.name,
            description: tool.description,
            // A tool without parameters declares none: Gemini refuses an object schema without properties.
            ...(hasProperties(parameters) ? { parameters } : {}),
          };
        }),
      },
    ];
  }
  if (request.toolChoice) {
    payload.toolConfig = {
      functionCallingConfig: { mode: "ANY", allowedFunctionNames: [request.toolChoice.name] },
    };
  }
  if (request.temperature !== undefined) payload.generationConfig.temperature = request.temperature;
  applyThinking(payload, request);
  return payload;
}

function applyThinking(payload: GeminiPayload, request: ProviderStreamRequest): void {
  const { model } = request;
  if (!model.reasoning) return;
  const thinking = geminiThinking(model, request.compat ?? {});
  const level = request.thinkingLevel && request.thinkingLevel !== "off" ? request.thinkingLevel : undefined;
  const config = payload.generationConfig;
  if (thinking.kind === "level") {
    // No level turns thinking off: "off" is the lowest one, without the thoughts shown.
    config.thinkingConfig = level
      ? { thinkingLevel: thinking.levels[level], includeThoughts: true }
      : { thinkingLevel: thinking.off };
    return;
  }
  if (!level) {
    config.thinkingConfig = { thinkingBudget: thinking.off };
    return;
  }
  const budget = thinking.budgets[level];
  // Thinking counts against maxOutputTokens: raise the limit (within the model's) so the answer has room.
  if (config.maxOutputTokens < budget + ANSWER_TOKENS) {
    config.maxOutputTokens = Math.max(
      config.maxOutputTokens,
      Math.min(model.maxTokens, budget + ANSWER_TOKENS),
    );
  }
  config.thinkingConfig = { thinkingBudget: budget, includeThoughts: true };
}

/**
 * Converts the conversation. Thinking parts and thought signatures go back only to the model that made them (same
 * provider, API and model id): a signature is the model's own and another model refuses it. Tool calls without a
 * result (an aborted turn) and results without a call are dropped, since Gemini wants each call answered in the
 * next turn. Consecutive tool results become one user turn of `functionResponse` parts.
 */
export function convertMessages(
  messages: readonly LlmMessage[],
  model: { provider: string; api: string; id: string },
): GeminiContent[] {
  const callIds = new Set<string>();
  const resultIds = new Set<string>();
  for (const message of messages) {
    if (message.role === "assistant")
      for (const block of message.content) if (block.type === "toolCall") callIds.add(block.id);
    if (message.role === "toolResult") resultIds.add(message.toolCallId);
  }
  const major = geminiMajor(model.id);
  const ids = new CallIds(major === undefined || major >= 3);
  const out: GeminiContent[] = [];
  const push = (content: GeminiContent) => {
    if (content.parts.length === 0) return;
    const previous = out.at(-1);
    if (previous?.role === content.role) previous.parts.push(...content.parts);
    else out.push(content);
  };
  for (const message of messages) {
    if (message.role === "user") push({ role: "user", parts: userParts(message.content) });
    else if (message.role === "toolResult") {
      if (callIds.has(message.toolCallId)) push({ role: "user", parts: toolResultParts(message, ids) });
    } else {
      const parts = modelParts(message, model, resultIds, ids);
      if (major !== undefined && major >= 3) signCalls(parts);
      push({ role: "model", parts });
    }
  }
  // The answers to the calls open the user turn that follows them; images of tool results come after.
  for (const content of out) {
    if (content.role !== "user") continue;
    const responses = content.parts.filter((p) => p.functionResponse);
    if (responses.length > 0)
      content.parts = [...responses, ...content.parts.filter((p) => !p.functionResponse)];
  }
  return out;
}

function userParts(content: string | (TextContent | ImageContent)[]): GeminiPart[] {
  if (typeof content === "string") return content.trim() ? [{ text: content }] : [];
  return mediaParts(content);
}

function mediaParts(content: readonly (TextContent | ImageContent)[]): GeminiPart[] {
  const parts: GeminiPart[] = [];
  for (const part of content) {
    if (part.type === "text") {
      if (part.text.trim()) parts.push({ text: part.text });
    } else if (part.type === "image") {
      parts.push({ inlineData: { mimeType: part.mimeType, data: part.data } });
    }
  }
  return parts;
}

function toolResultParts(message: ToolResultMessage, ids: CallIds): GeminiPart[] {
  const text = message.content
    .filter((c): c is TextContent => c.type === "text")
    .map((c) => c.text)
    .join("\n");
  const images = mediaParts(message.content.filter((c) => c.type === "image"));
  const value = text || (images.length > 0 ? "(the image follows)" : "");
  const id = ids.get(message.toolCallId);
  return [
    {
      functionResponse: {
        name: message.toolName,
        response: message.isError ? { error: value } : { output: value },
        ...(id ? { id } : {}),
      },
    },
    ...images,
  ];
}

function modelParts(
  message: AssistantMessage,
  model: { provider: string; api: string; id: string },
  resultIds: ReadonlySet<string>,
  ids: CallIds,
): GeminiPart[] {
  const own = message.provider === model.provider && message.api === model.api && message.model === model.id;
  const signature = (value: string | undefined) => (own && value ? { thoughtSignature: value } : {});
  const parts: GeminiPart[] = [];
  for (const block of message.content) {
    if (block.type === "text") {
      // An empty text part can carry the signature Gemini wants back.
      if (block.text.trim() || (own && block.textSignature))
        parts.push({ text: block.text, ...signature(block.textSignature) });
    } else if (block.type === "thinking") {
      if (!own || block.redacted) continue;
      if (block.thinking.trim() || block.thinkingSignature)
        parts.push({ thought: true, text: block.thinking, ...signature(block.thinkingSignature) });
    } else if (block.type === "toolCall" && resultIds.has(block.id)) {
      const id = ids.get(block.id);
      parts.push({
        functionCall: { name: block.name, args: block.arguments ?? {}, ...(id ? { id } : {}) },
        ...signature(block.thoughtSignature),
      });
    }
  }
  return parts;
}

/**
 * What Gemini 3 takes in place of a signature it never made: the function calls of another model (a session that
 * switched models) or of an older turn that lost its signature. Without one, Gemini 3 refuses a turn's first
 * function call with "Function call is missing a thought_signature" (ai.google.dev/gemini-api/docs/thought-signatures).
 */
export const UNSIGNED_CALL_SIGNATURE = "skip_thought_signature_validator";

/** Gemini 3 wants a signature on the first function call of each model turn. */
function signCalls(parts: GeminiPart[]): void {
  const calls = parts.filter((p) => p.functionCall);
  if (calls.length > 0 && !calls.some((p) => p.thoughtSignature))
    calls[0]!.thoughtSignature = UNSIGNED_CALL_SIGNATURE;
}

/**
 * The ids sent with calls and their responses. Gemini 3 and later (and models of other makers behind the API) match
 * a response to its call by id; Gemini 2.5 matches by name and order and gets none. Ids of other providers are made
 * to fit `[a-zA-Z0-9_-]{1,64}`, the same way for the call and its response.
 */
class CallIds {
  private readonly ids = new SafeCallIds();

  constructor(private readonly send: boolean) {}

  get(id: string): string | undefined {
    return this.send ? this.ids.get(id) : undefined;
  }
}

/** The keywords of Gemini's `Schema` (an OpenAPI 3.0 subset); anything else is refused with a 400. */
const KEPT = new Set([
  "type",
  "format",
  "title",
  "description",
  "nullable",
  "enum",
  "items",
  "properties",
  "required",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "minLength",
  "maxLength",
  "pattern",
  "minimum",
  "maximum",
  "anyOf",
  "propertyOrdering",
]);

/** The `format`s Gemini accepts, by type. */
const FORMATS: Record<string, readonly string[]> = {
  string: ["enum", "date-time"],
  number: ["float", "double"],
  integer: ["int32", "int64"],
};

const MAX_DEPTH = 32;

/**
 * A tool's JSON schema as Gemini's `parameters` accept it. Gemini takes a subset of OpenAPI 3.0 and refuses the
 * rest with a 400, so: `$schema`, `$id`, `additionalProperties`, `patternProperties`, `default`, `examples`,
 * `not` and other keywords it does not know are dropped; `const` becomes a one-value `enum`; `oneOf` becomes
 * `anyOf`; a union of string constants (TypeBox's `Type.Union` of literals) becomes one string `enum`; a `type`
 * list or a `null` alternative becomes `nullable`; local `$ref`s are inlined from `$defs`/`definitions`; `enum`s
 * of other than strings are dropped (Gemini's enums are strings); `required` keeps only declared properties; an
 * object's empty `properties` are dropped; a tuple's item schemas become one, and an array without `items` gets
 * `items: {}` (Gemini refuses an array without them).
 */
export function cleanSchema(schema: unknown): Record<string, unknown> {
  const root = isRecord(schema) ? schema : {};
  const defs = {
    ...(isRecord(root.definitions) ? root.definitions : {}),
    ...(isRecord(root.$defs) ? root.$defs : {}),
  };
  return clean(root, defs, 0, new Set());
}

function clean(
  schema: Record<string, unknown>,
  defs: Record<string, unknown>,
  depth: number,
  refs: ReadonlySet<string>,
): Record<string, unknown> {
  if (depth > MAX_DEPTH) return {};
  if (typeof schema.$ref === "string") {
    const name = /^#\/(?:\$defs|definitions)\/(.+)$/.exec(schema.$ref)?.[1];
    const target = name !== undefined ? defs[name] : undefined;
    // An unknown or recursive reference cannot be written out: it becomes a schema that takes anything.
    if (!name || !isRecord(target) || refs.has(name)) return pick(schema, ["description", "title"]);
    const { $ref: _, ...rest } = schema;
    return clean({ ...target, ...rest }, defs, depth + 1, new Set([...refs, name]));
  }
  const out: Record<string, unknown> = {};
  const next = (value: Record<string, unknown>) => clean(value, defs, depth + 1, refs);

  // `type: ["string", "null"]`: the one type, nullable.
  let type = schema.type;
  if (Array.isArray(type)) {
    const types = type.filter((t) => t !== "null");
    if (types.length < type.length) out.nullable = true;
    type = types.length === 1 ? types[0] : undefined;
  }
  if (typeof type === "string" && type !== "null") out.type = type;

  for (const [key, value] of Object.entries(schema)) {
    if (key === "type" || !KEPT.has(key)) continue;
    switch (key) {
      case "properties": {
        if (!isRecord(value)) break;
        const properties: Record<string, unknown> = {};
        for (const [name, property] of Object.entries(value))
          if (isRecord(property)) properties[name] = next(property);
        if (Object.keys(properties).length > 0) out.properties = properties;
        break;
      }
      case "items":
        if (isRecord(value)) out.items = next(value);
        else if (Array.isArray(value)) out.items = tupleItems(value.filter(isRecord).map(next));
        break;
      case "anyOf":
        break; // below, with oneOf
      case "enum": {
        const strings = Array.isArray(value) ? value.filter((v) => typeof v === "string") : [];
        if (Array.isArray(value) && strings.length === value.length && strings.length > 0) out.enum = strings;
        break;
      }
      case "format":
        if (typeof value === "string" && typeof out.type === "string" && FORMATS[out.type]?.includes(value))
          out.format = value;
        break;
      default:
        out[key] = value;
    }
  }

  if (schema.const !== undefined) {
    if (typeof schema.const === "string") {
      out.enum = [schema.const];
      out.type ??= "string";
    } else if (out.type === undefined && ["number", "boolean"].includes(typeof schema.const)) {
      out.type = typeof schema.const === "number" ? "number" : "boolean";
    }
  }

  const alternatives = [
    ...(Array.isArray(schema.anyOf) ? schema.anyOf : []),
    ...(Array.isArray(schema.oneOf) ? schema.oneOf : []),
  ].filter(isRecord);
  const isNull = (a: Record<string, unknown>) => a.type === "null";
  if (alternatives.some(isNull)) out.nullable = true;
  mergeAlternatives(out, alternatives.filter((a) => !isNull(a)).map(next));

  if (out.enum !== undefined && out.type === undefined) out.type = "string"; // Gemini's enums are string enums
  if (Array.isArray(out.required)) {
    const declared = isRecord(out.properties) ? out.properties : {};
    const required = out.required.filter((name) => typeof name === "string" && name in declared);
    if (required.length > 0) out.required = required;
    else delete out.required;
  }
  // A tuple (`prefixItems`) becomes one item schema; an array without one takes anything (Gemini wants `items`).
  if (out.items === undefined && Array.isArray(schema.prefixItems))
    out.items = tupleItems(schema.prefixItems.filter(isRecord).map(next));
  if (out.type === "array" && out.items === undefined) out.items = {};
  return out;
}

/** `anyOf` of cleaned alternatives (the `null` ones taken out): string constants fold into one enum. */
function mergeAlternatives(out: Record<string, unknown>, alternatives: Record<string, unknown>[]): void {
  if (alternatives.length === 0) return;
  if (alternatives.every((a) => a.type === "string" && Array.isArray(a.enum))) {
    out.type = "string";
    out.enum = [...new Set(alternatives.flatMap((a) => a.enum as string[]))];
    return;
  }
  if (alternatives.length === 1) {
    for (const [key, value] of Object.entries(alternatives[0]!)) if (out[key] === undefined) out[key] = value;
    return;
  }
  out.anyOf = alternatives;
}

/** The one item schema of a tuple: its element schema when all are alike, else `anyOf` them. */
function tupleItems(schemas: Record<string, unknown>[]): Record<string, unknown> {
  const distinct = [...new Map(schemas.map((schema) => [JSON.stringify(schema), schema])).values()];
  if (distinct.length === 0) return {};
  return distinct.length === 1 ? distinct[0]! : { anyOf: distinct };
}

function pick(schema: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((k) => typeof schema[k] === "string").map((k) => [k, schema[k]]));
}

function hasProperties(schema: Record<string, unknown>): boolean {
  return isRecord(schema.properties) && Object.keys(schema.properties).length > 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
