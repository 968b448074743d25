/**
 * Plan mode (builtin:plan-mode) end to end over RPC: the built `knightcode --mode rpc` as a child process against
 * a local OpenAI Chat Completions server on 127.0.0.1 that plays the model and records every request. While planning
 * only read-only tools are offered and a changing call is refused (write, a bash redirection); the review arrives as
 * an `extension_ui_request` select; approval restores the tools and carries the plan into the run as a user message,
 * an edit sends the edited plan, "Keep planning" stays in plan mode; `[DONE:n]` moves the steps along.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import {
  EDIT_TITLE,
  PLAN_MODE,
  REVIEW_CHOICES,
  REVIEW_TITLE,
} from "../../builtin-extensions/plan-mode/index.js";
import { textStream, toolCallStream } from "../builtin-extensions/providers/openai-compatible/fixtures.js";
import { cliBin, runCli } from "../helpers/cli.js";
import { writeLocalModels } from "../helpers/local-models.js";
import { type Record_, RpcProcess } from "../helpers/rpc-process.js";
import { type RecordedRequest, startTestServer, type TestServer, writeSse } from "../helpers/sse-server.js";
import { useTempDir } from "../helpers/temp-dir.js";

type Msg = { role: string; content: unknown };

const toolNames = (r: RecordedRequest | undefined): string[] =>
  ((r?.body?.tools ?? []) as { function: { name: string } }[]).map((t) => t.function.name);
const text = (m: Msg | undefined): string =>
  typeof m?.content === "string"
    ? m.content
    : Array.isArray(m?.content)
      ? (m.content as { text?: string }[]).map((p) => p.text ?? "").join("")
      : "";
const messages = (r: RecordedRequest | undefined): Msg[] => (r?.body?.messages ?? []) as Msg[];
const system = (r: RecordedRequest | undefined): string =>
  text(messages(r).find((m) => m.role === "system" || m.role === "developer"));
const lastUser = (r: RecordedRequest | undefined): string =>
  text([...messages(r)].reverse().find((m) => m.role === "user"));
const toolResults = (r: RecordedRequest | undefined): string =>
  JSON.stringify(messages(r).filter((m) => m.role === "tool"));

describe("plan mode over RPC", function () {
  this.timeout(60_000);
  let model: TestServer;
  const running: RpcProcess[] = [];
  // Registered before useTempDir's: the processes end before their folder goes.
  afterEach(async () => {
    await Promise.all(running.splice(0).map((p) => p.end(5_000)));
    await model.close();
  });
  const tmp = useTempDir("kc-plan-rpc-");
  let project: string;
  beforeEach(async () => {
    model = await startTestServer();
    const agentDir = join(tmp.path, "agent");
    writeLocalModels(agentDir, {
      baseUrl: `${model.url}/v1`,
      apiKey: "LOCAL_KEY",
      models: [{ id: "m", contextWindow: 32_000, maxTokens: 1024 }],
    });
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ retry: { enabled: false } }));
    project = join(tmp.path, "project");
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, "notes.txt"), "greet the user\n");
  });

  function start(args: string[]): RpcProcess {
    const child = spawn(
      process.execPath,
      [cliBin, "--mode", "rpc", "--no-session", "--provider", "local", "--model", "m", ...args],
      {
        cwd: project,
        env: { ...process.env, KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent"), LOCAL_KEY: "sk-local" },
      },
    );
    const p = new RpcProcess(child);
    running.push(p);
    return p;
  }

  const dialog = (p: RpcProcess, method: string, seen: Set<Record_>) =>
    p
      .waitFor((r) => r.type === "extension_ui_request" && r.method === method && !seen.has(r))
      .then((r) => {
        seen.add(r);
        return r as Record_ & { id: string; title: string; options?: string[]; prefill?: string };
      });
  const planStates = (p: RpcProcess) =>
    p.records
      .filter(
        (r) => r.type === "entry_appended" && (r.entry as { customType?: string }).customType === PLAN_MODE,
      )
      .map((r) => (r.entry as { data: { phase: string; steps: { step: string; status: string }[] } }).data);
  const settled = (p: RpcProcess, n: number) =>
    p.waitFor(() => p.records.filter((r) => r.type === "agent_settled").length >= n);

  it("--plan: read-only tools, a write and a redirect refused, the review as a select; approval restores the tools and carries the plan into the run", async () => {
    const plan = "Plan:\n1. Create hello.txt with a greeting\n2. Report back";
    model.respondInOrder(
      (_r, res) => writeSse(res, toolCallStream("call_1", "write", { path: "hello.txt", content: "hi" })),
      (_r, res) => writeSse(res, toolCallStream("call_2", "bash", { command: "echo hi > hello.txt" })),
      (_r, res) => writeSse(res, toolCallStream("call_3", "bash", { command: "cat notes.txt | wc -l" })),
      (_r, res) => writeSse(res, textStream(`I read the notes.\n\n${plan}`)),
      (_r, res) => writeSse(res, toolCallStream("call_4", "write", { path: "hello.txt", content: "hello" })),
      (_r, res) => writeSse(res, textStream("Created hello.txt. [DONE:1] [DONE:2]")),
    );
    // --tools is applied after the session starts: plan mode still has the last word while planning, and it is
    // what comes back afterwards (grep, find and ls were only for planning).
    const p = start(["--plan", "--tools", "read,bash,edit,write"]);
    const seen = new Set<Record_>();
    expect((await p.request("1", "prompt", { message: "greet people" })).success).to.equal(true);

    const review = await dialog(p, "select", seen);
    expect(review.title).to.equal(REVIEW_TITLE);
    expect(review.options).to.deep.equal([REVIEW_CHOICES.approve, REVIEW_CHOICES.edit, REVIEW_CHOICES.keep]);
    // While planning: only read-only tools were offered, with the planning instructions.
    const planning = model.requests.slice(0, 4);
    for (const r of planning) {
      expect(toolNames(r)).to.include.members(["read", "grep", "find", "ls", "bash"]);
      expect(toolNames(r)).not.to.include.members(["write"]);
      expect(toolNames(r)).not.to.include("edit");
      expect(system(r)).to.contain("Plan mode is on");
    }
    // The write was refused (not offered), the redirect refused by plan mode, the read-only pipe ran.
    expect(toolResults(model.requests[1])).to.contain('Tool \\"write\\" is not available here');
    expect(toolResults(model.requests[2])).to.contain("Plan mode is on: redirections");
    expect(toolResults(model.requests[3])).to.contain('"tool_call_id":"call_3","content":"1"');
    expect(existsSync(join(project, "hello.txt"))).to.equal(false);
    expect(planStates(p).at(-1)).to.deep.include({
      phase: "planning",
      steps: [
        { step: "Create hello.txt with a greeting", status: "pending" },
        { step: "Report back", status: "pending" },
      ],
    });

    p.send({ type: "extension_ui_response", id: review.id, value: REVIEW_CHOICES.approve });
    await settled(p, 1);
    expect(model.requests).to.have.length(6);
    const working = model.requests[4];
    expect(toolNames(working)).to.have.members(["write", "edit", "bash", "read"]);
    expect(lastUser(working)).to.contain("Carry out this approved plan").and.contain(plan);
    expect(system(working)).to.contain("Approved plan").and.not.contain("Plan mode is on");
    expect(readFileSync(join(project, "hello.txt"), "utf8")).to.equal("hello");
    // One run: the approval carried the same run on.
    expect(p.records.filter((r) => r.type === "agent_settled")).to.have.length(1);
    const phases = planStates(p).map((s) => s.phase);
    expect(phases).to.deep.equal(["planning", "planning", "executing", "off"]);
    expect(planStates(p)[2]!.steps.map((s) => s.status)).to.deep.equal(["in_progress", "pending"]);
    expect(planStates(p)[3]!.steps.map((s) => s.status)).to.deep.equal(["completed", "completed"]);
  });

  it("/plan toggles; an edited plan is what the run gets; 'Keep planning' stays read-only", async () => {
    model.respondInOrder(
      (_r, res) => writeSse(res, textStream("Plan:\n1. Rewrite the parser\n2. Delete the old tests")),
      (_r, res) => writeSse(res, textStream("On it. [DONE:1]")),
      (_r, res) => writeSse(res, textStream("## Plan\n1. **Add** a cache")),
      (_r, res) => writeSse(res, textStream("What should the cache hold?")),
      (_r, res) => writeSse(res, textStream("Working normally.")),
    );
    const p = start([]);
    const seen = new Set<Record_>();
    expect((await p.request("0", "prompt", { message: "/plan" })).success).to.equal(true);
    await p.waitFor(() => planStates(p).length === 1);
    expect((await p.request("1", "prompt", { message: "improve parsing" })).success).to.equal(true);
    const review = await dialog(p, "select", seen);
    p.send({ type: "extension_ui_response", id: review.id, value: REVIEW_CHOICES.edit });
    const editor = await dialog(p, "editor", seen);
    expect(editor.title).to.equal(EDIT_TITLE);
    expect(editor.prefill).to.equal("Plan:\n1. Rewrite the parser\n2. Delete the old tests");
    p.send({ type: "extension_ui_response", id: editor.id, value: "1. Rewrite only the tokenizer" });
    await settled(p, 1);
    expect(lastUser(model.requests[1])).to.contain("1. Rewrite only the tokenizer").and.not.contain("Delete");
    expect(toolNames(model.requests[1])).to.include("write");
    expect(planStates(p).at(-1)).to.deep.include({
      phase: "off",
      plan: "1. Rewrite only the tokenizer",
      steps: [{ step: "Rewrite only the tokenizer", status: "completed" }],
    });

    // Again in plan mode; this time the person keeps planning.
    expect((await p.request("2", "prompt", { message: "/plan" })).success).to.equal(true);
    expect((await p.request("3", "prompt", { message: "speed it up" })).success).to.equal(true);
    const second = await dialog(p, "select", seen);
    expect(planStates(p).at(-1)!.steps).to.deep.equal([{ step: "Add a cache", status: "pending" }]);
    p.send({ type: "extension_ui_response", id: second.id, value: REVIEW_CHOICES.keep });
    await settled(p, 2);
    expect(model.requests).to.have.length(3);
    expect(planStates(p).at(-1)!.phase).to.equal("planning");
    expect((await p.request("4", "prompt", { message: "cache what?" })).success).to.equal(true);
    await settled(p, 3);
    expect(toolNames(model.requests[3])).not.to.include("write");
    expect(system(model.requests[3])).to.contain("Plan mode is on");
    // No plan in that reply: no review.
    expect(
      p.records.filter((r) => r.type === "extension_ui_request" && r.method === "select"),
    ).to.have.length(2);

    // /plan leaves plan mode: the working tools are back.
    expect((await p.request("5", "prompt", { message: "/plan" })).success).to.equal(true);
    await p.waitFor(() => planStates(p).at(-1)!.phase === "off");
    expect((await p.request("6", "prompt", { message: "go ahead" })).success).to.equal(true);
    await settled(p, 4);
    expect(toolNames(model.requests[4])).to.include.members(["write", "edit"]);
    expect(system(model.requests[4])).not.to.contain("Plan mode is on");
  });
  it("a resumed session (-c) goes on planning where it was", async () => {
    model.respondInOrder(
      (_r, res) => writeSse(res, textStream("Plan:\n1. Do the thing")),
      (_r, res) => writeSse(res, textStream("Still here.")),
    );
    const withSession = (args: string[]) => {
      const child = spawn(
        process.execPath,
        [cliBin, "--mode", "rpc", "--provider", "local", "--model", "m", ...args],
        {
          cwd: project,
          env: { ...process.env, KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent"), LOCAL_KEY: "sk-local" },
        },
      );
      const p = new RpcProcess(child);
      running.push(p);
      return p;
    };
    const first = withSession(["--plan"]);
    const seen = new Set<Record_>();
    expect((await first.request("1", "prompt", { message: "plan it" })).success).to.equal(true);
    const review = await dialog(first, "select", seen);
    first.send({ type: "extension_ui_response", id: review.id, value: REVIEW_CHOICES.keep });
    await settled(first, 1);
    expect(await first.end()).to.equal(0);

    const second = withSession(["-c"]);
    expect((await second.request("2", "prompt", { message: "anything else?" })).success).to.equal(true);
    await settled(second, 1);
    expect(model.requests).to.have.length(2);
    expect(toolNames(model.requests[1])).to.include("read").and.not.include("write");
    expect(system(model.requests[1])).to.contain("Plan mode is on");
  });
});

describe("plan mode beside an extension of the same names", function () {
  this.timeout(30_000);
  const tmp = useTempDir("kc-plan-pi-");

  it("JSON mode (no one to review): the plan is recorded as proposed and the run ends", async () => {
    const script = join(tmp.path, "script.json");
    writeFileSync(
      script,
      JSON.stringify({
        steps: [
          {
            text: "Plan:\n1. Read the code\n2. Fix the bug",
            expect: { systemPromptContains: "Plan mode is on" },
          },
          { text: "THIS-STEP-MUST-NOT-RUN" },
        ],
      }),
    );
    const run = await runCli(
      ["--mode", "json", "--no-session", "--plan", "--provider", "scripted", "--script", script, "fix it"],
      { cwd: tmp.path, env: { KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") } },
    );
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).not.to.contain("THIS-STEP-MUST-NOT-RUN");
    const states = run.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Record_)
      .filter(
        (r) => r.type === "entry_appended" && (r.entry as { customType: string }).customType === PLAN_MODE,
      )
      .map((r) => (r.entry as { data: { phase: string; steps: unknown[] } }).data);
    expect(states.at(-1)).to.deep.include({
      phase: "planning",
      steps: [
        { step: "Read the code", status: "pending" },
        { step: "Fix the bug", status: "pending" },
      ],
    });
  });

  it("a pi-style plan-mode extension takes --plan, /plan and ctrl+alt+p; the built-in gives way and stays off", async () => {
    const ext = join(tmp.path, "pi-plan.ts");
    writeFileSync(
      ext,
      `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerFlag("plan", { description: "my plan mode", type: "boolean", default: false });
  pi.registerCommand("plan", { description: "mine", handler: async () => {} });
  pi.registerShortcut("ctrl+alt+p", { description: "mine", handler: async () => {} });
  pi.on("agent_start", () => {
    pi.appendEntry("my-plan", { flag: pi.getFlag("plan"), commands: pi.getCommands().filter((c) => c.name.endsWith("plan")).map((c) => c.name + "@" + c.owner) });
  });
}
`,
    );
    const script = join(tmp.path, "script.json");
    writeFileSync(script, JSON.stringify({ steps: [{ text: "hello", expect: { tools: ["write"] } }] }));
    const run = await runCli(
      [
        "--mode",
        "json",
        "--no-session",
        "-e",
        ext,
        "--plan",
        "--provider",
        "scripted",
        "--script",
        script,
        "hi",
      ],
      { cwd: tmp.path, env: { KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") } },
    );
    expect(run.code, run.stderr).to.equal(0);
    const entries = run.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Record_)
      .filter((r) => r.type === "entry_appended")
      .map((r) => r.entry as { customType: string; data: { flag: unknown; commands: string[] } });
    const mine = entries.find((e) => e.customType === "my-plan")!;
    expect(mine.data.flag).to.equal(true);
    expect(mine.data.commands).to.have.members([`plan@cli:${ext}`, "builtin:plan@builtin:plan-mode"]);
    // The built-in read no --plan: it never entered plan mode, and the write tool was offered.
    expect(entries.filter((e) => e.customType === PLAN_MODE)).to.have.length(0);
  });
});
