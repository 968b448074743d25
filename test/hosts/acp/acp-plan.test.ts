/**
 * Plan mode over ACP: the built `knightcode acp` offers a `plan` session mode (session/set_mode enters and leaves it),
 * asks for the review with `session/request_permission`, and sends the plan's steps and their progress as `plan`
 * session updates. Driven by the ACP SDK's client against a local OpenAI Chat Completions server (harness.ts).
 */
import type { ContentBlock, RequestPermissionRequest, SessionUpdate } from "@agentclientprotocol/sdk";
import { expect } from "chai";
import { REVIEW_TITLE } from "../../../builtin-extensions/plan-mode/index.js";
import { textStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import type { RecordedRequest } from "../../helpers/sse-server.js";
import { writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { type AcpHarness, acpHarness } from "./harness.js";

type PlanUpdate = Extract<SessionUpdate, { sessionUpdate: "plan" }>;
type ModeUpdate = Extract<SessionUpdate, { sessionUpdate: "current_mode_update" }>;

const toolNames = (r: RecordedRequest | undefined): string[] =>
  ((r?.body?.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
const prompt = (text: string): ContentBlock[] => [{ type: "text", text }];

describe("knightcode acp: plan mode", function () {
  this.timeout(60_000);
  let h: AcpHarness;
  afterEach(() => h.close());
  const tmp = useTempDir("kc-acp-plan-");
  beforeEach(async () => {
    h = await acpHarness(tmp.path);
  });

  it("session/set_mode plan: read-only tools, the review as a permission request, plan updates with progress; approval returns to the mode before", async () => {
    const asked: RequestPermissionRequest[] = [];
    h.model.respondInOrder(
      (_r, res) => writeSse(res, textStream("Plan:\n1. Add the route\n2. Write its test")),
      (_r, res) => writeSse(res, textStream("Route added. [DONE:1]")),
    );
    const acp = await h.start({
      permission: (request) => {
        asked.push(request);
        return { outcome: { outcome: "selected", optionId: "allow_once" } };
      },
    });
    const { sessionId, modes } = await acp.agent.request("session/new", { cwd: h.project, mcpServers: [] });
    expect(modes?.availableModes.map((m) => m.id)).to.include("plan");
    await acp.agent.request("session/set_mode", { sessionId, modeId: "ask" });
    await acp.agent.request("session/set_mode", { sessionId, modeId: "plan" });

    const answer = await acp.agent.request("session/prompt", { sessionId, prompt: prompt("add a route") });
    expect(answer.stopReason).to.equal("end_turn");
    expect(asked.map((r) => r.toolCall.title)).to.deep.equal([REVIEW_TITLE]);
    expect(toolNames(h.model.requests[0])).to.include("read").and.not.include("write");
    expect(toolNames(h.model.requests[1])).to.include("write");

    const plans = (acp.updates(sessionId, "plan") as PlanUpdate[]).map((u) =>
      u.entries.map((e) => `${e.content}:${e.status}`),
    );
    expect(plans).to.deep.equal([
      ["Add the route:pending", "Write its test:pending"],
      ["Add the route:in_progress", "Write its test:pending"],
      ["Add the route:completed", "Write its test:in_progress"],
    ]);
    const modeIds = (acp.updates(sessionId, "current_mode_update") as ModeUpdate[]).map(
      (u) => u.currentModeId,
    );
    expect(modeIds).to.deep.equal(["ask", "plan", "ask"]);
  });

  it("a rejected review keeps planning; set_mode default leaves plan mode; --plan starts sessions in it", async () => {
    h.model.respondInOrder(
      (_r, res) => writeSse(res, textStream("Plan:\n1. Drop the table")),
      (_r, res) => writeSse(res, textStream("ok")),
    );
    const acp = await h.start({}, ["--provider", "local", "--model", "m", "--plan"]);
    const { sessionId, modes } = await acp.agent.request("session/new", { cwd: h.project, mcpServers: [] });
    expect(modes?.currentModeId).to.equal("plan");
    // The harness's client rejects permission requests: the person keeps planning.
    await acp.agent.request("session/prompt", { sessionId, prompt: prompt("clean up") });
    expect(h.model.requests).to.have.length(1);
    expect(acp.updates(sessionId, "current_mode_update")).to.have.length(0);

    await acp.agent.request("session/set_mode", { sessionId, modeId: "default" });
    await acp.agent.request("session/prompt", { sessionId, prompt: prompt("go on") });
    expect(toolNames(h.model.requests[1])).to.include("write");
    const modeIds = (acp.updates(sessionId, "current_mode_update") as ModeUpdate[]).map(
      (u) => u.currentModeId,
    );
    expect(modeIds).to.deep.equal(["default"]);
  });
});
