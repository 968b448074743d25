/**
 * Real pi packages published on npm, pinned as devDependencies (pi-subagents, pi-mcp-adapter, pi-web-access,
 * pi-prompt-template-model, pi-aliases, and from the survey of scripts/pi-packages-survey.ts @tmustier/pi-ralph-wiggum,
 * @juicesharp/rpiv-todo and pi-sync-system-theme), installed by `knightcode install` and loaded in RPC mode by the
 * built CLI against a local OpenAI-compatible server. Nothing is downloaded: all but pi-aliases are installed as the
 * folders npm put in node_modules (their dependencies resolve from there), pi-aliases from a tarball `npm pack`
 * writes into the temp dir, through the npm client with no network. What each registers is compared with what its source registers on
 * current pi (commands, tools, skills as `skill:<name>`, prompt templates), and one call of each runs.
 *
 * One agent folder serves every test of the file: the first load compiles the packages' TypeScript (over a minute
 * for pi-subagents on a busy machine) into the agent folder's cache, which the later runs reuse.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { textStream, toolCallStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { cliBin, runCli } from "../../helpers/cli.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { RpcProcess } from "../../helpers/rpc-process.js";
import { startTestServer, type TestServer, writeSse } from "../../helpers/sse-server.js";

/** Where npm installed a devDependency (some of these packages export no `./package.json` to resolve). */
const packageDir = (name: string) => fileURLToPath(new URL(`../../../node_modules/${name}`, import.meta.url));

type Record_ = { type: string; id?: string; [k: string]: unknown };
type Command = { name: string; description?: string; source: string; owner?: string };

/** An article long enough for the readability extraction pi-web-access runs on fetched pages. */
const PAGE = `<!doctype html><html><head><title>Fixture article</title></head><body><article><h1>Local fixture</h1>${Array.from(
  { length: 8 },
  (_, i) =>
    `<p>Paragraph ${i + 1} of the fixture article served from 127.0.0.1 for the fetch test. The answer to the fixture question is forty-two, and this sentence is here so the paragraph reads like prose.</p>`,
).join("")}</article></body></html>`;

