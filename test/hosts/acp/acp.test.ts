/**
 * `knightcode acp` end to end: the built CLI as a child process, driven by the ACP SDK's client side over its stdio,
 * against a local OpenAI Chat Completions server that plays the model (harness.ts).
 */
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { expect } from "chai";
import {
  chunk,
  roleChunk,
  textStream,
  toolCallStream,
} from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { type AcpHarness, acpHarness, agentText, toolMessages, toolUpdates } from "./harness.js";

describe("knightcode acp (the Agent Client Protocol over stdio)", function () {
  this.timeout(60_000);
  let h: AcpHarness;
  // Registered before the temp dir's: the children stop before their folder goes.
  afterEach(() => h.close());
  const tmp = useTempDir("kc-acp-");
  beforeEach(async () => {
    h = await acpHarness(tmp.path);
  });

  it("initializes, opens a session, and streams a prompt with a bash call: chunks, the tool call and its output", async () => {
    h.model.respondInOrder(
      (_req, res) => writeSse(res, toolCallStream("call_1", "bash", { command: "echo hello-from-bash" })),
      (_req, res) =>
        writeSse(res, [
          roleChunk(),
          chunk({ reasoning_content: "The output " }),
          chunk({ reasoning_content: "looks right." }),
          ...textStream("The command printed hello, all done here.").slice(1),
        ]),
    );
    const acp = await h.start();
    expect(acp.init.protocolVersion).to.equal(1);
    expect(acp.init.agentCapabilities).to.deep.include({ loadSession: true });
    expect(acp.init.agentCapabilities?.promptCapabilities).to.include({ image: true, embeddedContext: true });
    expect(acp.init.agentCapabilities?.mcpCapabilities).to.include({ http: true, sse: true });
    expect(acp.init.agentInfo?.name).to.equal("knightcode");

    const session = await acp.agent.request("session/new", { cwd: h.project, mcpServers: [] });
    expect(session.sessionId).to.be.a("string").and.not.equal("");
    expect(session.modes?.availableModes.map((m) => m.id)).to.deep.equal([
      "default",
      "ask",
      "read-only",
      "plan",
    ]);
    const model = session.configOptions?.find((o) => o.id === "model");
    expect(model).to.include({ category: "model", currentValue: "local/m" });

    const answer = await acp.agent.request("session/prompt", {
      sessionId: session.sessionId,
      prompt: [{ type: "text", text: "run it" }],
    });
    expect(answer.stopReason).to.equal("end_turn");
    const updates = acp.updates(session.sessionId);
    const chunks = updates.filter((u) => u.sessionUpdate === "agent_message_chunk");
    expect(chunks.length, "the answer streams in several chunks").to.be.greaterThan(3);
    expect(agentText(updates)).to.equal("The command printed hello, all done here.");
    const thoughts = updates.flatMap((u) =>
      u.sessionUpdate === "agent_thought_chunk" && u.content.type === "text" ? [u.content.text] : [],
    );
    expect(thoughts.join("")).to.equal("The output looks right.");
    const call = toolUpdates(updates, "call_1");
    expect(call[0]).to.deep.include({
      sessionUpdate: "tool_call",
      kind: "execute",
      title: "echo hello-from-bash",
    });
    const last = call.at(-1)!;
    expect(last).to.include({ sessionUpdate: "tool_call_update", status: "completed" });
    expect(JSON.stringify(last.content)).to.contain("hello-from-bash");
    // The tool call came before the answer's chunks.
    expect(updates.indexOf(call[0]!)).to.be.lessThan(updates.indexOf(chunks[0]!));
    expect(toolMessages(h.model.requests[1])).to.contain("hello-from-bash");
    await acp.waitFor(
      () => acp.updates(session.sessionId, "available_commands_update").length > 0,
      "available_commands_update",
    );
    const commands = acp.updates(session.sessionId, "available_commands_update")[0] as Extract<
      SessionUpdate,
      { sessionUpdate: "available_commands_update" }
    >;
    expect(commands.availableCommands.map((c) => c.name)).to.include("compact");
    expect(await acp.stop()).to.equal(0);
  });
});
