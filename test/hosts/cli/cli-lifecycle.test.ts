/**
 * How the `knightcode` command ends, and what it offers, as a user meets it (the built command as a child
 * process): a reader that goes away, runs whose extensions leave handles open or ask to shut down, `--resume`,
 * and `--help` listing every option the parser accepts.
 */
import { spawn } from "node:child_process";
import { join } from "node:path";
import { expect } from "chai";
import { KNOWN_OPTIONS } from "../../../hosts/cli/args.js";
import { SessionManager } from "../../../plugins/session-store/session-manager.js";
import { cliBin, runCli } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

/** Runs knightcode with its stdout closed at once, as `knightcode ... | head -1` does once head has its line. */
function runWithClosedStdout(
  args: string[],
  options: { cwd: string; env: Record<string, string> },
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliBin, ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
    });
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`knightcode ${args.join(" ")} did not end\n${stderr}`));
    }, 30_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
    child.stdin.end();
  });
}

/** Leaves a timer and a file watcher open, and offers /bye, which asks the process to end. */
const LEAKY = `import { watch } from "node:fs";
export default function (kc: any) {
  setInterval(() => {}, 1000);
  watch(process.cwd(), () => {});
  kc.registerCommand("bye", { description: "leave", handler: async (_a: string, ctx: any) => ctx.shutdown() });
}
`;

