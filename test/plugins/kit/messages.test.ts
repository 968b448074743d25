/** convertToLlm and serializeConversation: what providers receive and the plain-text transcript. */

import type { AgentMessage } from "@knightcodeai/cli";
import { convertToLlm, serializeConversation } from "@knightcodeai/cli";
import { expect } from "chai";

const usage = {
  input: 1,
  output: 1,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 2,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
const assistant = (content: unknown[], stopReason = "toolUse") =>
  ({
    role: "assistant",
    content,
    api: "x",
    provider: "x",
    model: "x",
    usage,
    stopReason,
    timestamp: 2,
  }) as AgentMessage;

const conversation: AgentMessage[] = [
  { role: "user", content: "Fix the bug", timestamp: 1 },
  assistant([
    { type: "thinking", thinking: "look first" },
    { type: "text", text: "Reading." },
    { type: "toolCall", id: "c1", name: "read", arguments: { path: "a.ts", offset: 2 } },
  ]),
  {
    role: "toolResult",
    toolCallId: "c1",
    toolName: "read",
    content: [{ type: "text", text: "const a = 1;" }],
    isError: false,
    timestamp: 3,
  } as AgentMessage,
  { role: "custom", customType: "note", content: "remember tests", display: true, timestamp: 4 },
  assistant([], "error"),
];

describe("convertToLlm", () => {
  it("turns custom messages into user messages and drops failed empty assistant turns", () => {
    const out = convertToLlm(conversation);
    expect(out.map((m) => m.role)).to.deep.equal(["user", "assistant", "toolResult", "user"]);
    expect(out[3]).to.deep.equal({ role: "user", content: "remember tests", timestamp: 4 });
  });
});

describe("serializeConversation", () => {
  it("labels each part and writes tool calls as name(arg=value)", () => {
    expect(serializeConversation(conversation)).to.equal(
      [
        "[User]: Fix the bug",
        "[Assistant thinking]: look first",
        "[Assistant]: Reading.",
        '[Assistant tool calls]: read(path="a.ts", offset=2)',
        "[Tool result]: const a = 1;",
        "[User]: remember tests",
      ].join("\n\n"),
    );
  });
});
