/**
 * The classifier gate end to end, with the built `knightcode` against a local server speaking the OpenAI Chat
 * Completions wire format. The server plays the agent (a `bash` call per prompt, then "done") and the classifier,
 * whose answer is scripted by the command under review: safe, risky, malformed, slow past the timeout, HTTP 500 and
 * HTTP 401. In RPC mode each path ends with the gate's dialog answered "this once" and "block"; in JSON mode (no UI) each
 * non-safe path ends blocked, "unavailable" told apart from "denied".
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { join } from "node:path";
import { expect } from "chai";
import { GATE_CHOICES } from "../../builtin-extensions/classifier-gate/index.js";
import { textStream, toolCallStream } from "../builtin-extensions/providers/openai-compatible/fixtures.js";
import { cliBin, runCli } from "../helpers/cli.js";
import { writeLocalModels } from "../helpers/local-models.js";
import { RpcProcess } from "../helpers/rpc-process.js";
import {
  type RecordedRequest,
  startTestServer,
  type TestServer,
  writeJsonError,
  writeSse,
} from "../helpers/sse-server.js";
import { useTempDir } from "../helpers/temp-dir.js";

const SCENARIOS = ["safe", "risky", "malformed", "slow", "e500", "e401"] as const;
type Scenario = (typeof SCENARIOS)[number];
/** The gate's classifier timeout: long enough for a fresh process's first call on a loaded machine. */
const TIMEOUT_MS = 2000;

/** The scenario named by the command under review (`echo <scenario>-<n>`). */
function scenarioOf(request: RecordedRequest): Scenario {
  const prompt = JSON.stringify(request.body.messages);
  const found = /echo (\w+)-\d/.exec(prompt)?.[1];
  return SCENARIOS.find((s) => s === found) ?? "risky";
}

async function answer(request: RecordedRequest, res: ServerResponse): Promise<void> {
  const body = request.body;
  if (!body.tool_choice) {
    const last = body.messages.at(-1);
    if (JSON.stringify(body.messages).includes("run fileops")) {
      // A write inside the project, then a read of it: neither may reach the classifier.
      const done = body.messages.filter((m: { role: string }) => m.role === "tool").length;
      if (done === 0)
        return writeSse(res, toolCallStream("call_w", "write", { path: "src/notes.txt", content: "n" }));
      if (done === 1) return writeSse(res, toolCallStream("call_r", "read", { path: "src/notes.txt" }));
      return writeSse(res, textStream("done"));
    }
    if (JSON.stringify(body.messages).includes("run breaker")) {
      // Keeps asking for risky commands: the breaker must end the run.
      const done = body.messages.filter((m: { role: string }) => m.role === "tool").length;
      if (done >= 5) return writeSse(res, textStream("done"));
      return writeSse(res, toolCallStream(`call_b${done}`, "bash", { command: `echo risky-${done}` }));
    }
    if (last.role === "tool") return writeSse(res, textStream("done"));
    const [, scenario, n] = /run (\w+) (\d)/.exec(String(last.content)) ?? [];
    return writeSse(
      res,
      toolCallStream(`call_${scenario}_${n}`, "bash", { command: `echo ${scenario}-${n}` }),
    );
  }
  const label = (l: string) => writeSse(res, toolCallStream("call_cls", "classify", { label: l }));
  switch (scenarioOf(request)) {
    case "safe":
      return label("safe");
    case "risky":
      return label("risky: destructive or irreversible");
    case "malformed":
      return label("maybe");
    case "slow":
      // Answers only well past the timeout; the gate gives up first and drops the request, which ends the wait.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, TIMEOUT_MS * 5);
        res.once("close", () => {
          clearTimeout(timer);
          resolve();
        });
      });
      if (!res.destroyed) return label("safe");
      return;
    case "e500":
      return writeJsonError(res, 500, { error: { message: "upstream exploded", type: "server_error" } });
    case "e401":
      return writeJsonError(res, 401, {
        error: {
          message: "Incorrect API key provided",
          type: "invalid_request_error",
          code: "invalid_api_key",
        },
      });
  }
}

