/**
 * The interactive mode's everyday commands, keys and tool calls, end to end: the built `knightcode` runs in tmux
 * against a local server that speaks the OpenAI Chat Completions wire format, and the tests read the screen.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { cliBin } from "../../helpers/cli.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { startTestServer, type TestServer, writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import {
  DONE,
  finishChunk,
  textStream,
  toolCallChunks,
  toolCallStream,
  usageChunk,
} from "../providers/openai-compatible/fixtures.js";
import { hasTmux, TmuxDriver } from "./tmux-driver.js";

describe("interactive commands, keys and tool calls (tmux, local model server)", function () {
  this.timeout(90_000);
  const tmp = useTempDir("kc-tui-cmd-");
  let server: TestServer;
  let term: TmuxDriver;

  before(function () {
    if (!hasTmux) this.skip();
  });
  beforeEach(async () => {
    server = await startTestServer();
    term = new TmuxDriver();
  });
  afterEach(async () => {
    term.close();
    await server.close();
  });

  const agentDir = () => join(tmp.path, "agent");

  function launch(options: { extension?: string; env?: string; columns?: number; rows?: number } = {}): void {
    writeLocalModels(agentDir(), {
      baseUrl: `${server.url}/v1`,
      apiKey: "LOCAL_KEY",
      models: [
        { id: "m1", contextWindow: 32_000, maxTokens: 1024 },
        { id: "m2", contextWindow: 64_000, maxTokens: 1024 },
      ],
    });
    const command = [
      `${options.env ?? ""} KNIGHTCODE_AGENT_DIR=${agentDir()} LOCAL_KEY=sk-local`,
      process.execPath,
      cliBin,
      ...(options.extension ? ["-e", options.extension] : []),
      "--provider local --model m1",
    ].join(" ");
    term.start(command, tmp.path, options.columns ?? 100, options.rows ?? 32);
  }

  async function quit(): Promise<void> {
    term.enter("/quit");
    await term.waitFor("KC-EXIT-0");
  }

  it("shows a bash call while its command streams in, its elapsed time while it runs and the time it took", async () => {
    let argsSent = false;
    // The arguments arrive slowly; `argsSent` tells when the last piece went out.
    server.respondInOrder(
      async (_req, res) => {
        const args = { command: "sleep 2; echo streamed-done" };
        const events = [...toolCallChunks(0, "call_1", "bash", args, 3), finishChunk("tool_calls")];
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        for (const event of events) {
          res.write(`data: ${JSON.stringify(event.data)}\n\n`);
          await new Promise((r) => setTimeout(r, 120));
        }
        argsSent = true;
        res.write(`data: ${JSON.stringify(usageChunk(30, 12).data)}\n\ndata: ${DONE.data}\n\n`);
        res.end();
      },
      (_req, res) => writeSse(res, textStream("Slept.")),
    );
    launch();
    await term.waitFor("local/m1");
    term.enter("sleep please");
    // The command shows while the model is still writing it.
    const writing = await term.waitFor(/● \$ sleep/);
    expect(argsSent, "the call showed only after its arguments were complete").to.equal(false);
    expect(writing).to.not.contain("streamed-done");
    // Then the whole command, with the time it has been running.
    const running = await term.waitFor(/● \$ sleep 2; echo streamed-done \(1s\)/, 10_000);
    expect(running).to.not.contain("⎿ streamed-done");
    const done = await term.waitFor("Slept.");
    expect(done).to.match(/● \$ sleep 2; echo streamed-done \(2\.\ds\)/);
    expect(done).to.contain("⎿ streamed-done");
    await quit();
  });

  it("shows a codemode call as its script, with the tool calls the script made nested under it", async () => {
    const ext = join(tmp.path, "lookup.ts");
    writeFileSync(
      ext,
      `import { Type } from "@sinclair/typebox";
       export default (kc: any) => kc.registerTool({
         name: "lookup", description: "Looks a word up", exposure: "codemode",
         parameters: Type.Object({ query: Type.String() }),
         execute: async (_id: string, p: { query: string }) => ({ content: [{ type: "text", text: "found-" + p.query }], details: undefined }),
       });`,
    );
    const code = [
      'const a = await tools.lookup({ query: "alpha" });',
      'const b = await tools.lookup({ query: "beta" });',
      "return [a, b];",
    ].join("\n");
    server.respondInOrder(
      (_req, res) => writeSse(res, toolCallStream("call_cm", "codemode", { code })),
      (_req, res) => writeSse(res, textStream("Looked both up.")),
    );
    launch({ extension: ext });
    await term.waitFor("local/m1");
    term.enter("look up alpha and beta");
    const screen = await term.waitFor("Looked both up.");
    const lines = screen.split("\n");
    const head = lines.findIndex((l) => /^● codemode \(\d+ms|^● codemode \(\d\.\ds/.test(l));
    expect(head, screen).to.be.greaterThan(-1);
    expect(lines[head + 1]).to.equal('  │ const a = await tools.lookup({ query: "alpha" });');
    expect(lines[head + 3]).to.equal("  │ return [a, b];");
    expect(lines[head + 4]).to.match(/^ {2}● lookup alpha \(\d+ms\)$/);
    expect(lines[head + 5]).to.equal("    ⎿ found-alpha");
    expect(lines[head + 6]).to.match(/^ {2}● lookup beta \(\d+ms\)$/);
    expect(screen).to.not.contain('{"code"');
    expect(screen).to.not.contain("\\n");
    await quit();
  });
});

export { mkdirSync, readFileSync };
