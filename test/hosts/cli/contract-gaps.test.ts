/**
 * Contract points of the spec that once failed through the built CLI (issue 32): a forced system prompt reaches the
 * provider while the transcript keeps the structured prompt; a run a command starts (`ctx.sendUserMessage()`,
 * `sendMessage({triggerTurn: true})`) runs in print and JSON modes, also in a git folder, before the session shuts
 * down.
 */

import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { textStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { runCli } from "../../helpers/cli.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { startTestServer, type TestServer, writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";

type Wire = { type: string; [k: string]: any };

const records = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Wire);

/** Commands that start a run and return at once; stderr shows the order of agent_start and session_shutdown. */
const COMMANDS = `export default (kc: any) => {
  kc.registerCommand("ask", { description: "ask", handler: async (args: string, ctx: any) => {
    ctx.sendUserMessage("asked " + args);
  } });
  kc.registerCommand("nudge", { description: "nudge", handler: async (args: string) => {
    kc.sendMessage({ customType: "nudge", content: "nudged " + args, display: true }, { triggerTurn: true });
  } });
  kc.on("agent_start", () => { process.stderr.write("[agent_start]\\n"); });
  kc.on("session_shutdown", () => { process.stderr.write("[session_shutdown]\\n"); });
};`;

describe("knightcode: contract gaps through the CLI", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-contract-");
  const agentDir = () => join(tmp.path, "agent");

  describe("a forced system prompt", () => {
    let server: TestServer;
    beforeEach(async () => {
      server = await startTestServer();
    });
    afterEach(() => server.close());

    it("goes to the provider while the transcript records the structured prompt", async () => {
      writeLocalModels(agentDir(), {
        baseUrl: `${server.url}/v1`,
        apiKey: "sk-local",
        models: [{ id: "m", contextWindow: 32_000, maxTokens: 1024 }],
      });
      server.respond((_req, res) => writeSse(res, [...textStream("ok")]));
      const ext = tmp.write(
        "force.ts",
        `export default (kc: any) => kc.on("before_agent_start", () => ({ systemPrompt: "FORCED-PROMPT-TEXT" }));`,
      );
      const sessions = join(tmp.path, "sessions");
      const { code, stderr } = await runCli(
        ["-e", ext, "--provider", "local", "--model", "m", "--session-dir", sessions, "-p", "hi"],
        { cwd: tmp.path, env: { KNIGHTCODE_AGENT_DIR: agentDir() } },
      );
      expect(code, stderr).to.equal(0);
      const sent = server.requests[0]!.body.messages[0];
      expect(sent.role).to.be.oneOf(["system", "developer"]);
      expect(JSON.stringify(sent.content)).to.equal(JSON.stringify("FORCED-PROMPT-TEXT"));

      const [file] = readdirSync(sessions, { recursive: true }).filter((f) => String(f).endsWith(".jsonl"));
      const entries = readFileSync(join(sessions, String(file)), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      const system = entries.filter((e) => e.type === "custom" && e.customType === "knightcode.system");
      expect(system).to.have.length(1);
      expect(system[0].data.systemPrompt).to.not.contain("FORCED-PROMPT-TEXT");
      // The structured sections: the default prompt names the active tools.
      expect(system[0].data.systemPrompt).to.contain("read");
    });
  });

  describe("a run started by a command", () => {
    const script = () =>
      tmp.write("script.json", JSON.stringify({ steps: [{ text: "answer one" }, { text: "answer two" }] }));
    const cli = (cwd: string, args: string[]) =>
      runCli(
        [
          "--provider",
          "scripted",
          "--script",
          script(),
          "--no-session",
          "-e",
          tmp.write("cmd.ts", COMMANDS),
          ...args,
        ],
        {
          cwd,
          env: { KNIGHTCODE_AGENT_DIR: agentDir() },
        },
      );
    const gitFolder = () => {
      const dir = join(tmp.path, "repo");
      execFileSync("git", ["init", "-q", dir]);
      return dir;
    };

    for (const where of ["a plain folder", "a git folder"]) {
      it(`runs in print mode in ${where} and prints its answer (sendUserMessage)`, async () => {
        const cwd = where === "a git folder" ? gitFolder() : tmp.path;
        const { code, stdout, stderr } = await cli(cwd, ["-p", "/ask now"]);
        expect(code, stderr).to.equal(0);
        expect(stdout).to.equal("answer one\n");
        expect(stderr.indexOf("[agent_start]"), stderr).to.be.within(0, stderr.indexOf("[session_shutdown]"));
      });

      it(`runs in JSON mode in ${where} (sendMessage with triggerTurn)`, async () => {
        const cwd = where === "a git folder" ? gitFolder() : tmp.path;
        const { code, stdout, stderr } = await cli(cwd, ["--mode", "json", "/nudge now"]);
        expect(code, stderr).to.equal(0);
        const wire = records(stdout);
        expect(wire[0]!.type).to.equal("session");
        const ends = wire.filter((r) => r.type === "message_end").map((r) => r.message);
        expect(ends.map((m) => m.role)).to.deep.equal(["custom", "assistant"]);
        expect(ends[0].content).to.equal("nudged now");
        expect(ends[1].content[0].text).to.equal("answer one");
        expect(wire.at(-1)).to.deep.equal({ type: "agent_settled", aborted: false });
        expect(stderr.indexOf("[agent_start]"), stderr).to.be.within(0, stderr.indexOf("[session_shutdown]"));
      });
    }

    it("waits for the run in print mode and goes on with the next prompt after it", async () => {
      const { code, stdout, stderr } = await cli(tmp.path, ["-p", "/ask first", "second"]);
      expect(code, stderr).to.equal(0);
      expect(stdout).to.equal("answer two\n");
      expect(stderr.match(/\[agent_start\]/g)).to.have.length(2);
    });
  });
});