type Rec = { type: string; [k: string]: any };

describe("classifier gate over the wire (RPC and JSON mode against a local classifier server)", function () {
  this.timeout(120_000);
  const tmp = useTempDir("kc-gate-wire-");
  let server: TestServer;
  let agentDir: string;
  beforeEach(async () => {
    server = await startTestServer();
    server.respond(answer);
    agentDir = join(tmp.path, "agent");
    writeLocalModels(agentDir, {
      baseUrl: `${server.url}/v1`,
      apiKey: "LOCAL_TEST_KEY",
      models: [
        { id: "agent", contextWindow: 32000, maxTokens: 1024 },
        { id: "classifier", contextWindow: 32000, maxTokens: 256 },
      ],
    });
    writeFileSync(
      join(agentDir, "tools.json"),
      JSON.stringify({
        "classifier-gate": { enabled: true, model: "local/classifier", timeoutMs: String(TIMEOUT_MS) },
      }),
    );
    mkdirSync(join(tmp.path, "project"));
  });
  afterEach(() => server.close());

  const classifierRequests = (scenario: Scenario) =>
    server.requests.filter((r) => r.body?.tool_choice && scenarioOf(r) === scenario).length;
  const env = () => ({ KNIGHTCODE_AGENT_DIR: agentDir, LOCAL_TEST_KEY: "sk-local" });

  it("RPC: a safe call runs unasked; every other path asks, and runs on yes and is blocked on no", async () => {
    const child = spawn(
      process.execPath,
      [cliBin, "--mode", "rpc", "--no-session", "--provider", "local", "--model", "agent"],
      { cwd: join(tmp.path, "project"), env: { ...process.env, ...env() } },
    );
    const rpc = new RpcProcess(child);
    try {
      const run = async (scenario: Scenario, n: number, confirm: boolean | undefined) => {
        const settledBefore = rpc.records.filter((r) => r.type === "agent_settled").length;
        const uiBefore = rpc.records.filter((r) => r.type === "extension_ui_request").length;
        const ok = await rpc.request(`p-${scenario}-${n}`, "prompt", { message: `run ${scenario} ${n}` });
        expect(ok.success, JSON.stringify(ok)).to.equal(true);
        if (confirm !== undefined) {
          const dialog = await rpc.waitFor(
            (r) =>
              r.type === "extension_ui_request" &&
              r.method === "select" &&
              rpc.records.filter((x) => x.type === "extension_ui_request").indexOf(r) >= uiBefore,
          );
          const [title, ...details] = String(dialog.title).split("\n");
          expect(title).to.equal("Allow bash?");
          expect(details.join("\n")).to.contain(`$ echo ${scenario}-${n}`).and.contain("Why you are asked:");
          // The safe answer first: a client that takes the first option blocks the call.
          expect((dialog.options as string[])[0]).to.equal(GATE_CHOICES.block);
          rpc.send({
            type: "extension_ui_response",
            id: dialog.id,
            value: confirm ? GATE_CHOICES.once : GATE_CHOICES.block,
          });
        }
        await rpc.waitFor(
          () => rpc.records.filter((r) => r.type === "agent_settled").length > settledBefore,
          30_000,
        );
        const end = rpc.records.find(
          (r) => r.type === "tool_execution_end" && r.toolCallId === `call_${scenario}_${n}`,
        ) as Rec;
        expect(end, `${scenario} ${n}: ${rpc.stderr}`).to.not.equal(undefined);
        return end;
      };

      const safe = await run("safe", 1, undefined);
      expect(safe.isError).to.equal(false);
      expect(safe.result.content[0].text).to.contain("safe-1");
      for (const scenario of ["risky", "malformed", "slow", "e500", "e401"] as const) {
        const yes = await run(scenario, 1, true);
        expect(yes.isError, `${scenario} yes`).to.equal(false);
        expect(yes.result.content[0].text).to.contain(`${scenario}-1`);
        const no = await run(scenario, 2, false);
        expect(no.isError, `${scenario} no`).to.equal(true);
        expect(no.result.content[0].text).to.contain("the user declined");
        const decision = no.result.details.classifierGate;
        expect(decision).to.include({ outcome: "denied", by: "user" });
        expect(decision.classifier.verdict, scenario).to.equal(
          scenario === "risky" ? "risky" : "unavailable",
        );
      }
      // A malformed answer is asked again twice per call, and no more.
      expect(classifierRequests("malformed")).to.equal(6);
      expect(classifierRequests("e401")).to.equal(2);
      const stats = await rpc.request("stats", "get_session_stats");
      expect((stats.data as Rec).tokens.input).to.be.greaterThan(0);
    } finally {
      await rpc.end();
      rpc.kill();
    }
  });

  it("JSON mode: with no one to ask, a risky call is denied and an unreachable classifier leaves it unavailable", async () => {
    const results = await Promise.all(
      SCENARIOS.map((scenario) =>
        runCli(
          ["--mode", "json", "--no-session", "--provider", "local", "--model", "agent", `run ${scenario} 1`],
          {
            cwd: join(tmp.path, "project"),
            env: env(),
            timeoutMs: 60_000,
          },
        ),
      ),
    );
    for (const [i, scenario] of SCENARIOS.entries()) {
      const { code, stdout, stderr } = results[i]!;
      expect(code, `${scenario}: ${stderr}`).to.equal(0);
      const records = stdout
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l) as Rec);
      const end = records.find((r) => r.type === "tool_execution_end")!;
      if (scenario === "safe") {
        expect(end.isError).to.equal(false);
        continue;
      }
      expect(end.isError, scenario).to.equal(true);
      const text: string = end.result.content[0].text;
      const decision = end.result.details.classifierGate;
      if (scenario === "risky") {
        expect(decision).to.include({ outcome: "denied", by: "classifier" });
        expect(text).to.contain("denied: the classifier judged it risky: destructive or irreversible");
      } else {
        expect(decision, scenario).to.include({ outcome: "unavailable" });
        expect(text).to.contain("unavailable: the call could not be checked");
      }
      expect(text).to.contain("Find a safer way");
      expect(records.some((r) => r.type === "extension_ui_request")).to.equal(false);
    }
    expect(classifierRequests("slow")).to.equal(1);
  });

  it("JSON mode: a read and an edit inside the project never reach the classifier", async () => {
    const { code, stdout, stderr } = await runCli(
      ["--mode", "json", "--no-session", "--provider", "local", "--model", "agent", "run fileops 1"],
      { cwd: join(tmp.path, "project"), env: env(), timeoutMs: 60_000 },
    );
    expect(code, stderr).to.equal(0);
    const ends = stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Rec)
      .filter((r) => r.type === "tool_execution_end");
    expect(ends.map((r) => [r.toolName, r.isError])).to.deep.equal([
      ["write", false],
      ["read", false],
    ]);
    expect(server.requests.filter((r) => r.body?.tool_choice)).to.have.length(0);
    expect(server.requests).to.have.length(3);
  });

  it("JSON mode: after 3 denials in a row the gate ends the run", async () => {
    const { stdout, stderr } = await runCli(
      ["--mode", "json", "--no-session", "--provider", "local", "--model", "agent", "run breaker 1"],
      { cwd: join(tmp.path, "project"), env: env(), timeoutMs: 60_000 },
    );
    const records = stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Rec);
    const ends = records.filter((r) => r.type === "tool_execution_end");
    expect(
      ends.map((r) => r.toolCallId),
      stderr,
    ).to.deep.equal(["call_b0", "call_b1", "call_b2"]);
    expect(ends.every((r) => r.isError)).to.equal(true);
    expect(ends[2]!.result.content[0].text).to.contain("The gate ended the run after 3 denials in a row");
    expect(records.find((r) => r.type === "agent_settled")).to.include({ aborted: true });
  });
});
