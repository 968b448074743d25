/**
 * The shapes transform and lastWins handlers may return, one TypeBox schema per event. The composition root hands
 * `checkReturn` to the kernel (KernelOptions.checkReturn), whose hook bus checks every non-undefined return against
 * its event's schema before folding it in; the kernel itself knows no event's shape, and a return that does not match is treated
 * like a throw: reported as `extension_error` naming the extension and the event, skipped, the chain goes on. Without
 * the check a `context` handler returning `{ messages: [null] }` crashed the request builder far from its cause.
 *
 * The schemas require what KnightCode reads from a value (a message's role and content, a block's type and text),
 * not every field of the declared types: a handler that leaves out a timestamp is not refused. Events whose returns
 * are checked where they are used (`before_provider_request`, `before_provider_headers`: a bad value refuses the
 * request with a clear error) have no schema here. An event's first two returns are checked the interpreted way
 * (TypeBox's `Value.Check`, the same rules), and its checker is compiled on the third: compiling generates and
 * compiles a function, more than a short run's few checks cost, while a long session's checks cost a few property
 * reads per value.
 */
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import { Errors } from "@sinclair/typebox/errors";
import { Check } from "@sinclair/typebox/value";
import type { ExtensionEventName } from "../../kernel/api/events.js";

const text = Type.Object({ type: Type.Literal("text"), text: Type.String() });
const image = Type.Object({ type: Type.Literal("image"), data: Type.String(), mimeType: Type.String() });
const thinking = Type.Object({ type: Type.Literal("thinking"), thinking: Type.String() });
const toolCall = Type.Object({
  type: Type.Literal("toolCall"),
  id: Type.String(),
  name: Type.String(),
  arguments: Type.Record(Type.String(), Type.Unknown()),
});
const userContent = Type.Union([Type.String(), Type.Array(Type.Union([text, image]))]);

const agentMessage = Type.Union([
  Type.Object({ role: Type.Literal("user"), content: userContent }),
  Type.Object({
    role: Type.Literal("assistant"),
    content: Type.Array(Type.Union([text, thinking, toolCall])),
  }),
  Type.Object({
    role: Type.Literal("toolResult"),
    toolCallId: Type.String(),
    toolName: Type.String(),
    content: Type.Array(Type.Union([text, image])),
  }),
  Type.Object({ role: Type.Literal("custom"), customType: Type.String(), content: userContent }),
]);
const transcriptMessage = Type.Union([
  agentMessage,
  Type.Object({ role: Type.Literal("system"), content: Type.String() }),
]);
const paths = Type.Optional(Type.Array(Type.Unknown()));

/** The checked events and the shape of what their handlers may return. */
export const returnSchemas = {
  // Each entry's strings are checked (and bad ones ignored with a warning) where the paths are collected.
  resources_discover: Type.Object({ skillPaths: paths, promptPaths: paths, themePaths: paths }),
  input: Type.Union([
    Type.Object({ action: Type.Literal("continue") }),
    Type.Object({
      action: Type.Literal("transform"),
      text: Type.String(),
      images: Type.Optional(Type.Array(image)),
    }),
    Type.Object({ action: Type.Literal("handled") }),
  ]),
  before_agent_start: Type.Object({
    message: Type.Optional(
      Type.Object({
        customType: Type.String(),
        content: userContent,
        display: Type.Optional(Type.Boolean()),
      }),
    ),
    systemPrompt: Type.Optional(Type.String()),
    forceSystemPrompt: Type.Optional(Type.Boolean()),
  }),
  context: Type.Object({ messages: Type.Array(agentMessage) }),
  context_with_system: Type.Object({ messages: Type.Array(transcriptMessage) }),
  message_end: Type.Object({ message: agentMessage }),
  tool_result: Type.Object({
    content: Type.Optional(Type.Array(Type.Union([text, image]))),
    isError: Type.Optional(Type.Boolean()),
  }),
  cache_warming_decision: Type.Object({ action: Type.Union([Type.Literal("warm"), Type.Literal("stop")]) }),
} satisfies Partial<Record<ExtensionEventName, TSchema>>;

export type CheckedEvent = keyof typeof returnSchemas;
export type CheckedReturn<E extends CheckedEvent> = Static<(typeof returnSchemas)[E]>;

const compiled = new Map<string, TypeCheck<TSchema>>();
/** How often each event's returns were checked before its checker was compiled. */
const interpreted = new Map<string, number>();
/** The check of an event's returns at which its checker is compiled. */
const COMPILE_AT_USE = 3;

/** Thrown in place of a handler whose return does not have its event's shape; the bus reports it like a throw. */
export class InvalidReturnError extends TypeError {
  readonly code = "KC_ERR_INVALID_RETURN";
  constructor(event: string, problem: string) {
    super(`the ${event} handler returned a value of the wrong shape: ${problem}`);
    this.name = "InvalidReturnError";
  }
}

/** Throws InvalidReturnError when `value` is not what `event`'s handlers may return; events without a schema pass. */
export function checkReturn(event: string, value: unknown): void {
  let check = compiled.get(event);
  if (!check) {
    if (!Object.hasOwn(returnSchemas, event)) return;
    const schema = returnSchemas[event as CheckedEvent] as TSchema;
    const uses = (interpreted.get(event) ?? 0) + 1;
    if (uses < COMPILE_AT_USE) {
      interpreted.set(event, uses);
      if (Check(schema, value)) return;
      invalid(event, Errors(schema, value).First());
    }
    check = TypeCompiler.Compile(schema);
    compiled.set(event, check);
  }
  if (check.Check(value)) return;
  invalid(event, check.Errors(value).First());
}

function invalid(event: string, first: { path: string; message: string } | undefined): never {
  const where = first?.path ? `${first.path}: ` : "";
  throw new InvalidReturnError(event, first ? `${where}${first.message}` : "it does not match");
}
