/**
 * The CLI as a user meets it: a mode added by an extension, --help listing modes and extension flags with their
 * owners, --list-models, the message when no model is configured, and print and RPC mode against a local server
 * that speaks the OpenAI Chat Completions wire format (configured through models.json).
 */

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { textStream } from "../builtin-extensions/providers/openai-compatible/fixtures.js";
import { runCli } from "../helpers/cli.js";
import { startTestServer, type TestServer, writeSse } from "../helpers/sse-server.js";
import { useTempDir } from "../helpers/temp-dir.js";

describe("knightcode modes and models", () => {
  const tmp = useTempDir("kc-modes-");
  const env = () => ({ KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") });

  it("runs a session through a mode that an extension registers with -e", async () => {
    const ext = tmp.write(
      "shout-mode.ts",
      `import type { ExtensionAPI } from "@knightcodeai/cli";
       export default function (kc: ExtensionAPI) {
         kc.registerMode("shout", {
           description: "Print the answer in capitals",
           run: async ({ session, prompts, io }) => {
             let text = "";
             session.subscribe((e: any) => {
               if (e.type === "message_end" && e.message.role === "assistant") text = e.message.content.map((c: any) => c.text ?? "").join("");
             });
             for (const p of prompts) await session.prompt(p);
             io.stdout.write(text.toUpperCase() + "\\n");
             return 0;
           },
         });
       }`,
    );
    const script = tmp.write("s.json", JSON.stringify({ steps: [{ text: "quiet words" }] }));
    const result = await runCli(
      ["-e", ext, "--mode", "shout", "--provider", "scripted", "--script", script, "hi"],
      {
        cwd: tmp.path,
        env: env(),
      },
    );
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.equal("QUIET WORDS\n");
  });

  it("keeps the JSON stream linear: one turn of 200 tool calls stays small", async () => {
    const ext = tmp.write(
      "echo.ts",
      `export default (kc: any) => kc.registerTool({ name: "echo", description: "echo", parameters: { type: "object", properties: { text: { type: "string" } } }, execute: async (_i: string, p: any) => ({ content: [{ type: "text", text: p.text }], details: undefined }) });`,
    );
    const calls = Array.from({ length: 200 }, (_, i) => ({
      name: "echo",
      arguments: { text: `call number ${i}` },
    }));
    const script = tmp.write("s.json", JSON.stringify({ steps: [{ toolCalls: calls }, { text: "done" }] }));
    const result = await runCli(
      ["--mode", "json", "--no-session", "-e", ext, "--provider", "scripted", "--script", script, "go"],
      { cwd: tmp.path, env: env(), timeoutMs: 60_000 },
    );
    expect(result.code, result.stderr).to.equal(0);
    const bytes = Buffer.byteLength(result.stdout);
    // The peer that repeats the whole message in every update wrote 24 MB for this; delta-only records stay linear.
    expect(bytes, `${(bytes / 1e6).toFixed(2)} MB`).to.be.below(3_000_000);
    expect(result.stdout.split("\n").filter((l) => l.includes('"tool_execution_end"'))).to.have.length(200);
  });

  it("continues a session with --continue and opens one by id prefix with --session", async () => {
    // Each run is a new process, so each gets its own one-step script.
    const step = (name: string, text: string, expectUser: string) =>
      tmp.write(name, JSON.stringify({ steps: [{ text, expect: { lastUserText: expectUser } }] }));
    const run = (script: string, extra: string[], prompt: string, mode = ["-p"]) =>
      runCli([...mode, "--provider", "scripted", "--script", script, ...extra, prompt], {
        cwd: tmp.path,
        env: env(),
      });
    expect((await run(step("1.json", "first answer", "hello"), [], "hello")).code).to.equal(0);
    const second = await run(step("2.json", "second answer", "again"), ["--continue"], "again", [
      "--mode",
      "json",
    ]);
    expect(second.code, second.stderr).to.equal(0);
    const header = JSON.parse(second.stdout.split("\n")[0]!) as { id: string };
    const third = await run(
      step("3.json", "third answer", "once more"),
      ["--session", header.id.slice(0, 8)],
      "once more",
    );
    expect(third.code, third.stderr).to.equal(0);
    expect(third.stdout).to.equal("third answer\n");
    // One session file holds all three exchanges.
    const { readdirSync, readFileSync } = await import("node:fs");
    const sessions = join(tmp.path, "agent", "sessions");
    const [folder] = readdirSync(sessions).filter((f) => !f.startsWith("."));
    const files = readdirSync(join(sessions, folder!)).filter((f) => f.endsWith(".jsonl"));
    expect(files).to.have.length(1);
    const roles = readFileSync(join(sessions, folder!, files[0]!), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === "message")
      .map((e) => e.message.role);
    expect(roles).to.deep.equal(["user", "assistant", "user", "assistant", "user", "assistant"]);
    const both = await runCli(["-p", "--continue", "--no-session", "x"], { cwd: tmp.path, env: env() });
    expect(both.code).to.equal(2);
    expect(both.stderr).to.contain("choose one of --session, --continue and --no-session");
  });

  it("names the available modes when --mode names none of them", async () => {
    const result = await runCli(["--mode", "nope", "--provider", "scripted", "hi"], {
      cwd: tmp.path,
      env: env(),
    });
    expect(result.code).to.equal(2);
    expect(result.stderr).to.match(/unknown mode "nope" \(available: .*print.*json.*rpc/);
  });

  it("lists modes and extension flags with their owners in --help", async () => {
    const ext = tmp.write(
      "flagged.ts",
      `export default (kc: any) => kc.registerFlag("dry-run", { type: "boolean", description: "Change nothing" });`,
    );
    const result = await runCli(["-e", ext, "--help"], { cwd: tmp.path, env: env() });
    expect(result.code).to.equal(0);
    expect(result.stdout).to.match(/--dry-run\s+Change nothing \(cli:.*flagged\.ts\)/);
    expect(result.stdout).to.match(/--script <value>\s+.*\(builtin:scripted\)/);
    expect(result.stdout).to.match(/rpc\s+.*\(builtin:mode-rpc\)/);
  });

  it("passes extension flags to their extension and rejects unknown ones with a suggestion", async () => {
    const ext = tmp.write(
      "flagged.ts",
      `export default (kc: any) => {
        kc.registerFlag("greeting", { type: "string" });
        kc.registerCommand("show", { handler: async (_a: string, ctx: any) => { process.stdout.write("greeting=" + kc.getFlag("greeting") + "\\n"); } });
      };`,
    );
    const ok = await runCli(["-e", ext, "-p", "--greeting", "hey there", "/show"], {
      cwd: tmp.path,
      env: env(),
    });
    expect(ok.code, ok.stderr).to.equal(0);
    // What an extension writes to stdout goes to stderr: stdout is the mode's.
    expect(ok.stderr).to.contain("greeting=hey there");
    const bad = await runCli(["-e", ext, "-p", "--greting", "x", "/show"], { cwd: tmp.path, env: env() });
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain("unknown option --greting (did you mean --greeting?)");
  });

  it("lists the models that can be used with --list-models as a table, filtered by a search word", async () => {
    const agentDir = join(tmp.path, "agent");
    const bare = { ...env(), ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "" };
    // Nothing usable: no key, no server. The scripted test provider is never offered.
    const none = await runCli(["--list-models"], { cwd: tmp.path, env: bare });
    expect(none.code).to.equal(1);
    expect(none.stdout).to.equal("");
    expect(none.stderr)
      .to.contain("no model can be used")
      .and.contain(join(agentDir, "auth.json"))
      .and.contain(join(agentDir, "models.json"));
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(
      join(agentDir, "models.json"),
      JSON.stringify({
        providers: {
          local: {
            api: "openai-completions",
            baseUrl: "http://127.0.0.1:9/v1",
            models: [
              { id: "m1", contextWindow: 32000, maxTokens: 4096, input: ["text", "image"], reasoning: true },
            ],
          },
        },
      }),
    );
    const all = await runCli(["--list-models"], {
      cwd: tmp.path,
      env: { ...bare, ANTHROPIC_API_KEY: "sk-x" },
    });
    expect(all.code, all.stderr).to.equal(0);
    const lines = all.stdout.trimEnd().split("\n");
    expect(lines[0]).to.match(
      /^provider\s+model\s+context\s+max output\s+thinking\s+images\s+usable through$/,
    );
    expect(all.stdout).to.match(
      /^local\s+m1\s+32k\s+4k\s+yes\s+yes\s+server http:\/\/127\.0\.0\.1:9\/v1, no key$/m,
    );
    expect(all.stdout).to.match(/^anthropic\s+\S+.*\$ANTHROPIC_API_KEY$/m);
    expect(all.stdout)
      .to.not.contain("scripted")
      .and.not.match(/^openai\s/m);
    const some = await runCli(["--list-models", "m1"], {
      cwd: tmp.path,
      env: { ...bare, ANTHROPIC_API_KEY: "sk-x" },
    });
    expect(some.stdout.trimEnd().split("\n").slice(1))
      .to.have.length(1)
      .and.satisfy((rows: string[]) => rows[0]!.startsWith("local "));
  });

  it("says how to configure a model when none is configured, in print, JSON and RPC mode", async () => {
    const print = await runCli(["-p", "hi"], { cwd: tmp.path, env: env() });
    expect(print.code).to.equal(2);
    expect(print.stderr)
      .to.contain("ANTHROPIC_API_KEY")
      .and.contain(join(tmp.path, "agent", "models.json"))
      .and.not.contain("<agentDir>");
    const json = await runCli(["--mode", "json", "hi"], { cwd: tmp.path, env: env() });
    expect(json.code).to.equal(2);
    expect(json.stderr).to.contain(join(tmp.path, "agent", "auth.json"));
    const rpc = await runCli(["--mode", "rpc", "--no-session"], {
      cwd: tmp.path,
      env: env(),
      stdin: `${JSON.stringify({ id: "1", type: "prompt", message: "hi" })}\n`,
    });
    expect(rpc.code).to.equal(0);
    const response = JSON.parse(
      rpc.stdout
        .trim()
        .split("\n")
        .find((l) => l.includes('"response"'))!,
    );
    expect(response.success).to.equal(false);
    expect(response.error).to.contain(join(tmp.path, "agent", "auth.json"));
  });

  describe("against a local OpenAI-compatible server", () => {
    let server: TestServer;
    beforeEach(async () => {
      server = await startTestServer();
      const agentDir = join(tmp.path, "agent");
      mkdirSync(agentDir, { recursive: true });
      writeFileSync(
        join(agentDir, "models.json"),
        JSON.stringify({
          providers: {
            local: {
              baseUrl: `${server.url}/v1`,
              api: "openai-completions",
              models: [{ id: "tiny", contextWindow: 8000 }],
            },
          },
        }),
      );
    });
    afterEach(() => server.close());

    it("print mode prints the server's answer", async () => {
      server.respond((_req, res) => writeSse(res, textStream("Local answer.")));
      const result = await runCli(["-p", "--model", "local/tiny", "hi"], { cwd: tmp.path, env: env() });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.equal("Local answer.\n");
      expect(server.requests[0]!.body.messages.at(-1)).to.deep.include({ role: "user", content: "hi" });
    });

    it("RPC mode answers a prompt from the server", async () => {
      server.respond((_req, res) => writeSse(res, textStream("Over RPC.")));
      const result = await runCli(["--mode", "rpc", "--model", "local/tiny", "--no-session"], {
        cwd: tmp.path,
        env: env(),
        stdin: `${JSON.stringify({ id: "1", type: "prompt", message: "hi" })}\n${JSON.stringify({ id: "2", type: "get_last_assistant_text" })}\n`,
      });
      expect(result.code, result.stderr).to.equal(0);
      const records = result.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(records.find((r) => r.type === "agent_settled")).to.deep.equal({
        type: "agent_settled",
        aborted: false,
      });
      const finals = records.filter((r) => r.type === "message_end" && r.message.role === "assistant");
      expect(finals[0].message.content[0].text).to.equal("Over RPC.");
    });
  });
});