describe("knightcode's ends and options", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-cli-life-");
  const env = () => ({ KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") });
  const script = (steps: unknown[]) => tmp.write("script.json", JSON.stringify({ steps }));

  it("lists every option the parser accepts in --help", async () => {
    const { code, stdout } = await runCli(["--help"], { cwd: tmp.path, env: env() });
    expect(code).to.equal(0);
    const options = stdout.slice(stdout.indexOf("Options:"), stdout.indexOf("Modes:"));
    const listed = new Set(options.match(/(?<=^|[\s,])--?[a-z][a-z-]*/gm));
    expect([...KNOWN_OPTIONS].filter((o) => !listed.has(o))).to.deep.equal([]);
    expect([...listed].filter((o) => !KNOWN_OPTIONS.includes(o))).to.deep.equal([]);
  });

  describe("a reader that goes away ends the command quietly", () => {
    it("--list-models with thousands of models", async () => {
      const ext = tmp.write(
        "models.ts",
        `export default (kc: any) => kc.registerProvider("many", { api: "openai-completions", baseUrl: "http://127.0.0.1:9",
          apiKey: "k", models: Array.from({ length: 5000 }, (_, i) => ({ id: "model-" + i, name: "Model " + i })) });`,
      );
      const { code, stderr } = await runWithClosedStdout(["--list-models", "-e", ext], {
        cwd: tmp.path,
        env: env(),
      });
      expect(stderr).to.equal("");
      expect(code).to.equal(0);
    });

    it("--help and --list-extensions", async () => {
      const ext = tmp.write(
        "commands.ts",
        `export default (kc: any) => { for (let i = 0; i < 3000; i++) kc.registerCommand("c" + i, { description: "x".repeat(80), handler: async () => {} }); };`,
      );
      for (const args of [["--help"], ["--help", "-e", ext], ["--list-extensions", "-e", ext]]) {
        const { code, stderr } = await runWithClosedStdout(args, { cwd: tmp.path, env: env() });
        expect(stderr, args.join(" ")).to.equal("");
        expect(code, args.join(" ")).to.equal(0);
      }
    });

    it("print and JSON runs with a long answer", async () => {
      const long = script([{ text: "line\n".repeat(200_000) }]);
      for (const mode of ["print", "json"]) {
        const { code, stderr } = await runWithClosedStdout(
          ["--mode", mode, "--provider", "scripted", "--script", long, "--no-session", "go"],
          { cwd: tmp.path, env: env() },
        );
        expect(stderr, mode).to.not.match(/\n\s+at |Error/);
        expect(code, mode).to.be.oneOf([0, 1]);
      }
    });
  });

  it("ends print and JSON runs although an extension left a timer and a file watcher open", async () => {
    const ext = tmp.write("leaky.ts", LEAKY);
    const steps = script([{ text: "the answer" }]);
    const common = ["-e", ext, "--provider", "scripted", "--script", steps, "--no-session", "go"];
    const print = await runCli(["-p", ...common], { cwd: tmp.path, env: env(), timeoutMs: 20_000 });
    expect(print.code, print.stderr).to.equal(0);
    expect(print.stdout).to.equal("the answer\n");
    const json = await runCli(["--mode", "json", ...common], {
      cwd: tmp.path,
      env: env(),
      timeoutMs: 20_000,
    });
    expect(json.code, json.stderr).to.equal(0);
    expect(json.stdout).to.contain('"agent_settled"');
  });

  it("ends a JSON run after the current prompt when an extension calls ctx.shutdown()", async () => {
    const ext = tmp.write("leaky.ts", LEAKY);
    const steps = script([{ text: "first" }, { text: "never asked" }]);
    const result = await runCli(
      [
        "--mode",
        "json",
        "-e",
        ext,
        "--provider",
        "scripted",
        "--script",
        steps,
        "--no-session",
        "one",
        "/bye",
        "two",
      ],
      { cwd: tmp.path, env: env(), timeoutMs: 20_000 },
    );
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.contain('"content":"one"');
    expect(result.stdout).to.not.contain('"content":"two"');
  });

  it("leaves the interactive mode when an extension calls ctx.shutdown()", async () => {
    const ext = tmp.write("leaky.ts", LEAKY);
    const steps = script([]);
    const child = spawn(
      process.execPath,
      [
        cliBin,
        "--mode",
        "interactive",
        "-e",
        ext,
        "--provider",
        "scripted",
        "--script",
        steps,
        "--no-session",
      ],
      { cwd: tmp.path, env: { ...process.env, ...env() } },
    );
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    child.stdin.write("/bye\n");
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const code = await exited;
    clearTimeout(timer);
    expect(code).to.equal(0);
  });

  describe("--resume", () => {
    it("opens the interactive mode's session picker and resumes the chosen session", async () => {
      const steps = script([{ text: "first answer" }]);
      const scripted = ["--provider", "scripted", "--script", steps];
      const earlier = await runCli(["-p", ...scripted, "remember the walrus"], { cwd: tmp.path, env: env() });
      expect(earlier.code, earlier.stderr).to.equal(0);
      const unnamed = await runCli(["-p", ...scripted, "an unnamed one"], { cwd: tmp.path, env: env() });
      expect(unnamed.code, unnamed.stderr).to.equal(0);
      // Name the first session and label one of its entries, as /name and /label would.
      const walrus = SessionManager.list({ cwd: tmp.path, agentDir: join(tmp.path, "agent") }).find(
        (s) => s.firstMessage === "remember the walrus",
      )!;
      const log = SessionManager.open(walrus.path);
      log.appendLabel(log.getEntries().find((e) => e.type === "message")!.id, "walrus facts");
      log.appendSessionInfo("Walrus research");
      log.close();
      const child = spawn(process.execPath, [cliBin, "-r", ...scripted], {
        cwd: tmp.path,
        env: { ...process.env, ...env(), NO_COLOR: "1" },
      });
      let stdout = "";
      child.stdout.on("data", (d) => {
        stdout += d;
      });
      const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      const waitFor = async (text: string) => {
        const until = Date.now() + 15_000;
        while (!stdout.includes(text)) {
          if (Date.now() > until) throw new Error(`no "${text}" in:\n${stdout}`);
          await new Promise((r) => setTimeout(r, 20));
        }
      };
      await waitFor("Resume which session");
      // Newest first: the unnamed session ran last. A named session shows its name, then its labels.
      expect(stdout, stdout).to.match(/ {2}1\. an unnamed one 2 messages/);
      expect(stdout).to.match(/ {2}2\. Walrus research \[walrus facts\] 2 messages/);
      child.stdin.write("2\n");
      await waitFor(`(resumed ${walrus.id})`);
      child.stdin.write("/quit\n");
      const code = await exited;
      clearTimeout(timer);
      expect(code).to.equal(0);
    });

    it("refuses to run with print mode", async () => {
      const result = await runCli(["-r", "-p", "hi"], { cwd: tmp.path, env: env() });
      expect(result.code).to.equal(2);
      expect(result.stderr).to.contain("--resume opens the interactive mode's session picker");
    });
  });
});
