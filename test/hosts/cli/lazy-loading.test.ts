/**
 * What the built `knightcode` loads. The command runs with a module hook (record-loads.mjs) that writes down every
 * module URL Node loads; each built file is traced back to its sources through its source map, so the assertions
 * name source files whatever the bundler put where. The CLI runs from its ES module chunks here
 * (`KNIGHTCODE_CLI_BUNDLE=0`), the graph `import("@knightcodeai/cli")` loads; its single-file bundle is covered by
 * code-cache.test.ts.
 */

import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { cliBin } from "../../helpers/cli.js";
import { runProcess } from "../../helpers/processes.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const hook = fileURLToPath(new URL("./record-loads.mjs", import.meta.url));

/** Runs the CLI with the hook and returns the repository-relative source files behind the modules it loaded. */
function loadedSources(
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string; sources: string[] }> {
  const record = join(cwd, "loaded.txt");
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ["--import", hook, cliBin, ...args], {
      cwd,
      env: { ...process.env, ...env, KC_RECORD_LOADS: record },
      stdio: ["pipe", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new Error(`knightcode ${args.join(" ")} did not finish in time\n${stderr}`));
    }, 30_000);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      const urls = existsSync(record) ? readFileSync(record, "utf8").split("\n").filter(Boolean) : [];
      done({ code, stderr, sources: [...new Set(urls.flatMap(sourcesOf))].sort() });
    });
    child.stdin.end();
  });
}

function sourcesOf(url: string): string[] {
  if (!url.startsWith("file:")) return [];
  const file = fileURLToPath(url);
  const map = `${file}.map`;
  if (!existsSync(map)) return [relative(root, file)];
  const { sources } = JSON.parse(readFileSync(map, "utf8")) as { sources: string[] };
  return sources.map((source) => relative(root, resolve(dirname(map), source)));
}

const under = (sources: string[], folder: string) => sources.filter((s) => s.startsWith(folder));

