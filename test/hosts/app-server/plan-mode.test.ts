/**
 * Plan mode over `knightcode app-server`: tools.json's `startInPlanMode` starts the thread in it, the review reaches
 * the client as `ui/dialog` (a select, then an editor for the edit), the edited plan is what the turn carries out,
 * and the progress shows as the `plan-mode` widget and status.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { EDIT_TITLE, REVIEW_CHOICES, REVIEW_TITLE } from "../../../builtin-extensions/plan-mode/index.js";
import { textStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { type Harness, harness, notifications } from "./harness.js";

const toolNames = (body: any): string[] => (body?.tools ?? []).map((t: any) => t.function.name);

describe("knightcode app-server: plan mode", function () {
  this.timeout(60_000);
  let h: Harness;
  afterEach(async () => h?.close());
  const tmp = useTempDir("kc-appserver-plan-");

  it("startInPlanMode, the review and the edit as ui/dialog, the edited plan carried out, progress as a widget", async () => {
    h = await harness(tmp.path);
    writeFileSync(
      join(h.agentDir, "tools.json"),
      JSON.stringify({ "plan-mode": { startInPlanMode: "true" } }),
    );
    h.model.respondInOrder(
      (_req, res) => writeSse(res, textStream("Plan:\n1. Add the route\n2. Add a test")),
      (_req, res) => writeSse(res, textStream("Route added. [DONE:1]")),
    );
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const dialogs: Record<string, any>[] = [];
    client.onRequest("ui/dialog", (params) => {
      dialogs.push(params);
      return params.kind === "select" ? { value: REVIEW_CHOICES.edit } : { value: "1. Only the route" };
    });
    const done = client.waitFor("turn/completed");
    await client.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "add a route" }],
    });
    expect((await done).turn.status).to.equal("completed");

    expect(dialogs.map((d) => [d.kind, d.title])).to.deep.equal([
      ["select", REVIEW_TITLE],
      ["editor", EDIT_TITLE],
    ]);
    expect(dialogs[0]!.options).to.deep.equal([
      REVIEW_CHOICES.approve,
      REVIEW_CHOICES.edit,
      REVIEW_CHOICES.keep,
    ]);
    expect(dialogs[1]!.prefill).to.equal("Plan:\n1. Add the route\n2. Add a test");
    expect(toolNames(h.model.requests[0]!.body)).to.include("read").and.not.include("write");
    expect(toolNames(h.model.requests[1]!.body)).to.include("write");
    const users = (h.model.requests[1]!.body.messages as { role: string; content: unknown }[]).filter(
      (m) => m.role === "user",
    );
    expect(JSON.stringify(users.at(-1)))
      .to.contain("1. Only the route")
      .and.not.contain("Add a test");

    const widgets = notifications(server, "ui/widget").filter((n) => n.key === "plan-mode");
    expect(widgets.map((w) => w.lines ?? null)).to.deep.equal([["▶ 1. Only the route"], null]);
    const statuses = notifications(server, "ui/state").map(
      (n) => (n.statuses as { key: string; text: string }[]).find((s) => s.key === "plan-mode")?.text ?? null,
    );
    expect(statuses).to.include("plan 0/1");
    expect(statuses.at(-1)).to.equal(null);
  });
});
