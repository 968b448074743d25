/** The `bash` core tool against real processes, and one turn through a real session with the scripted provider. */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTestSession, type TestSession, type TestSessionOptions } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { type BashToolDetails, createBashTool } from "../../../builtin-extensions/core-tools/bash.js";
import coreTools from "../../../builtin-extensions/core-tools/index.js";
import type { ExtensionAPI, ExtensionToolContext, ToolResult } from "../../../kernel/index.js";
import { gone, pidWritten } from "../../helpers/processes.js";
import { KEPT, SECRETS, withTestVariables } from "../../helpers/secret-env.js";

const textOf = (result: ToolResult) => (result.content[0] as { text: string }).text;

describe("core tool: bash", () => {
  let dir: string;
  const cleanup: string[] = [];
  const pids: number[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "kc-bash-tool-"));
  });
  afterEach(() => {
    for (const pid of pids.splice(0)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    for (const path of cleanup.splice(0)) rmSync(path, { force: true });
    rmSync(dir, { recursive: true, force: true });
  });

  const tool = createBashTool();
  const ctx = () => ({ cwd: dir }) as unknown as ExtensionToolContext;
  const run = async (
    params: { command: string; timeout?: number },
    options: { signal?: AbortSignal; onUpdate?: (p: ToolResult<BashToolDetails>) => void } = {},
  ) => {
    const result = await tool.execute("call-1", params, options.signal, options.onUpdate, ctx());
    if (result.details.fullOutputPath) cleanup.push(result.details.fullOutputPath);
    return result;
  };
  const failure = async (promise: Promise<unknown>): Promise<Error> => {
    try {
      await promise;
    } catch (error) {
      return error as Error;
    }
    throw new Error("expected the call to fail");
  };
  const readPid = () => {
    const pid = Number(readFileSync(join(dir, "pid"), "utf8").trim());
    // Never 0 or NaN: process.kill(0) would signal this test's own process group.
    expect(Number.isInteger(pid) && pid > 1, `pid file holds ${pid}`).to.equal(true);
    pids.push(pid);
    return pid;
  };

  it("declares itself as a destructive, open-world tool with guidelines that point at the file tools", () => {
    expect(tool.name).to.equal("bash");
    expect(tool.annotations).to.include({ destructiveHint: true, openWorldHint: true, readOnlyHint: false });
    expect(tool.promptSnippet).to.be.a("string").and.not.equal("");
    expect(tool.promptGuidelines!.join(" ")).to.match(/read, edit, write/);
    expect(tool.description).to.match(/2000 lines/);
  });

  it("returns the output, and names a non-zero exit code", async () => {
    const ok = await run({ command: "echo hello" });
    expect(textOf(ok)).to.equal("hello");
    expect(ok.details).to.deep.equal({ exitCode: 0, truncated: false, timedOut: false });
    const failed = await run({ command: "echo oops >&2; exit 3" });
    expect(textOf(failed)).to.equal("oops\n\n[Exit code: 3]");
    expect(failed.details.exitCode).to.equal(3);
    expect(textOf(await run({ command: "true" }))).to.equal("(no output)");
  });

  it("merges stderr with stdout in arrival order", async () => {
    const result = await run({ command: "echo a; sleep 0.05; echo b >&2; sleep 0.05; echo c" });
    expect(textOf(result)).to.equal("a\nb\nc");
  });

  it("runs in the session's working folder", async () => {
    const result = await run({ command: "pwd; echo x > made.txt" });
    expect(textOf(result)).to.equal(dir);
    expect(readFileSync(join(dir, "made.txt"), "utf8")).to.equal("x\n");
  });

  it("streams partial output through onUpdate, at most one update per 100 ms plus a final one", async () => {
    const updates: { at: number; text: string }[] = [];
    const started = Date.now();
    const result = await run(
      { command: "for i in 1 2 3 4 5 6 7; do echo line$i; sleep 0.05; done" },
      { onUpdate: (p) => updates.push({ at: Date.now(), text: textOf(p) }) },
    );
    const elapsed = Date.now() - started;
    expect(textOf(result)).to.equal([1, 2, 3, 4, 5, 6, 7].map((i) => `line${i}`).join("\n"));
    expect(updates.length).to.be.at.least(3);
    expect(updates[0]!.text).to.match(/^line1/);
    expect(updates.at(-1)!.text).to.equal(textOf(result));
    // Throttled: at most one update per started 100 ms, plus the final one. Counting instead of measuring each gap
    // keeps the check true on a loaded machine, where a late callback makes the next gap look short.
    expect(updates.length).to.be.at.most(Math.ceil(elapsed / 100) + 1);
    const texts = updates.map((u) => u.text.length);
    expect(texts).to.deep.equal([...texts].sort((a, b) => a - b));
  });

  it("bounds a 10 MB output, with the truncation notice and the full output in a file", async () => {
    const started = Date.now();
    let updates = 0;
    const result = await run(
      { command: "head -c 10485760 /dev/zero | tr '\\0' 'a' | fold -w 100" },
      { onUpdate: () => updates++ },
    );
    expect(Date.now() - started).to.be.below(15_000);
    const text = textOf(result);
    expect(Buffer.byteLength(text)).to.be.below(52 * 1024);
    const path = result.details.fullOutputPath!;
    expect(result.details.truncated).to.equal(true);
    expect(text).to.match(
      new RegExp(`\\[Output truncated: showing the last \\d+ of 104858 lines\\. Full output: ${path}\\]$`),
    );
    const shown = Number(/showing the last (\d+)/.exec(text)![1]);
    expect(shown).to.equal(text.split("\n\n")[0]!.split("\n").length);
    expect(statSync(path).size).to.equal(10485760 + 104857);
    expect(updates).to.be.at.least(1);
  });

  it("kills the command and its background jobs on timeout, and fails with the output tail", async () => {
    const started = Date.now();
    const error = await failure(
      run({ command: `sleep 30 & echo $! > ${dir}/pid; echo waiting; sleep 30`, timeout: 1 }),
    );
    expect(Date.now() - started).to.be.below(5_000);
    expect(error.message).to.equal("waiting\n\n[Command timed out after 1s]");
    expect(await gone(readPid())).to.equal(true);
  });

  it("kills the command and its background jobs on abort", async () => {
    const controller = new AbortController();
    const pending = failure(
      run(
        { command: `sleep 30 & echo $! > ${dir}/pid; echo waiting; sleep 30` },
        { signal: controller.signal },
      ),
    );
    await pidWritten(dir);
    controller.abort();
    const error = await pending;
    expect(error.message).to.match(/\[Command aborted\]$/);
    expect(await gone(readPid())).to.equal(true);
  });

  describe("environment", () => {
    withTestVariables();
    const sessions: TestSession[] = [];
    afterEach(async () => {
      for (const t of sessions.splice(0)) await t.dispose();
    });
    const open = async (options: TestSessionOptions): Promise<TestSession> => {
      const t = await createTestSession(options);
      sessions.push(t);
      return t;
    };

    it("commands do not see variables that look like secrets", async () => {
      const result = await run({ command: "env" });
      for (const value of Object.values(SECRETS)) expect(textOf(result)).not.to.contain(value);
      for (const [name, value] of Object.entries(KEPT)) expect(textOf(result)).to.contain(`${name}=${value}`);
    });

    it("shellEnv include/exclude apply, and the spawn hook sees the environment after them", async () => {
      let seen: NodeJS.ProcessEnv = {};
      const configured = createBashTool(undefined, {
        shellEnv: () => ({ include: ["KC_TEST_GITHUB_TOKEN"], exclude: ["KC_TEST_PLAIN"] }),
        spawnHook: (context) => {
          seen = context.env;
          return { ...context, env: { ...context.env, KC_TEST_ADDED_BY_HOOK: "hooked" } };
        },
      });
      const result = await configured.execute("c", { command: "env" }, undefined, undefined, ctx());
      expect(textOf(result)).to.contain("KC_TEST_GITHUB_TOKEN=secret-5");
      expect(textOf(result)).to.contain("KC_TEST_ADDED_BY_HOOK=hooked");
      expect(textOf(result)).not.to.contain("KC_TEST_PLAIN=");
      expect(textOf(result)).not.to.contain("sk-secret-1");
      expect(seen).not.to.have.property("KC_TEST_PROVIDER_API_KEY");
    });

    it("the built-in bash tool reads the shellEnv settings", async () => {
      const h = await open({
        script: [{ toolCalls: [{ name: "bash", arguments: { command: "env" } }] }, { text: "done" }],
        extensions: [coreTools],
        settings: { shellEnv: { include: ["KC_TEST_*_TOKEN"] } },
      });
      await h.session.prompt("go");
      const output = textOf(h.eventsOfType("tool_execution_end")[0]!.result as ToolResult);
      expect(output).to.contain("KC_TEST_GITHUB_TOKEN=secret-5");
      expect(output).not.to.contain("sk-secret-1");

      // The person's own commands (`!cmd`, RPC `bash`) follow the same settings.
      const own = await h.session.executeBash("env", { excludeFromContext: true });
      expect(own.output).to.contain("KC_TEST_GITHUB_TOKEN=secret-5");
      expect(own.output).not.to.contain("sk-secret-1");
      expect(own.output).to.contain("KC_TEST_PLAIN=plain-value");
    });
  });

  describe("through a session", () => {
    const sessions: TestSession[] = [];
    afterEach(async () => {
      for (const t of sessions.splice(0)) await t.dispose();
    });
    const open = async (options: TestSessionOptions): Promise<TestSession> => {
      const t = await createTestSession(options);
      sessions.push(t);
      return t;
    };
    const withBash = (kc: ExtensionAPI) => {
      kc.registerTool(createBashTool());
    };

    it("runs a bash call in the session's folder and returns its output to the model", async () => {
      const h = await open({
        script: [
          {
            toolCalls: [
              { name: "bash", arguments: { command: "echo made > out.txt; cat out.txt; sleep 0.3; exit 2" } },
            ],
          },
          { text: "done" },
        ],
        extensions: [withBash],
      });
      await h.session.prompt("go");
      expect(readFileSync(join(h.cwd, "out.txt"), "utf8")).to.equal("made\n");
      const end = h.eventsOfType("tool_execution_end")[0]!;
      expect(end).to.include({ toolName: "bash", isError: false });
      const result = end.result as ToolResult<BashToolDetails>;
      expect(textOf(result)).to.equal("made\n\n[Exit code: 2]");
      expect(result.details).to.deep.include({ exitCode: 2, timedOut: false, truncated: false });
      const updates = h.eventsOfType("tool_execution_update");
      expect(updates.length).to.be.at.least(1);
      expect((updates[0]!.partialResult as ToolResult).content[0] as { text: string }).to.have.property(
        "text",
        "made",
      );
    });

    it("turns a timeout and invalid arguments into error results", async () => {
      const h = await open({
        script: [
          {
            toolCalls: [
              { name: "bash", arguments: { command: "echo slow; sleep 30", timeout: 0.5 } },
              { name: "bash", arguments: { cmd: "echo wrong" } },
            ],
          },
          { text: "done" },
        ],
        extensions: [withBash],
      });
      await h.session.prompt("go");
      const ends = h.eventsOfType("tool_execution_end");
      expect(ends).to.have.length(2);
      // The invalid call fails at validation, before the slow one ends.
      const timedOut = ends.find((e) => /timed out/.test(textOf(e.result as ToolResult)));
      const invalid = ends.find((e) => e !== timedOut);
      expect(timedOut).to.include({ toolName: "bash", isError: true });
      expect(textOf(timedOut!.result as ToolResult)).to.equal("slow\n\n[Command timed out after 0.5s]");
      expect(invalid).to.include({ isError: true });
      expect(textOf(invalid!.result as ToolResult)).to.match(/command/);
    });
  });
});
