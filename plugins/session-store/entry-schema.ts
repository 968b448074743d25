/**
 * The shape each entry type must have to be used: what the context, the tree and the renderers read from it. A line
 * that is valid JSON but fails here (`"message": null`, a compaction without a summary) would otherwise break the
 * session far from where it was read, so the reader skips it with a warning instead.
 *
 * The schemas check the fields KnightCode reads and leave other fields alone (extra fields, fields a later
 * version adds). Timestamps of messages are not required: nothing breaks without one. Entry types this version
 * does not know pass unchecked, for forward compatibility.
 */
import { type TSchema, Type } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";

const Text = Type.Object({ type: Type.Literal("text"), text: Type.String() });
const Image = Type.Object({ type: Type.Literal("image"), data: Type.String(), mimeType: Type.String() });
const Thinking = Type.Object({ type: Type.Literal("thinking"), thinking: Type.String() });
const ToolCall = Type.Object({
  type: Type.Literal("toolCall"),
  id: Type.String(),
  name: Type.String(),
  arguments: Type.Record(Type.String(), Type.Unknown()),
});
const UserContent = Type.Union([Type.String(), Type.Array(Type.Union([Text, Image]))]);
const Timestamp = Type.Optional(Type.Number());
const Usage = Type.Object({
  input: Type.Number(),
  output: Type.Number(),
  cacheRead: Type.Number(),
  cacheWrite: Type.Number(),
  totalTokens: Type.Number(),
  cost: Type.Object({ total: Type.Number() }),
});

/** One schema per message role; the role itself is checked first, so errors name the field that is wrong. */
const MESSAGE_SCHEMAS: Record<string, TSchema> = {
  user: Type.Object({ content: UserContent, timestamp: Timestamp }),
  assistant: Type.Object({
    content: Type.Array(Type.Union([Text, Thinking, ToolCall])),
    api: Type.String(),
    provider: Type.String(),
    model: Type.String(),
    usage: Usage,
    stopReason: Type.String(),
    timestamp: Timestamp,
  }),
  toolResult: Type.Object({
    toolCallId: Type.String(),
    toolName: Type.String(),
    content: Type.Array(Type.Union([Text, Image])),
    isError: Type.Boolean(),
    timestamp: Timestamp,
  }),
  custom: Type.Object({
    customType: Type.String(),
    content: UserContent,
    display: Type.Boolean(),
    timestamp: Timestamp,
  }),
};
const ROLES = Object.keys(MESSAGE_SCHEMAS);

const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"].map((l) =>
  Type.Literal(l),
);

/** Entry fields besides `type`, `id`, `parentId` and `timestamp` (file-format.ts checks those for every line). */
const ENTRY_SCHEMAS: Record<string, TSchema> = {
  message: Type.Object({}),
  model_change: Type.Object({ provider: Type.String(), modelId: Type.String() }),
  thinking_level_change: Type.Object({ thinkingLevel: Type.Union(THINKING_LEVELS) }),
  compaction: Type.Object({
    summary: Type.String(),
    firstKeptEntryId: Type.String(),
    tokensBefore: Type.Number(),
    usage: Type.Optional(Usage),
    fromHook: Type.Optional(Type.Boolean()),
  }),
  branch_summary: Type.Object({
    fromId: Type.String(),
    summary: Type.String(),
    fromHook: Type.Optional(Type.Boolean()),
  }),
  custom: Type.Object({ customType: Type.String() }),
  custom_message: Type.Object({ customType: Type.String(), content: UserContent, display: Type.Boolean() }),
  label: Type.Object({ targetId: Type.String(), label: Type.Optional(Type.String()) }),
  session_info: Type.Object({ name: Type.Optional(Type.String()) }),
  context_edit: Type.Object({ targetId: Type.String() }),
};

/** Compiled on first use: a session that holds only messages never compiles the rest. */
const compiled = new Map<TSchema, TypeCheck<TSchema>>();
function checkerOf(schema: TSchema): TypeCheck<TSchema> {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  return check;
}

/** Errors named in one warning; the rest are summed up, since one is enough to know the line is damaged. */
const MAX_ERRORS = 3;

/** `field.path: what is wrong` for the first few errors, or undefined when `value` fits `schema`. */
function schemaProblem(schema: TSchema, value: unknown, prefix: string): string | undefined {
  const check = checkerOf(schema);
  if (check.Check(value)) return undefined;
  const found: string[] = [];
  // A missing field is also reported as of the wrong type: one message per field.
  const paths = new Set<string>();
  let more = 0;
  for (const error of check.Errors(value)) {
    const path = [prefix, ...error.path.split("/").filter((part) => part !== "")].filter(Boolean).join(".");
    if (paths.has(path)) continue;
    paths.add(path);
    if (found.length === MAX_ERRORS) {
      more++;
      continue;
    }
    found.push(
      error.message === "Expected required property"
        ? `${path} is missing`
        : `${path || "the entry"}: ${error.message.charAt(0).toLowerCase()}${error.message.slice(1)}`,
    );
  }
  if (found.length === 0) return `${prefix || "the entry"} has the wrong shape`;
  return found.join("; ") + (more > 0 ? ` (and ${more} more)` : "");
}

/** Why `value` (found at `field`) is not an AgentMessage, or undefined if it is one. */
export function messageProblem(value: unknown, field: string): string | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return `${field} must be an object, not ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}`;
  }
  const role = (value as { role?: unknown }).role;
  const schema = typeof role === "string" ? MESSAGE_SCHEMAS[role] : undefined;
  if (!schema) {
    return `${field}.role must be one of ${ROLES.join(", ")}, not ${JSON.stringify(role) ?? "missing"}`;
  }
  return schemaProblem(schema, value, field);
}

/**
 * Why an entry (already known to have a string `type`, an `id` and a `parentId`) does not have the shape of its
 * type, or undefined if it does or its type is not one this version knows.
 */
export function entryShapeProblem(entry: Record<string, unknown>): string | undefined {
  const schema = ENTRY_SCHEMAS[entry.type as string];
  if (!schema) return undefined;
  const problem = schemaProblem(schema, entry, "");
  if (problem) return problem;
  if (entry.type === "message") return messageProblem(entry.message, "message");
  if (entry.type === "context_edit" && entry.replacement !== null) {
    return messageProblem(entry.replacement, "replacement");
  }
  return undefined;
}
