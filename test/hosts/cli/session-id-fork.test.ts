/**
 * pi's `--session-id <id>` and `--fork <path|id>`, through the built `knightcode` against a local OpenAI-compatible
 * server: the session of the folder with that id is reopened or created with it, a fork copies every entry of
 * another folder's session into a new session of this one, and the combinations pi refuses are refused.
 */

import { spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { textStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { cliBin, runCli } from "../../helpers/cli.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { RpcProcess } from "../../helpers/rpc-process.js";
import { startTestServer, type TestServer, writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";

type Line = { type: string; id?: string; parentId?: string | null; parentSession?: string; message?: any };

describe("pi's --session-id and --fork", function () {
  this.timeout(60_000);
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer();
    server.respond((_req, res) => writeSse(res, [...textStream("ok")]));
  });
  afterEach(() => server.close());
  const tmp = useTempDir("kc-session-id-");
  const agentDir = () => join(tmp.path, "agent");
  const sessionRoot = () => join(agentDir(), "sessions");
  const project = (name: string) => {
    const dir = join(tmp.path, name);
    tmp.write(`${name}/.keep`, "");
    return dir;
  };
  const run = (cwd: string, args: string[]) => {
    writeLocalModels(agentDir(), {
      baseUrl: `${server.url}/v1`,
      apiKey: "local-key",
      models: [{ id: "m1", contextWindow: 32_000, maxTokens: 1024 }],
    });
    return runCli(["--provider", "local", "--model", "m1", ...args], {
      cwd,
      env: { KNIGHTCODE_AGENT_DIR: agentDir() },
    });
  };
  /** The session files under the agent dir, by folder, with their parsed lines. */
  const sessionFiles = (): { path: string; lines: Line[] }[] => {
    if (!existsSync(sessionRoot())) return [];
    const dirs = readdirSync(sessionRoot(), { withFileTypes: true }).filter((d) => d.isDirectory());
    return dirs
      .map((d) => d.name)
      .flatMap((dir) =>
        readdirSync(join(sessionRoot(), dir))
          .filter((f) => f.endsWith(".jsonl"))
          .map((f) => {
            const path = join(sessionRoot(), dir, f);
            const lines = readFileSync(path, "utf8")
              .split("\n")
              .filter(Boolean)
              .map((l) => JSON.parse(l) as Line);
            return { path, lines };
          }),
      );
  };
  const text = (message: any): string =>
    typeof message.content === "string" ? message.content : message.content[0]?.text;
  const userTexts = (lines: Line[]) =>
    lines.filter((l) => l.type === "message" && l.message.role === "user").map((l) => text(l.message));

  it("--session-id creates the folder's session with that id, then reopens it", async () => {
    const here = project("shop");
    const first = await run(here, ["--session-id", "fix-42_a.b", "-p", "first"]);
    expect(first.code, first.stderr).to.equal(0);
    expect(first.stderr).to.contain(
      "No session of this folder has the id 'fix-42_a.b'; creating a new session with that id.",
    );
    const files = sessionFiles();
    expect(files).to.have.length(1);
    expect(files[0]!.path).to.match(/_fix-42_a\.b\.jsonl$/);
    expect(files[0]!.lines[0]).to.deep.include({ type: "session", id: "fix-42_a.b" });

    const again = await run(here, ["--session-id", "fix-42_a.b", "-p", "second"]);
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stderr).to.not.contain("creating a new session");
    expect(sessionFiles()).to.have.length(1);
    expect(userTexts(sessionFiles()[0]!.lines)).to.deep.equal(["first", "second"]);
    // `--session <id>` finds it too (an id with an underscore is read back from the file name whole).
    const byPrefix = await run(here, ["--session", "fix-42_a", "-p", "third"]);
    expect(byPrefix.code, byPrefix.stderr).to.equal(0);
    expect(userTexts(sessionFiles()[0]!.lines)).to.deep.equal(["first", "second", "third"]);

    // Another folder has no session with that id: it gets its own.
    const other = await run(project("other"), ["--session-id", "fix-42_a.b", "-p", "elsewhere"]);
    expect(other.code, other.stderr).to.equal(0);
    expect(other.stderr).to.contain("creating a new session with that id");
    expect(sessionFiles()).to.have.length(2);
  });

  it("--session-id with --no-session names the in-memory session; RPC get_state reports it", async () => {
    writeLocalModels(agentDir(), {
      baseUrl: `${server.url}/v1`,
      apiKey: "local-key",
      models: [{ id: "m1", contextWindow: 32_000, maxTokens: 1024 }],
    });
    const child = spawn(
      process.execPath,
      [
        cliBin,
        "--mode",
        "rpc",
        "--provider",
        "local",
        "--model",
        "m1",
        "--no-session",
        "--session-id",
        "mem1",
      ],
      { cwd: tmp.path, env: { ...process.env, KNIGHTCODE_AGENT_DIR: agentDir() } },
    );
    const p = new RpcProcess(child);
    try {
      const state = (await p.request("1", "get_state")).data as { sessionId: string; sessionFile?: string };
      expect(state.sessionId).to.equal("mem1");
      expect(state.sessionFile).to.equal(undefined);
      await p.request("2", "prompt", { message: "hi" });
      await p.waitFor((r) => r.type === "agent_settled");
    } finally {
      await p.end(5_000);
    }
    expect(sessionFiles()).to.deep.equal([]);
  });

  it("--fork copies every entry of another folder's session into a new session of this folder", async () => {
    const origin = project("origin");
    expect((await run(origin, ["-p", "one"])).code).to.equal(0);
    expect((await run(origin, ["-c", "-p", "two"])).code).to.equal(0);
    const [source] = sessionFiles();
    // A second branch in the source: a user message hanging from the first answer, written as the store does.
    const sourceLines = source!.lines;
    const firstAnswer = sourceLines.find((l) => l.type === "message" && l.message.role === "assistant")!;
    const side: Line = {
      type: "message",
      id: "side0001",
      parentId: firstAnswer.id!,
      message: { role: "user", content: [{ type: "text", text: "side branch" }], timestamp: Date.now() },
    };
    writeFileSync(
      source!.path,
      `${readFileSync(source!.path, "utf8")}${JSON.stringify({ ...side, timestamp: new Date().toISOString() })}\n`,
    );
    const before = readFileSync(source!.path, "utf8");
    const sourceId = sourceLines[0]!.id!;

    const here = project("here");
    const forked = await run(here, [
      "--fork",
      sourceId.slice(0, 8),
      "--session-id",
      "forked1",
      "-p",
      "three",
    ]);
    expect(forked.code, forked.stderr).to.equal(0);
    expect(readFileSync(source!.path, "utf8")).to.equal(before);
    const fork = sessionFiles().find((f) => f.path !== source!.path)!;
    expect(fork.path).to.match(/_forked1\.jsonl$/);
    expect(fork.lines[0]).to.deep.include({ type: "session", id: "forked1", parentSession: source!.path });
    expect((fork.lines[0] as { cwd?: string }).cwd).to.equal(here);
    // Every source entry, with its id (the side branch too), then the new prompt.
    const ids = fork.lines.slice(1).map((l) => l.id);
    for (const entry of [...sourceLines.slice(1), side]) expect(ids).to.include(entry.id);
    expect(userTexts(fork.lines)).to.deep.equal(["one", "two", "side branch", "three"]);
    // The fork continues from the source's last entry: the side branch, whose parent was the first answer.
    const three = fork.lines.find((l) => l.type === "message" && text(l.message) === "three")!;
    expect(three.parentId).to.equal("side0001");

    // By path as well; an id this folder already has is refused.
    const byPath = await run(here, ["--fork", source!.path, "-p", "four"]);
    expect(byPath.code, byPath.stderr).to.equal(0);
    expect(sessionFiles()).to.have.length(3);
    const taken = await run(here, ["--fork", source!.path, "--session-id", "forked1", "-p", "five"]);
    expect(taken.code).to.not.equal(0);
    expect(taken.stderr).to.contain("A session with the id 'forked1' already exists in this folder");
    const missing = await run(here, ["--fork", "nosuchid", "-p", "six"]);
    expect(missing.code).to.not.equal(0);
    expect(missing.stderr).to.contain("No session with id nosuchid");
    expect(sessionFiles()).to.have.length(3);
  });

  it("refuses pi's invalid combinations and ids before opening anything", async () => {
    const here = project("p");
    const cases: [string[], string][] = [
      [["--fork", "x", "--continue"], "--fork cannot be combined with --continue"],
      [
        ["--fork", "x", "--no-session", "--session", "y"],
        "--fork cannot be combined with --session, --no-session",
      ],
      [["--session-id", "a", "--session", "y"], "--session-id cannot be combined with --session"],
      [["--session-id", "a", "-c"], "--session-id cannot be combined with --continue"],
      [["--session-id", "-bad"], "--session-id needs a value"],
      [["--session-id", "bad id"], `--session-id "bad id" is invalid`],
      [["--session-id", "dot."], `--session-id "dot." is invalid`],
    ];
    for (const [args, message] of cases) {
      const result = await run(here, [...args, "-p", "hi"]);
      expect(result.code, args.join(" ")).to.not.equal(0);
      expect(result.stderr, args.join(" ")).to.contain(message);
    }
    expect(server.requests).to.have.length(0);
    expect(sessionFiles()).to.deep.equal([]);
  });
});
