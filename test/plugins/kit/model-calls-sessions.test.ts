/**
 * Module-scope model calls with two sessions open in one process (what the app-server does with two projects): a
 * call goes through the session whose extension code made it (its models.json, its keys, its
 * `before_provider_request` handlers), also from a tool and from a timer the handler started; a call made outside
 * both is refused with a clear error instead of going through whichever session opened last.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionAPI } from "@knightcodeai/cli";
import { complete, getModel } from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { textStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { startTestServer, type TestServer, writeSse } from "../../helpers/sse-server.js";

const MODEL = { id: "m", contextWindow: 8000, maxTokens: 1000 };

describe("model calls from module scope, with two sessions open", () => {
  let root: string;
  const servers: TestServer[] = [];
  const sessions: TestSession[] = [];

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "kc-model-calls-"));
  });
  afterEach(async () => {
    for (const s of sessions.splice(0)) await s.dispose();
    for (const s of servers.splice(0)) await s.close();
    rmSync(root, { recursive: true, force: true });
  });

  /** A session whose agent folder's `local` provider is its own server, answering with the session's name. */
  async function project(name: string, hookLog: string[]): Promise<{ t: TestSession; server: TestServer }> {
    const server = await startTestServer();
    server.respond((_req, res) => writeSse(res, textStream(`answer from ${name}`)));
    servers.push(server);
    const agentDir = join(root, name, "agent");
    const cwd = join(root, name, "project");
    mkdirSync(cwd, { recursive: true });
    writeLocalModels(agentDir, { baseUrl: `${server.url}/v1`, apiKey: "sk-local", models: [MODEL] });
    const t = await createTestSession({
      agentDir,
      cwd,
      script: [],
      extensions: [
        (kc: ExtensionAPI) => {
          kc.on("before_provider_request", () => {
            hookLog.push(name);
            return undefined;
          });
          const ask = async (text: string) => {
            const model = getModel("local", "m");
            if (!model) throw new Error(`${name}: no local/m in this session`);
            const answer = await complete(model, {
              messages: [{ role: "user", content: text, timestamp: Date.now() }],
            });
            return answer.content.map((c) => (c.type === "text" ? c.text : "")).join("");
          };
          kc.registerCommand("ask", {
            handler: async (_args, ctx) => ctx.ui.notify(await ask("from a command")),
          });
          kc.registerCommand("later", {
            handler: (_args, ctx) =>
              new Promise<void>((resolve, reject) => {
                // A timer the command starts keeps its session.
                setTimeout(() => {
                  ask("from a timer").then((text) => {
                    ctx.ui.notify(text);
                    resolve();
                  }, reject);
                }, 5);
              }),
          });
        },
      ],
    });
    sessions.push(t);
    return { t, server };
  }

  it("answers each session's call through its own provider and hooks, whichever opened last", async () => {
    const hooks: string[] = [];
    const a = await project("alpha", hooks);
    const b = await project("beta", hooks);
    await a.t.prompt("/ask");
    expect(a.t.ui.notifications.map((n) => n.message)).to.deep.equal(["answer from alpha"]);
    expect(a.server.requests, "alpha's server answered").to.have.length(1);
    expect(b.server.requests, "beta's server saw nothing").to.have.length(0);
    expect(hooks, "only alpha's before_provider_request saw it").to.deep.equal(["alpha"]);

    await b.t.prompt("/later");
    await a.t.prompt("/later");
    expect(b.t.ui.notifications.map((n) => n.message)).to.deep.equal(["answer from beta"]);
    expect(a.t.ui.notifications.map((n) => n.message)).to.deep.equal([
      "answer from alpha",
      "answer from alpha",
    ]);
    expect(hooks).to.deep.equal(["alpha", "beta", "alpha"]);
  });

  it("refuses a call made outside both sessions, naming why, and serves it when only one is open", async () => {
    const a = await project("alpha", []);
    const model = getModel("local", "m");
    expect(model, "with one session open a call outside it goes there").to.not.equal(undefined);
    await project("beta", []);
    expect(() => getModel("local", "m")).to.throw(/2 KnightCode sessions are open/);
    expect(() => complete(model!, { messages: [] })).to.throw(/made outside all of them/);
    await sessions.pop()!.dispose();
    const answer = await complete(model!, {
      messages: [{ role: "user", content: "hi", timestamp: Date.now() }],
    });
    expect(answer.content).to.deep.equal([{ type: "text", text: "answer from alpha" }]);
    expect(a.server.requests).to.have.length(1);
  });
});