describe("real pi packages from npm", function () {
  this.timeout(600_000);
  let server: TestServer;
  let dir: string;
  let agentDir: string;
  let project: string;
  let env: Record<string, string>;
  let commands: Command[];
  let tools: string[];
  let systemPrompt: string;

  before(async () => {
    server = await startTestServer();
    server.respond(async (req, res) => {
      if (req.path === "/page.html") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE);
        return;
      }
      const messages = req.body.messages as { role: string; content: unknown }[];
      const last = messages.at(-1)!;
      const text = typeof last.content === "string" ? last.content : JSON.stringify(last.content);
      if (last.role === "user" && text.includes("FETCH"))
        return writeSse(res, toolCallStream("call_f", "fetch_content", { url: `${server.url}/page.html` }));
      if (last.role === "user" && text.includes("AGENTS"))
        return writeSse(res, toolCallStream("call_s", "subagent", { action: "list" }));
      if (last.role === "user" && text.includes("TODO"))
        return writeSse(
          res,
          toolCallStream("call_t", "todo", { action: "create", subject: "Survey the packages" }),
        );
      if (last.role === "user" && text.includes("RALPH"))
        return writeSse(
          res,
          toolCallStream("call_r", "ralph_start", {
            name: "survey",
            taskContent: "# Survey\n- [ ] compare the packages-42",
            maxIterations: 3,
          }),
        );
      return writeSse(res, textStream("ok"));
    });
    dir = mkdtempSync(join(tmpdir(), "kc-pi-real-"));
    agentDir = join(dir, "agent");
    project = join(dir, "project");
    const home = join(dir, "home");
    mkdirSync(project, { recursive: true });
    // pi-web-access refuses loopback addresses unless its config allows them (its SSRF guard).
    mkdirSync(join(home, ".pi"), { recursive: true });
    writeFileSync(
      join(home, ".pi", "web-search.json"),
      JSON.stringify({ ssrf: { allowRanges: ["127.0.0.0/8"] } }),
    );
    writeLocalModels(agentDir, {
      baseUrl: `${server.url}/v1`,
      apiKey: "sk-test",
      models: [
        { id: "m1", contextWindow: 128000, maxTokens: 1024 },
        { id: "m2", contextWindow: 128000, maxTokens: 1024 },
      ],
    });
    // pi-subagents keeps run state under the temp folder: one inside `dir`, removed with it.
    mkdirSync(join(dir, "tmp"));
    env = {
      KNIGHTCODE_AGENT_DIR: agentDir,
      TMPDIR: join(dir, "tmp"),
      HOME: home,
      NO_COLOR: "1",
      npm_config_offline: "true",
      npm_config_audit: "false",
      npm_config_fund: "false",
      npm_config_update_notifier: "false",
      // pi-aliases' peer (pi itself) is what KnightCode stands in for: not installed.
      npm_config_legacy_peer_deps: "true",
    };
    for (const name of [
      "pi-subagents",
      "pi-mcp-adapter",
      "pi-web-access",
      "pi-prompt-template-model",
      "@tmustier/pi-ralph-wiggum",
      "@juicesharp/rpiv-todo",
      "pi-sync-system-theme",
    ]) {
      const installed = await runCli(["install", packageDir(name)], {
        cwd: project,
        env,
        timeoutMs: 120_000,
      });
      expect(installed.code, `${name}: ${installed.stderr}`).to.equal(0);
    }
    const tarball = execFileSync(
      "npm",
      ["pack", "--silent", "--pack-destination", dir, packageDir("pi-aliases")],
      {
        cwd: dir,
        env: { ...process.env, ...env },
      },
    )
      .toString()
      .trim()
      .split("\n")
      .at(-1)!;
    const aliases = await runCli(["install", `npm:pi-aliases@file:${join(dir, tarball)}`], {
      cwd: project,
      env,
      timeoutMs: 120_000,
    });
    expect(aliases.code, aliases.stderr).to.equal(0);

    // One RPC session with all five: what they register, and the tools and system prompt the model receives.
    const run = await runCli(["--mode", "rpc", "--provider", "local", "--model", "m1", "--no-session"], {
      cwd: project,
      env,
      timeoutMs: 400_000,
      stdin: [
        JSON.stringify({ id: "c", type: "get_commands" }),
        JSON.stringify({ id: "p", type: "prompt", message: "hello" }),
      ].join("\n"),
    });
    expect(run.code, run.stderr).to.equal(0);
    const records = run.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record_);
    const loadErrors = records.filter((r) => r.type === "extension_error");
    expect(loadErrors, run.stdout).to.deep.equal([]);
    commands = (records.find((r) => r.id === "c")!.data as { commands: Command[] }).commands;
    const request = server.requests.find((r) => r.path.endsWith("/chat/completions"))!;
    tools = (request.body.tools as { function: { name: string } }[]).map((t) => t.function.name);
    systemPrompt = String(request.body.messages[0].content);
  });

  after(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const named = (owner: string) => commands.filter((c) => c.owner?.includes(`/${owner}/`)).map((c) => c.name);
  const ofSource = (source: string) => commands.filter((c) => c.source === source).map((c) => c.name);

  /** An RPC process kept open, to send prompts one after another and watch the records. */
  function openRpc(): RpcProcess {
    const child = spawn(
      process.execPath,
      [cliBin, "--mode", "rpc", "--provider", "local", "--model", "m1", "--no-session"],
      {
        cwd: project,
        env: { ...process.env, ...env },
        stdio: ["pipe", "pipe", "pipe"],
      },
    );
    return new RpcProcess(child);
  }

  it("pi-subagents: its commands, its prompt templates, its skills as skill: commands and its subagent tool", () => {
    expect(named("pi-subagents")).to.include.members([
      "subagents",
      "run",
      "subagents-doctor",
      "subagents-models",
      "subagent-cost",
    ]);
    expect(ofSource("prompt")).to.include.members([
      "council",
      "gather-context-and-clarify",
      "parallel-cleanup",
      "parallel-research",
      "parallel-review",
      "review-loop",
    ]);
    expect(ofSource("skill")).to.include.members(["skill:council-mode", "skill:pi-subagents"]);
    expect(tools).to.include("subagent");
    expect(systemPrompt).to.contain('<skill name="pi-subagents"');
  });

  it("pi-mcp-adapter: its /mcp wins over the built-in one (kept as /builtin:mcp), its tools, its hidden skill", () => {
    expect(named("pi-mcp-adapter")).to.include.members(["mcp", "mcp-auth"]);
    expect(commands.find((c) => c.name === "builtin:mcp")?.owner).to.equal("builtin:mcp-command");
    expect(tools).to.include.members(["mcp", "mcpScript"]);
    // Its skill says disable-model-invocation: true: a command, not in the model's list.
    expect(ofSource("skill")).to.include("skill:mcp-scripting");
    expect(systemPrompt).to.not.contain('<skill name="mcp-scripting"');
  });

  it("pi-web-access: its commands and tools", () => {
    expect(named("pi-web-access")).to.include.members(["websearch", "curator", "search"]);
    expect(tools).to.include.members(["web_search", "fetch_content", "get_search_content"]);
  });

  it("pi-prompt-template-model: its commands and its skill", () => {
    expect(named("pi-prompt-template-model")).to.include.members(["chain-prompts", "prompt-tool"]);
    expect(ofSource("skill")).to.include("skill:prompt-template-authoring");
  });

  it("pi-aliases (from an npm tarball): /clear and /exit", () => {
    expect(named("pi-aliases")).to.have.members(["clear", "exit"]);
  });

  // What pi 1.6 registers for these three (scripts/pi-packages-survey.ts, docs/extensions.md).
  it("@tmustier/pi-ralph-wiggum: /ralph and /ralph-stop, its loop tools, and its skill (a SKILL.md at the package root)", () => {
    expect(named("pi-ralph-wiggum")).to.have.members(["ralph", "ralph-stop"]);
    expect(tools).to.include.members(["ralph_start", "ralph_done"]);
    expect(ofSource("skill")).to.include("skill:pi-ralph-wiggum");
    expect(systemPrompt).to.contain('<skill name="pi-ralph-wiggum"');
  });

  it("@juicesharp/rpiv-todo: /todos and its todo tool", () => {
    expect(named("rpiv-todo")).to.have.members(["todos"]);
    expect(tools).to.include("todo");
  });

  it("pi-sync-system-theme (it listens to pi's older session_switch): /system-theme and /system-theme-push", () => {
    expect(named("pi-sync-system-theme")).to.have.members(["system-theme", "system-theme-push"]);
  });

  it("runs the newly surveyed ones: the todo tool, a Ralph loop, /system-theme-push, and a new session", async () => {
    const rpc = openRpc();
    try {
      expect((await rpc.request("t", "prompt", { message: "TODO list" }, 300_000)).success).to.equal(true);
      const todo = await rpc.waitFor(
        (r) => r.type === "tool_execution_end" && r.toolCallId === "call_t",
        60_000,
      );
      expect(todo.isError, JSON.stringify(todo)).to.equal(false);
      expect(JSON.stringify(todo.result)).to.contain("Survey the packages");
      await rpc.waitFor((r) => r.type === "agent_settled", 60_000);

      // ralph_start writes the task file and queues the loop's first prompt as a follow-up, which reaches the model.
      expect((await rpc.request("r", "prompt", { message: "RALPH loop" }, 60_000)).success).to.equal(true);
      const started = await rpc.waitFor(
        (r) => r.type === "tool_execution_end" && r.toolCallId === "call_r",
        60_000,
      );
      expect(started.isError, JSON.stringify(started)).to.equal(false);
      expect(JSON.stringify(started.result)).to.contain('Started loop \\"survey\\" (max 3 iterations)');
      expect(readFileSync(join(project, ".ralph", "survey.md"), "utf8")).to.contain(
        "compare the packages-42",
      );
      await rpc.waitFor(
        () =>
          server.requests.some(
            (r) =>
              r.body?.messages?.at?.(-1)?.role === "user" &&
              JSON.stringify(r.body.messages.at(-1)).includes("compare the packages-42"),
          ),
        60_000,
      );
      await rpc.waitFor(() => rpc.records.filter((r) => r.type === "agent_settled").length >= 2, 60_000);

      // pi passes a command its arguments as one string, which this command indexes like an array: pi answers
      // with the usage notice too.
      const pushed = await rpc.request("h", "prompt", { message: "/system-theme-push dark" }, 60_000);
      expect(pushed.success, JSON.stringify(pushed)).to.equal(true);
      await rpc.waitFor(
        (r) =>
          r.type === "extension_ui_request" &&
          r.method === "notify" &&
          String(r.message).startsWith("Usage: /system-theme-push"),
        60_000,
      );
      // Its session_switch handler runs on the new session (session_start, reason new) without an error.
      expect((await rpc.request("n", "new_session", {}, 60_000)).success).to.equal(true);
      expect((await rpc.request("c2", "get_commands", {}, 60_000)).success).to.equal(true);
      expect(rpc.records.filter((r) => r.type === "extension_error")).to.deep.equal([]);
    } finally {
      rpc.kill();
    }
  });

  it("runs one call of each: fetch_content, the subagent tool (when it loads), /mcp, /skill:, and /exit ends the process", async () => {
    const rpc = openRpc();
    try {
      expect((await rpc.request("f", "prompt", { message: "FETCH the page" }, 300_000)).success).to.equal(
        true,
      );
      const fetched = await rpc.waitFor(
        (r) => r.type === "tool_execution_end" && r.toolCallId === "call_f",
        120_000,
      );
      expect(fetched.isError, JSON.stringify(fetched)).to.equal(false);
      expect(JSON.stringify(fetched.result), JSON.stringify(fetched.result)).to.contain("forty-two");
      await rpc.waitFor((r) => r.type === "agent_settled", 60_000);

      expect((await rpc.request("s", "prompt", { message: "AGENTS please" }, 60_000)).success).to.equal(true);
      const listed = await rpc.waitFor(
        (r) => r.type === "tool_execution_end" && r.toolCallId === "call_s",
        60_000,
      );
      expect(listed.isError, JSON.stringify(listed)).to.equal(false);
      expect(JSON.stringify(listed.result), JSON.stringify(listed.result)).to.contain("researcher");

      await rpc.waitFor(() => rpc.records.filter((r) => r.type === "agent_settled").length >= 2, 60_000);
      // The package's /mcp (not the built-in): it answers without reaching the model.
      const before = server.requests.length;
      const mcp = await rpc.request("m", "prompt", { message: "/mcp" }, 60_000);
      expect(mcp.success, JSON.stringify(mcp)).to.equal(true);
      expect(server.requests.length).to.equal(before);

      expect(
        (await rpc.request("k", "prompt", { message: "/skill:mcp-scripting how do I start?" }, 60_000))
          .success,
      ).to.equal(true);
      await rpc.waitFor(
        () =>
          server.requests.some((r) =>
            JSON.stringify(r.body?.messages?.at?.(-1) ?? "").includes('<skill name=\\"mcp-scripting\\"'),
          ),
        60_000,
      );

      rpc.send({ id: "x", type: "prompt", message: "/exit" });
      expect(await rpc.exit(60_000)).to.equal(0);
    } finally {
      rpc.kill();
    }
  });

  it("pi-prompt-template-model: a prompt template with a model: line switches to that model for its prompt", async () => {
    mkdirSync(join(agentDir, "prompts"), { recursive: true });
    writeFileSync(
      join(agentDir, "prompts", "review-fast.md"),
      "---\ndescription: Review with the second model\nmodel: local/m2\n---\nReview $1 carefully\n",
    );
    const rpc = openRpc();
    try {
      const listed = await rpc.request("c", "get_commands", {}, 300_000);
      const all = (listed.data as { commands: Command[] }).commands;
      // The package's command takes the name; KnightCode's own template command of the same file stays reachable.
      expect(
        all.find((c) => c.name === "review-fast")?.owner,
        JSON.stringify(rpc.records.slice(0, 5)),
      ).to.match(/pi-prompt-template-model/);
      expect(all.find((c) => c.name === "builtin:review-fast")?.owner).to.equal("builtin:prompt-templates");
      const before = server.requests.length;
      expect(
        (await rpc.request("r", "prompt", { message: "/review-fast parser.ts" }, 60_000)).success,
      ).to.equal(true);
      await rpc.waitFor(
        () => server.requests.slice(before).some((r) => r.path.endsWith("/chat/completions")),
        60_000,
      );
      const request = server.requests.slice(before).find((r) => r.path.endsWith("/chat/completions"))!;
      expect(request.body.model).to.equal("m2");
      expect(JSON.stringify(request.body.messages.at(-1))).to.contain("Review parser.ts carefully");
    } finally {
      rpc.kill();
    }
  });
});