describe("what knightcode loads", () => {
  const tmp = useTempDir("kc-loads-");
  const env = () => ({ KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent"), KNIGHTCODE_CLI_BUNDLE: "0" });

  it("runs print mode without the RPC mode, the interactive mode, the test kit or the terminal UI blocks", async () => {
    const script = tmp.write("s.json", JSON.stringify({ steps: [{ text: "hi" }] }));
    const run = await loadedSources(
      ["-p", "--no-session", "--provider", "scripted", "--script", script, "hello"],
      tmp.path,
      env(),
    );
    expect(run.code, run.stderr).to.equal(0);
    expect(run.sources).to.include("builtin-extensions/mode-print/print-mode.ts");
    // The other modes' factories run (they register a name and a loader), their code does not load.
    expect(under(run.sources, "builtin-extensions/mode-rpc/")).to.deep.equal([
      "builtin-extensions/mode-rpc/index.ts",
    ]);
    // No MCP server is configured: builtin:mcp registers its factory and loads none of its client.
    expect(under(run.sources, "builtin-extensions/mcp/")).to.deep.equal(["builtin-extensions/mcp/index.ts"]);
    expect(under(run.sources, "builtin-extensions/mode-interactive/")).to.deep.equal([
      "builtin-extensions/mode-interactive/index.ts",
    ]);
    expect(under(run.sources, "hosts/testing/")).to.deep.equal([]);
    expect(run.sources).not.to.include("testing.ts");
    expect(under(run.sources, "plugins/kit/tui/")).to.deep.equal([]);
    expect(run.sources).not.to.include("tui.ts");
    // builtin:worktrees provides its git service, whose engine loads on the first call that needs it.
    expect(under(run.sources, "builtin-extensions/worktrees/")).to.deep.equal([
      "builtin-extensions/worktrees/checkout-lock.ts",
      "builtin-extensions/worktrees/index.ts",
      "builtin-extensions/worktrees/service.ts",
    ]);
  });

  it("loads the YAML parser only when a run reads a frontmatter block", async () => {
    const script = tmp.write("s.json", JSON.stringify({ steps: [{ text: "hi" }] }));
    // HOME too: skills are also looked for in ~/.agents/skills.
    const runEnv = { ...env(), HOME: join(tmp.path, "home") };
    const args = ["-p", "--no-session", "--provider", "scripted", "--script", script, "hello"];
    const yaml = (sources: string[]) => [
      ...sources.filter((s) => s === "plugins/kit/frontmatter-yaml.ts"),
      ...under(sources, "node_modules/yaml/").slice(0, 1),
    ];
    // A template without a frontmatter block needs no parser.
    tmp.write("agent/prompts/plain.md", "Plain $1");
    const without = await loadedSources(args, tmp.path, runEnv);
    expect(without.code, without.stderr).to.equal(0);
    expect(without.sources).to.include("plugins/kit/frontmatter.ts");
    expect(yaml(without.sources)).to.deep.equal([]);
    tmp.write("agent/prompts/review.md", "---\ndescription: Review a file\n---\nReview $1");
    const withBlock = await loadedSources(args, tmp.path, runEnv);
    expect(withBlock.code, withBlock.stderr).to.equal(0);
    expect(yaml(withBlock.sources)).to.have.length(2);
  });

  it("keeps the test kit out of a print run whose extension does not import it", async () => {
    const script = tmp.write("s.json", JSON.stringify({ steps: [{ text: "hi" }] }));
    const ext = tmp.write(
      "ext.ts",
      `import { defineTool } from "@knightcodeai/cli";
       export default (kc: any) => { if (typeof defineTool !== "function") throw new Error("no kit"); };`,
    );
    const run = await loadedSources(
      ["-p", "--no-session", "-e", ext, "--provider", "scripted", "--script", script, "hello"],
      tmp.path,
      env(),
    );
    expect(run.code, run.stderr).to.equal(0);
    expect(run.sources).to.include("kernel/extensions/loader.ts");
    expect(under(run.sources, "hosts/testing/")).to.deep.equal([]);
    expect(run.sources).not.to.include("testing.ts");
    expect(under(run.sources, "builtin-extensions/mode-rpc/")).to.deep.equal([
      "builtin-extensions/mode-rpc/index.ts",
    ]);
    expect(under(run.sources, "plugins/kit/tui/")).to.deep.equal([]);
  });

  it("loads the terminal UI blocks for an extension that imports them", async () => {
    const ext = tmp.write(
      "ext.ts",
      `import { Key, Text } from "@knightcodeai/cli/tui";
       export default (kc: any) => { if (new Text("x", 0, 0).render(5)[0]?.trimEnd() !== "x" || Key.enter !== "enter") throw new Error("no tui"); };`,
    );
    const run = await loadedSources(["-e", ext, "--list-extensions"], tmp.path, env());
    expect(run.code, run.stderr).to.equal(0);
    expect(run.sources).to.include.members([
      "plugins/kit/tui/host.ts",
      "plugins/kit/tui/custom-editor.ts",
      "node_modules/@mariozechner/pi-tui/src/components/editor.ts",
    ]);
  });

  it("loads the test kit for an extension that imports it", async () => {
    const ext = tmp.write(
      "ext.ts",
      `import { createTestSession } from "@knightcodeai/cli/testing";
       export default (kc: any) => { if (typeof createTestSession !== "function") throw new Error("no test kit"); };`,
    );
    const run = await loadedSources(["-e", ext, "--list-extensions"], tmp.path, env());
    expect(run.code, run.stderr).to.equal(0);
    expect(run.sources).to.include("hosts/testing/test-session.ts");
  });

  it("loads the RPC mode's code when it runs RPC mode", async () => {
    const run = await loadedSources(["--mode", "rpc", "--no-session"], tmp.path, env());
    expect(run.code, run.stderr).to.equal(0);
    expect(run.sources).to.include.members([
      "builtin-extensions/mode-rpc/rpc-mode.ts",
      "builtin-extensions/mode-rpc/commands.ts",
    ]);
    expect(under(run.sources, "builtin-extensions/mode-print/")).to.deep.equal([
      "builtin-extensions/mode-print/index.ts",
    ]);
  });

  it("prints --help from the CLI and the built-in manifest alone", async () => {
    const run = await loadedSources(["--help"], tmp.path, env());
    expect(run.code, run.stderr).to.equal(0);
    expect(run.sources.filter((s) => !s.startsWith("hosts/cli/"))).to.deep.equal([
      "hosts/sdk/builtin-manifest.ts",
    ]);
  });

  it("runs a JSON turn with a read tool call and a settings file from the bundle without node:crypto, child_process, https, perf_hooks or worker_threads", async () => {
    // The bundled command as users run it (no KNIGHTCODE_CLI_BUNDLE=0): a --require hook writes down the Node
    // built-in modules the process loaded by the time it exits.
    const hook = tmp.write(
      "builtins.cjs",
      `process.on("exit", () => require("node:fs").writeFileSync(process.env.KC_BUILTINS, process.moduleLoadList.filter((m) => m.startsWith("NativeModule ")).map((m) => m.slice(13)).join("\\n")));`,
    );
    tmp.write("hello.txt", "hello\n");
    // A settings file is read too; its version (a SHA-256) is taken only when someone asks for it.
    tmp.write("agent/settings.json", JSON.stringify({ extensions: [] }));
    const script = tmp.write(
      "s.json",
      JSON.stringify({
        steps: [
          { toolCalls: [{ name: "read", arguments: { path: "hello.txt" } }] },
          { text: "it says hello" },
        ],
      }),
    );
    const list = join(tmp.path, "builtins.txt");
    const run = () =>
      runProcess(
        process.execPath,
        [
          "--require",
          hook,
          cliBin,
          "--mode",
          "json",
          "--no-session",
          "--provider",
          "scripted",
          "--script",
          script,
          "go",
        ],
        {
          cwd: tmp.path,
          env: { ...process.env, KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent"), KC_BUILTINS: list },
          what: "the JSON run",
        },
      );
    // The first run writes the code cache, the second starts from it: both load the same modules.
    for (let i = 0; i < 2; i++) {
      const result = await run();
      expect(result.code, result.stderr).to.equal(0);
      const events = result.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { type: string; toolName?: string; isError?: boolean });
      const toolEnd = events.find((e) => e.type === "tool_execution_end");
      expect(toolEnd?.toolName).to.equal("read");
      expect(toolEnd?.isError).to.equal(false);
      const loaded = readFileSync(list, "utf8").split("\n");
      expect(loaded).to.include("vm");
      expect(
        loaded.filter((m) =>
          ["crypto", "child_process", "https", "tls", "perf_hooks", "dns", "worker_threads"].includes(m),
        ),
      ).to.deep.equal([]);
    }
  });

  it("loads nothing but the command itself for --version", async () => {
    const run = await loadedSources(["--version"], tmp.path, env());
    expect(run.code, run.stderr).to.equal(0);
    expect(run.sources.filter((s) => !s.startsWith("hosts/cli/"))).to.deep.equal([]);
  });
});
