/**
 * The options programs written for pi pass (`pi-acp` runs `--mode rpc --no-themes`): each with pi's meaning, through
 * the built `knightcode`.
 */

import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { textStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { runCli } from "../../helpers/cli.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { startTestServer, type TestServer, writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("pi's command-line options", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-pi-options-");
  const agentDir = () => join(tmp.path, "agent");
  const env = () => ({ KNIGHTCODE_AGENT_DIR: agentDir() });
  const run = (args: string[]) => runCli(args, { cwd: tmp.path, env: env() });
  const loaded = (stdout: string) => stdout.split("\n").filter((l) => l && !l.startsWith(" "));

  it("--no-themes, --no-skills, --no-prompt-templates and --no-mcp leave those built-ins out", async () => {
    const all = await run(["--list-extensions"]);
    expect(all.code, all.stderr).to.equal(0);
    for (const id of ["builtin:themes", "builtin:skills", "builtin:prompt-templates", "builtin:mcp"]) {
      expect(loaded(all.stdout)).to.include(id);
    }
    const without = await run(["--list-extensions", "--no-themes", "-ns", "-np", "--no-mcp"]);
    expect(without.code, without.stderr).to.equal(0);
    const ids = loaded(without.stdout);
    for (const id of ["builtin:themes", "builtin:skills", "builtin:prompt-templates", "builtin:mcp"]) {
      expect(ids).to.not.include(id);
    }
    expect(ids).to.include("builtin:mode-rpc");
    const long = await run(["--list-extensions", "--no-skills", "--no-prompt-templates"]);
    expect(loaded(long.stdout)).to.not.include.members(["builtin:skills", "builtin:prompt-templates"]);
  });

  it("--no-extensions (-ne) loads no found extension; built-ins and -e still load", async () => {
    tmp.write("agent/extensions/personal.ts", "export default () => {};");
    const given = tmp.write("given.ts", "export default () => {};");
    const all = await run(["--list-extensions"]);
    expect(all.stdout).to.contain("personal.ts");
    for (const flag of ["--no-extensions", "-ne"]) {
      const without = await run(["--list-extensions", flag, "-e", given]);
      expect(without.code, without.stderr).to.equal(0);
      expect(without.stdout).to.not.contain("personal.ts");
      expect(without.stdout).to.contain("given.ts");
    }
    const builtins = await run(["--list-extensions", "-ne"]);
    expect(loaded(builtins.stdout)).to.include("builtin:core-tools");
  });

  describe("the system prompt", () => {
    let server: TestServer;
    beforeEach(async () => {
      server = await startTestServer();
      server.respond((_req, res) => writeSse(res, [...textStream("ok")]));
      writeLocalModels(agentDir(), {
        baseUrl: `${server.url}/v1`,
        apiKey: "unused",
        models: [{ id: "m1", contextWindow: 32_000, maxTokens: 1024 }],
      });
      tmp.write("AGENTS.md", "RULES FROM AGENTS FILE");
    });
    afterEach(() => server.close());
    const systemPrompt = (i: number): string => {
      const first = server.requests[i]!.body.messages[0] as { role: string; content: unknown };
      expect(first.role).to.be.oneOf(["system", "developer"]);
      return typeof first.content === "string" ? first.content : JSON.stringify(first.content);
    };
    const ask = (extra: string[]) => run(["-p", "--provider", "local", "--model", "m1", ...extra, "hi"]);

    it("--api-key is the provider's key for this run only, ahead of models.json's", async () => {
      expect((await ask([])).code).to.equal(0);
      expect(server.requests[0]!.headers.authorization).to.equal("Bearer unused");
      const given = await ask(["--api-key", "sk-from-the-command-line"]);
      expect(given.code, given.stderr).to.equal(0);
      expect(server.requests[1]!.headers.authorization).to.equal("Bearer sk-from-the-command-line");
      expect(existsSync(join(agentDir(), "auth.json"))).to.equal(false);
      const bare = await run(["-p", "--api-key", "sk-x", "hi"]);
      expect(bare.code).to.equal(2);
      expect(bare.stderr).to.contain("--api-key needs the provider it is for");
    });

    it("--exclude-tools (-xt) and --no-builtin-tools (-nbt) leave tools out of the request", async () => {
      const declared = (i: number): string[] =>
        (server.requests[i]!.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name);
      expect((await ask([])).code).to.equal(0);
      expect(declared(0)).to.include.members(["read", "bash", "edit", "write"]);
      const excluded = await ask(["--exclude-tools", "bash,ed*"]);
      expect(excluded.code, excluded.stderr).to.equal(0);
      expect(declared(1)).to.include("read");
      expect(declared(1)).to.not.include.members(["bash"]);
      expect(declared(1).filter((n) => n.startsWith("ed"))).to.deep.equal([]);
      const ext = tmp.write(
        "echo.ts",
        `import { Type } from "@sinclair/typebox";
         export default (kc: any) => kc.registerTool({
           name: "echo", description: "Echo", parameters: Type.Object({ text: Type.String() }),
           execute: async () => ({ content: [{ type: "text", text: "e" }], details: undefined }),
         });`,
      );
      const noCore = await ask(["-nbt", "-e", ext]);
      expect(noCore.code, noCore.stderr).to.equal(0);
      expect(declared(2)).to.include("echo");
      expect(declared(2).filter((n) => ["read", "bash", "edit", "write"].includes(n))).to.deep.equal([]);
    });

    it("--no-context-files (-nc) leaves AGENTS.md out", async () => {
      expect((await ask([])).code).to.equal(0);
      expect(systemPrompt(0)).to.contain("RULES FROM AGENTS FILE");
      const without = await ask(["-nc"]);
      expect(without.code, without.stderr).to.equal(0);
      expect(systemPrompt(1)).to.not.contain("RULES FROM AGENTS FILE");
    });

    it("--system-prompt replaces the base; --append-system-prompt adds text and files, in order", async () => {
      const file = tmp.write("extra.md", "APPENDED FROM A FILE");
      const result = await ask([
        "--system-prompt",
        "YOU ARE A TEST PROMPT",
        "--append-system-prompt",
        "APPENDED TEXT",
        "--append-system-prompt",
        file,
      ]);
      expect(result.code, result.stderr).to.equal(0);
      const prompt = systemPrompt(0);
      expect(prompt.startsWith("YOU ARE A TEST PROMPT")).to.equal(true);
      expect(prompt.indexOf("APPENDED TEXT")).to.be.above(0);
      expect(prompt.indexOf("APPENDED FROM A FILE")).to.be.above(prompt.indexOf("APPENDED TEXT"));
    });
  });

  it("--name (-n) names the session; --verbose, --tui-mode and --offline are accepted", async () => {
    const script = tmp.write("script.json", JSON.stringify({ steps: [{ text: "hello" }] }));
    const base = ["--mode", "rpc", "--provider", "scripted", "--script", script, "--no-session"];
    const state = JSON.stringify({ id: "s", type: "get_state" });
    for (const flags of [
      ["--name", "Named run"],
      ["-n", "Named run", "--verbose", "--tui-mode", "regular", "--offline"],
    ]) {
      const result = await runCli([...base, ...flags], { cwd: tmp.path, env: env(), stdin: `${state}\n` });
      expect(result.code, result.stderr).to.equal(0);
      const response = JSON.parse(result.stdout.trim().split("\n").at(-1)!);
      expect(response.data.sessionName).to.equal("Named run");
    }
    const bad = await run([...base, "--tui-mode", "sideways"]);
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain("--tui-mode must be regular or fullscreen");
  });

  it("--export <file> [output] writes a session as HTML and exits; a missing file is an error", async () => {
    const script = tmp.write("script.json", JSON.stringify({ steps: [{ text: "EXPORTED-ANSWER-7" }] }));
    const sessions = join(tmp.path, "sessions");
    const made = await run([
      "-p",
      "export me",
      "--provider",
      "scripted",
      "--script",
      script,
      "--session-dir",
      sessions,
    ]);
    expect(made.code, made.stderr).to.equal(0);
    const file = readdirSync(sessions, { recursive: true, encoding: "utf8" }).find((f) =>
      f.endsWith(".jsonl"),
    );
    expect(file, "the print run saved its session").to.be.a("string");
    const output = join(tmp.path, "out.html");
    const exported = await run(["--export", join(sessions, file!), output]);
    expect(exported.code, exported.stderr).to.equal(0);
    expect(exported.stdout.trim()).to.equal(output);
    const html = readFileSync(output, "utf8");
    expect(html).to.contain("EXPORTED-ANSWER-7").and.contain("export me");
    const missing = await run(["--export", join(tmp.path, "nope.jsonl")]);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.contain("nope.jsonl does not exist");
    expect((await run(["--export"])).stderr).to.contain("--export needs a session file");
  });

  it("--offline installs no missing package and says so", async () => {
    tmp.write("agent/settings.json", JSON.stringify({ packages: ["npm:kc-test-package-that-is-not-there"] }));
    const result = await run(["--list-extensions", "--offline"]);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stderr).to.contain(
      "package npm:kc-test-package-that-is-not-there is not installed (run knightcode install",
    );
  });

  it("--skill and --prompt-template load files besides the ones found; missing paths and clashes are usage errors", async () => {
    const skill = tmp.write(
      "extra/pdf-helper/SKILL.md",
      "---\nname: pdf-helper\ndescription: Helps with PDF files\n---\nUse pdftotext.\n",
    );
    const template = tmp.write(
      "extra/review.md",
      "---\ndescription: review\n---\nReview the file $1 carefully\n",
    );
    const script = tmp.write(
      "script.json",
      JSON.stringify({
        steps: [
          {
            text: "ok",
            expect: {
              systemPromptContains: "pdf-helper",
              lastUserTextContains: "Review the file notes.md carefully",
            },
          },
        ],
      }),
    );
    const result = await run([
      "-p",
      "--provider",
      "scripted",
      "--script",
      script,
      "--no-session",
      "--skill",
      skill,
      "--prompt-template",
      template,
      "/review notes.md",
    ]);
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout.trim()).to.equal("ok");
    const missing = await run(["-p", "--skill", join(tmp.path, "nope"), "hi"]);
    expect(missing.code).to.equal(2);
    expect(missing.stderr).to.contain("--skill");
    expect(missing.stderr).to.contain("no such file or folder");
    const clash = await run(["-p", "--no-skills", "--skill", skill, "hi"]);
    expect(clash.code).to.equal(2);
    expect(clash.stderr).to.contain("--no-skills leaves out the built-in that loads --skill paths");
  });

  it("--theme loads a theme file that --use-theme can name", async () => {
    const theme = tmp.write("night.json", JSON.stringify({ name: "night", colors: { accent: 33 } }));
    const script = tmp.write("script.json", JSON.stringify({ steps: [] }));
    const base = ["--mode", "rpc", "--provider", "scripted", "--script", script, "--no-session"];
    const state = `${JSON.stringify({ id: "s", type: "get_state" })}\n`;
    const unknown = await runCli([...base, "--use-theme", "night"], {
      cwd: tmp.path,
      env: env(),
      stdin: state,
    });
    expect(unknown.stderr).to.contain('no theme named "night"');
    const known = await runCli([...base, "--use-theme", "night", "--theme", theme], {
      cwd: tmp.path,
      env: env(),
      stdin: state,
    });
    expect(known.code, known.stderr).to.equal(0);
    expect(known.stderr).to.not.contain("no theme named");
  });
});
