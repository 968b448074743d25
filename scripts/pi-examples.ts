/**
 * How many of pi's own example extensions load and run on KnightCode unchanged (`npm run compat:pi -- <dir>`).
 *
 * <dir> is the `examples/extensions` folder of pi's published package, which this script does not download:
 *
 *   cd /tmp && npm pack @mariozechner/pi-coding-agent@0.73.1 && tar xzf mariozechner-pi-coding-agent-0.73.1.tgz
 *   npm run build && npm run compat:pi -- /tmp/package/examples/extensions
 *
 * Each extension (a .ts file, or a folder with index.ts) is tried in a fresh `knightcode` process from dist/:
 * - loads: `--list-extensions -e <it>` exits 0 (no load failure);
 * - runs: a JSON-mode prompt answered by the scripted provider exits 0 with no `extension_error` record and no
 *   error on stderr. An extension folder with npm dependencies loads only once they are installed (`npm install`
 *   in that folder, as its author's README says); the script names the folders that have none installed.
 * - answers (the examples that register a provider in pi's shape, listed in PROVIDER_CHECKS): a JSON-mode prompt
 *   to that provider, pointed by `models.json` at a local server speaking the provider's wire format, gets a tool
 *   call (`read`) whose result goes back to the server, then the server's answer; the key reaches the server.
 * It prints one line per extension and the totals.
 */
import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const dir = process.argv[2];
if (!dir || !existsSync(dir)) {
  console.error(
    "usage: npm run compat:pi -- <pi's examples/extensions folder> (see the comment in scripts/pi-examples.ts)",
  );
  process.exit(2);
}
const bin = fileURLToPath(new URL("../dist/hosts/cli/main.js", import.meta.url));
if (!existsSync(bin)) {
  console.error("dist/ is missing: run `npm run build` first");
  process.exit(2);
}

const work = mkdtempSync(join(tmpdir(), "kc-pi-examples-"));
const agentDir = join(work, "agent");
const script = join(work, "script.json");
writeFileSync(script, JSON.stringify({ steps: [{ text: "ok" }, { text: "ok" }] }));
const env = { ...process.env, KNIGHTCODE_AGENT_DIR: agentDir, NO_COLOR: "1" };

const entries = readdirSync(dir)
  .filter((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? existsSync(join(path, "index.ts")) : name.endsWith(".ts");
  })
  .sort();

function run(args: string[]) {
  return spawnSync(process.execPath, [bin, ...args], { cwd: work, env, encoding: "utf8", timeout: 30_000 });
}

/** pi examples that register a provider in pi's shape, and how to answer them locally. */
const PROVIDER_CHECKS: Record<string, { provider: string; model: string; keyEnv: string }> = {
  "custom-provider-anthropic": {
    provider: "custom-anthropic",
    model: "claude-sonnet-4-5",
    keyEnv: "CUSTOM_ANTHROPIC_API_KEY",
  },
};

/** Anthropic Messages SSE: a `read` tool call first, then a text answer. */
function anthropicAnswers(model: string): string[] {
  const sse = (events: Record<string, unknown>[]) =>
    events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
  const start = (id: string) => ({
    type: "message_start",
    message: {
      id,
      type: "message",
      role: "assistant",
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1 },
    },
  });
  const end = (reason: string) => [
    {
      type: "message_delta",
      delta: { stop_reason: reason, stop_sequence: null },
      usage: { output_tokens: 5 },
    },
    { type: "message_stop" },
  ];
  return [
    sse([
      start("msg_1"),
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: "toolu_1", name: "read", input: {} },
      },
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: '{"path":' },
      },
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: '"notes.txt"}' },
      },
      { type: "content_block_stop", index: 0 },
      ...end("tool_use"),
    ]),
    sse([
      start("msg_2"),
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "It says 42." } },
      { type: "content_block_stop", index: 0 },
      ...end("end_turn"),
    ]),
  ];
}

