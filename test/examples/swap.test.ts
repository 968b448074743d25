/**
 * Swapping built-ins: switching off `builtin:core-tools` by settings, replacing the built-in `bash` with
 * examples/extensions/sandboxed-bash.ts, and the built-in `openai` provider with examples/extensions/my-provider.ts,
 * in the test kit and in the built CLI (print, JSON and RPC mode). Run `npm run build` first.
 */

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RpcClient } from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { FIXED_ANSWER, MODEL_ID } from "../../examples/extensions/my-provider.js";
import sandboxedBash, { refusal } from "../../examples/extensions/sandboxed-bash.js";
import { sessionInternals } from "../../hosts/sdk/session-internals.js";
import { cliBin, runCli } from "../helpers/cli.js";
import { useTempDir } from "../helpers/temp-dir.js";

const examples = fileURLToPath(new URL("../../examples/extensions/", import.meta.url));
const sandboxedBashPath = join(examples, "sandboxed-bash.ts");
const myProviderPath = join(examples, "my-provider.ts");
const printWithUsagePath = join(examples, "print-with-usage.ts");
const helloScript = fileURLToPath(new URL("../../examples/scripts/hello.json", import.meta.url));
const CORE_TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"];

describe("example: swapping built-ins", () => {
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  describe("in a test session", () => {
    it("settings `-builtin:core-tools` remove the core tools; sandboxed-bash then provides bash", async () => {
      t = await createTestSession({ settings: { extensions: ["-builtin:core-tools"] } });
      const names = sessionInternals(t.session)
        .tools.getAllTools()
        .map((tool) => tool.name);
      expect(names).to.not.include.any.members(CORE_TOOLS);
      await t.dispose();

      t = await createTestSession({
        settings: { extensions: ["-builtin:core-tools"] },
        extensions: [sandboxedBash],
        script: [
          { toolCalls: [{ name: "bash", arguments: { command: "cat /etc/passwd" } }] },
          { text: "done" },
        ],
      });
      const tools = sessionInternals(t.session).tools.getAllTools();
      expect(tools.map((tool) => tool.name).filter((name) => CORE_TOOLS.includes(name))).to.deep.equal([
        "bash",
      ]);
      await t.prompt("read the passwords");
      const [call] = t.toolCalls();
      expect(call!.isError).to.equal(true);
      expect((call!.result!.content[0] as { text: string }).text).to.contain(
        "Refused by sandboxed-bash: /etc/passwd is outside the project",
      );
    });

    it("replaces the built-in bash without disabling core-tools, and runs commands inside the project", async () => {
      t = await createTestSession({
        extensions: [sandboxedBashPath],
        script: [
          { toolCalls: [{ name: "bash", arguments: { command: "echo inside > f.txt && cat f.txt" } }] },
          { toolCalls: [{ name: "bash", arguments: { command: "cd .. && ls" } }] },
          { text: "done" },
        ],
      });
      const bash = sessionInternals(t.session)
        .tools.getAllTools()
        .find((tool) => tool.name === "bash")!;
      expect(bash.owner).to.match(/sandboxed-bash\.ts$/);
      expect(
        sessionInternals(t.session)
          .tools.getAllTools()
          .map((tool) => tool.name),
      ).to.include.members(["read", "write", "edit"]);
      await t.prompt("go");
      const [ok, outside] = t.toolCalls();
      expect(ok!.isError).to.equal(false);
      expect((ok!.result!.content[0] as { text: string }).text.trim()).to.equal("inside");
      expect(outside!.isError).to.equal(true);
      expect((outside!.result!.content[0] as { text: string }).text).to.contain("cd .. leaves the project");
    });

    it("states the sandbox rule", () => {
      const cwd = "/work/project";
      expect(refusal("ls -la src && cat ./README.md", cwd)).to.equal(undefined);
      expect(refusal("cd src && ls", cwd)).to.equal(undefined);
      expect(refusal("grep x src 2>/dev/null", cwd)).to.equal(undefined);
      expect(refusal("cat /work/project/src/a.ts", cwd)).to.equal(undefined);
      expect(refusal("cd ../other", cwd)).to.contain("leaves the project");
      expect(refusal("ls; cd /tmp", cwd)).to.contain("leaves the project");
      expect(refusal("cd", cwd)).to.contain("home folder");
      expect(refusal("cat ~/.ssh/id_rsa", cwd)).to.contain("outside the project");
      expect(refusal('cp x "/etc/hosts"', cwd)).to.contain("/etc/hosts is outside");
      expect(refusal("echo hi >/tmp/x", cwd)).to.contain("/tmp/x is outside");
    });
  });

  describe("in the built CLI", () => {
    const tmp = useTempDir("kc-swap-");
    const env = () => ({ KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") });

    it("my-provider answers --provider openai in print mode", async () => {
      const result = await runCli(
        ["-e", myProviderPath, "-p", "--provider", "openai", "--model", MODEL_ID, "hi"],
        {
          cwd: tmp.path,
          env: { ...env(), OPENAI_API_KEY: "" },
        },
      );
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.equal(`${FIXED_ANSWER}\n`);
    });

    it("print-with-usage replaces the built-in print mode, with the built-in switched off or not", async () => {
      for (const settings of [{}, { extensions: ["-builtin:mode-print"] }]) {
        mkdirSync(join(tmp.path, "agent"), { recursive: true });
        writeFileSync(join(tmp.path, "agent", "settings.json"), JSON.stringify(settings));
        const result = await runCli(
          ["-e", printWithUsagePath, "--provider", "scripted", "--script", helloScript, "-p", "hi"],
          { cwd: tmp.path, env: env() },
        );
        expect(result.code, result.stderr).to.equal(0);
        expect(result.stdout).to.match(/^Hello! This is a scripted answer/);
        expect(result.stdout.trim().split("\n"), "stdout holds the answer alone").to.have.length(1);
        expect(result.stderr).to.match(/^usage: \d+ in, \d+ out, \d+ cached; \$\d+\.\d{6}$/m);
      }
      // Without the replacement and with the built-in off, there is no print mode to run.
      const none = await runCli(["--provider", "scripted", "--script", helloScript, "-p", "hi"], {
        cwd: tmp.path,
        env: env(),
      });
      expect(none.code).to.not.equal(0);
      expect(none.stderr).to.contain("print");
    });

    it("my-provider lists its model in place of the built-in catalogue", async () => {
      const result = await runCli(["-e", myProviderPath, "--list-models", "openai"], {
        cwd: tmp.path,
        env: env(),
      });
      expect(result.code, result.stderr).to.equal(0);
      expect(result.stdout).to.match(new RegExp(`^openai\\s+${MODEL_ID}\\s`, "m"));
    });

    it("my-provider answers --provider openai in RPC mode", async () => {
      // RpcClient writes each command as a JSON line on the CLI's stdin; the prompt must settle before asking.
      const client = RpcClient.start({
        bin: cliBin,
        args: ["-e", myProviderPath, "--provider", "openai", "--model", MODEL_ID, "--no-session"],
        cwd: tmp.path,
        env: { ...process.env, ...env() },
        commandTimeoutMs: 20_000,
      });
      try {
        expect(await client.promptAndWait("hi")).to.deep.equal({ aborted: false });
        expect(await client.getLastAssistantText()).to.deep.equal({ text: FIXED_ANSWER });
      } finally {
        expect(await client.close()).to.equal(0);
      }
    });

    it("sandboxed-bash refuses a command outside the project in a scripted JSON-mode run", async () => {
      const script = tmp.write(
        "script.json",
        JSON.stringify({
          steps: [{ toolCalls: [{ name: "bash", arguments: { command: "ls /etc" } }] }, { text: "done" }],
        }),
      );
      const project = join(tmp.path, "project");
      tmp.write("project/README.md", "hello\n");
      const result = await runCli(
        [
          "-e",
          sandboxedBashPath,
          "--mode",
          "json",
          "--provider",
          "scripted",
          "--script",
          script,
          "list /etc",
        ],
        { cwd: project, env: env() },
      );
      expect(result.code, result.stderr).to.equal(0);
      const end = result.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line))
        .find((r) => r.type === "tool_execution_end");
      expect(end, result.stdout).to.deep.include({ toolName: "bash", isError: true });
      expect(end.result.content[0].text).to.contain("Refused by sandboxed-bash: /etc is outside the project");
    });
  });
});
