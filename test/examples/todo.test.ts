/** examples/extensions/todo.ts: the list follows the active branch. */

import type { LlmMessage } from "@knightcodeai/cli";
import { createTestSession, type ScriptEntry, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import todo, { type TodoDetails } from "../../examples/extensions/todo.js";

/**
 * A model that reads the prompt as a todo call: `add <text>`, `done <id>` or `list` becomes that call, and a tool
 * result gets "ok". Every request is answered the same way, so the script also works after a fork, which starts a
 * new session (and so a new scripted provider that begins at its first step again).
 */
let callCount = 0;
const todoModel: ScriptEntry = (request) => {
  const last = request.messages.at(-1) as LlmMessage;
  if (last.role !== "user") return { text: "ok" };
  const text = typeof last.content === "string" ? last.content : (last.content[0] as { text: string }).text;
  const [action, ...rest] = text.split(" ");
  const args =
    action === "add"
      ? { action, text: rest.join(" ") }
      : action === "done"
        ? { action, id: Number(rest[0]) }
        : { action };
  return { toolCalls: [{ name: "todo", arguments: args, id: `todo-${++callCount}` }] };
};

describe("example: todo", () => {
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  const lastItems = (session: TestSession) => {
    const calls = session.toolCalls().filter((call) => call.toolName === "todo");
    return (calls.at(-1)!.result!.details as TodoDetails).items;
  };

  it("adds items, marks one done, and rebuilds the list of an earlier branch", async () => {
    t = await createTestSession({ extensions: [todo], script: Array(20).fill(todoModel) });
    await t.prompt("add write docs");
    await t.prompt("add ship it");
    await t.prompt("done 1");
    expect(lastItems(t)).to.deep.equal([
      { id: 1, text: "write docs", done: true },
      { id: 2, text: "ship it", done: false },
    ]);

    // Fork the session just before the second prompt: that branch only knows the first item.
    const secondPrompt = t.session.sessionManager
      .getBranch()
      .filter((entry) => entry.type === "message" && entry.message.role === "user")[1]!;
    const { cancelled } = await t.session.fork(secondPrompt.id, { position: "before" });
    expect(cancelled).to.equal(false);
    await t.prompt("list");
    expect(lastItems(t)).to.deep.equal([{ id: 1, text: "write docs", done: false }]);
    expect(t.toolCalls().at(-1)!.result!.content[0]).to.deep.equal({
      type: "text",
      text: "[ ] #1 write docs",
    });
  });
});
