/**
 * `ask_user` over `knightcode app-server`: its questions reach the client as one `item/toolCall/requestUserInput`
 * with the asking call's itemId, the thread waits on the dialog meanwhile, the answers (an option with a note, the
 * user's own words, a skipped question) reach the model, and `{}` dismisses the questions and stops the turn.
 */
import { expect } from "chai";
import { textStream, toolCallStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { type Harness, harness, notifications } from "./harness.js";

const QUESTIONS = {
  questions: [
    {
      id: "db",
      text: "Which database?",
      options: [{ label: "Postgres (Recommended)", description: "the usual" }, { label: "SQLite" }],
    },
    { id: "name", text: "Service name?", options: [{ label: "api" }] },
    { id: "port", text: "Port?", options: [{ label: "8080" }] },
  ],
};

describe("knightcode app-server: ask_user", function () {
  this.timeout(60_000);
  let h: Harness;
  afterEach(async () => h?.close());
  // Removed after the hook above has stopped the process, so nothing writes into it any more.
  const tmp = useTempDir("kc-appserver-ask-");

  it("asks every question in one requestUserInput, answers reach the model, and {} stops the turn", async () => {
    h = await harness(tmp.path);
    h.model.respondInOrder(
      (_req, res) => writeSse(res, toolCallStream("call_q", "ask_user", QUESTIONS)),
      (_req, res) => writeSse(res, textStream("Thanks")),
      (_req, res) => writeSse(res, toolCallStream("call_r", "ask_user", QUESTIONS)),
      (_req, res) => writeSse(res, textStream("should not be asked for")),
    );
    const server = await h.start();
    const { client } = server;
    await client.initialize();
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const asked: Record<string, any>[] = [];
    const statusWhileAsked: unknown[] = [];
    client.onRequest("item/toolCall/requestUserInput", (params) => {
      asked.push(params);
      statusWhileAsked.push(notifications(server, "thread/status/changed").at(-1)?.status);
      return asked.length === 1
        ? {
            answers: {
              db: { label: "Postgres (Recommended)", note: "version 16" },
              name: { other: "billing-api" },
              port: { label: "not an option" },
            },
          }
        : {};
    });

    const first = client.waitFor("turn/completed");
    const { turn } = await client.request("turn/start", {
      threadId: thread.id,
      input: [{ type: "text", text: "Set it up" }],
    });
    expect((await first).turn.status).to.equal("completed");
    expect(asked[0]).to.deep.equal({ threadId: thread.id, turnId: turn.id, itemId: "call_q", ...QUESTIONS });
    expect(statusWhileAsked[0]).to.deep.equal({ type: "active", waitingOn: ["dialog"] });
    const result = String(
      notifications(server, "item/completed").find((n) => n.item.id === "call_q")!.item.result,
    );
    expect(result).to.contain("db (Which database?): Postgres (Recommended) (their note: version 16)");
    expect(result).to.contain("name (Service name?): in their own words: billing-api");
    expect(result).to.contain("Skipped: port");
    expect(JSON.stringify(h.model.requests[1]!.body.messages)).to.contain("billing-api");

    const second = client.waitFor("turn/completed", (p) => p.turn.id !== turn.id);
    await client.request("turn/start", { threadId: thread.id, input: [{ type: "text", text: "Again" }] });
    const stopped = (await second).turn;
    expect(asked).to.have.length(2);
    const dismissed = stopped.items.find((i) => i.type === "toolCall")!;
    expect(String((dismissed as { result?: unknown }).result)).to.contain("dismissed the questions");
    // The dismissed call ended the turn: the model was not asked again.
    expect(h.model.requests).to.have.length(3);
  });
});
