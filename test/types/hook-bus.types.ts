/**
 * Type-level checks of the hook bus, compiled by `npm run typecheck` (not run by mocha): every dispatch is typed
 * from the event catalogue, so a wrong kind or a wrong payload is a compile error. A line marked
 * `@ts-expect-error` fails the type-check when it stops being an error.
 */
import type { HookBus } from "../../kernel/events/hook-bus.js";

export async function dispatchesAreTypedFromTheCatalogue(bus: HookBus): Promise<void> {
  await bus.emit("agent_start", {});
  await bus.emit("session_info_changed", { name: "x" });
  // @ts-expect-error tool_call is a gate: it cannot be emitted as a notification
  await bus.emit("tool_call", { toolCallId: "1", toolName: "t", input: {} });
  // @ts-expect-error a session name is a string
  await bus.emit("session_info_changed", { name: 1 });
  // @ts-expect-error unknown event
  await bus.emit("agent_stat", {});

  const decision = await bus.gate("tool_call", { toolCallId: "1", toolName: "t", input: {} }, undefined, {
    failClosed: () => ({ block: true }),
  });
  const blocked: boolean | undefined = decision?.block;
  void blocked;
  const call = { toolCallId: "1", toolName: "t", input: {} };
  // @ts-expect-error the fail-closed decision must be a tool_call result
  await bus.gate("tool_call", call, undefined, { failClosed: () => 1 });

  const context = await bus.transform("context", { messages: [] });
  void context.messages;
  // @ts-expect-error context is a transform, not a gate
  await bus.gate("context", { messages: [] }, undefined, { failClosed: () => ({}) });

  const warming = await bus.lastWins("cache_warming_decision", { idleMs: 1, model: undefined as never });
  void warming?.action;

  await bus.boundary("turn_end", { turnIndex: 0, message: undefined as never, toolResults: [] });
  // @ts-expect-error the boundary state is the bus's to add
  await bus.boundary("turn_end", { turnIndex: 0, message: undefined as never, toolResults: [], end: true });
}