/** Whether the example's provider answers a prompt with a tool round trip through a local Anthropic server. */
async function providerAnswers(path: string, check: (typeof PROVIDER_CHECKS)[string]): Promise<string> {
  const bodies: { key: unknown; body: string }[] = [];
  const answers = anthropicAnswers(check.model);
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      bodies.push({ key: req.headers["x-api-key"], body });
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(answers[Math.min(bodies.length - 1, 1)]);
    });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  const home = mkdtempSync(join(tmpdir(), "kc-pi-provider-"));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    mkdirSync(join(home, "agent"));
    writeFileSync(
      join(home, "agent", "models.json"),
      JSON.stringify({ providers: { [check.provider]: { baseUrl: url } } }),
    );
    writeFileSync(join(home, "notes.txt"), "THE NOTE SAYS 42\n");
    const args = [
      "--mode",
      "json",
      "--no-session",
      "-e",
      path,
      "--provider",
      check.provider,
      "--model",
      check.model,
      "what does notes.txt say?",
    ];
    const child = spawn(process.execPath, [bin, ...args], {
      cwd: home,
      env: { ...env, KNIGHTCODE_AGENT_DIR: join(home, "agent"), [check.keyEnv]: "sk-local-check" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const code = await new Promise<number | null>((done) => child.on("close", done));
    clearTimeout(timer);
    const records = out
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l));
    const tool = records.find((r) => r.type === "tool_execution_end");
    const last = records
      .filter((r) => r.type === "message_end" && r.message?.role === "assistant")
      .at(-1)?.message;
    if (code !== 0) return `exit ${code}: ${last?.errorMessage ?? ""}`.slice(0, 160);
    if (bodies.length !== 2 || bodies[0]!.key !== "sk-local-check")
      return `${bodies.length} requests reached the server`;
    if (tool?.toolName !== "read" || tool.isError || !JSON.stringify(tool.result).includes("42"))
      return "the tool call did not run";
    if (!bodies[1]!.body.includes("tool_result")) return "the tool result was not sent back";
    if (last?.content?.[0]?.text !== "It says 42.") return "the answer did not arrive";
    return "";
  } finally {
    server.close();
    rmSync(home, { recursive: true, force: true });
  }
}

let loaded = 0;
let clean = 0;
let providersAnswer = 0;
const needDeps: string[] = [];
try {
  for (const name of entries) {
    const path = join(dir, name);
    const manifest = join(path, "package.json");
    const deps = existsSync(manifest) ? JSON.parse(readFileSync(manifest, "utf8")).dependencies : undefined;
    if (deps && Object.keys(deps).length > 0 && !existsSync(join(path, "node_modules"))) needDeps.push(name);
    const list = run(["--list-extensions", "-e", path]);
    const loads = list.status === 0;
    let runs = false;
    let why = loads ? "" : firstLine(list.stderr);
    if (loads) {
      loaded++;
      const json = run([
        "--mode",
        "json",
        "--no-session",
        "-e",
        path,
        "--provider",
        "scripted",
        "--script",
        script,
        "hello",
      ]);
      const records = json.stdout.split("\n").filter(Boolean);
      const errors = records.filter((line) => line.includes('"type":"extension_error"'));
      runs = json.status === 0 && errors.length === 0 && !/error/i.test(json.stderr);
      if (runs) clean++;
      else why = errors[0]?.slice(0, 160) ?? firstLine(json.stderr) ?? `exit ${json.status}`;
    }
    const providerCheck = PROVIDER_CHECKS[name];
    let answers = "";
    if (providerCheck && loads) {
      const failure = await providerAnswers(path, providerCheck);
      if (failure === "") providersAnswer++;
      answers = failure === "" ? " answers" : ` NO ANSWER (${failure})`;
    }
    console.log(
      `${loads ? "load" : "FAIL"} ${runs ? "run " : "----"} ${name}${answers}${why ? `  ${why}` : ""}`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(`\n${entries.length} extensions: ${loaded} load, ${clean} run cleanly (a prompt in JSON mode)`);
const providerExamples = entries.filter((name) => PROVIDER_CHECKS[name]).length;
if (providerExamples > 0) {
  console.log(
    `${providersAnswer} of ${providerExamples} pi-shaped providers answer a prompt with a tool call through a local server`,
  );
}
if (needDeps.length) console.log(`need npm dependencies not installed here: ${needDeps.join(", ")}`);

function firstLine(text: string): string {
  return (
    text
      .split("\n")
      .find((line) => line.trim())
      ?.slice(0, 200) ?? ""
  );
}
