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
 * request with a clear error) have no schema here. Checkers are compiled on first use, so startup pays nothing and a
 * check costs a few property reads per value.
 */
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
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
    check = TypeCompiler.Compile(returnSchemas[event as CheckedEvent] as TSchema);
    compiled.set(event, check);
  }
  if (check.Check(value)) return;
  const first = check.Errors(value).First();
  const where = first?.path ? `${first.path}: ` : "";
  throw new InvalidReturnError(event, first ? `${where}${first.message}` : "it does not match");
}
