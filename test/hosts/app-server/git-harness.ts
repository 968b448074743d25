/**
 * For the workspace and git tests of `knightcode app-server`: a real git repository as the harness's project, git
 * run with a fixed identity, and a scripted model whose turns make real edits with the `write` tool.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { expect } from "chai";
import { AppServerRequestError, type SpawnedAppServer } from "../../../hosts/sdk/app-server-client.js";
import { textStream, toolCallStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { GIT_ENV } from "../../builtin-extensions/worktrees/git/git-fixture.js";
import { type Responder, writeSse } from "../../helpers/sse-server.js";
import type { Harness } from "./harness.js";

export { GIT_ENV };

export const TEN = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\n";

export function git(cwd: string, args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    env: { ...process.env, ...GIT_ENV },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}

export function write(cwd: string, rel: string, text: string | Buffer): void {
  const file = join(cwd, rel);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

export function read(cwd: string, rel: string): string {
  return readFileSync(join(cwd, rel), "utf8");
}

/** Makes `dir` a repository with `a.txt` (ten lines) committed on `main`. */
export function initRepo(dir: string): void {
  mkdirSync(dir, { recursive: true });
  git(dir, ["init", "-q", "-b", "main"]);
  write(dir, "a.txt", TEN);
  git(dir, ["add", "-A"]);
  git(dir, ["commit", "-q", "-m", "first"]);
}

/** The index file's bytes (compared before and after to show it was never written). */
export function indexBytes(cwd: string): Buffer {
  return readFileSync(join(git(cwd, ["rev-parse", "--absolute-git-dir"]).trim(), "index"));
}

/**
 * The model's answers, in order: each turn pushed with `edits` writes those files (relative to the thread's cwd)
 * with one `write` call each, then says "done". Anything asked past the script is answered with "ok".
 */
export class ScriptedModel {
  private readonly queue: Responder[] = [];
  private calls = 0;

  constructor(h: Harness) {
    h.model.respond((req, res, index) => (this.queue.shift() ?? this.text("ok"))(req, res, index));
  }

  text(answer: string): Responder {
    return (_req, res) => writeSse(res, textStream(answer));
  }

  /** One turn that writes `edits` ({path: content}) and then answers "done". */
  turn(edits: Record<string, string>): void {
    for (const [path, content] of Object.entries(edits)) {
      const id = `call-${++this.calls}`;
      this.queue.push((_req, res) => writeSse(res, toolCallStream(id, "write", { path, content })));
    }
    this.queue.push(this.text("done"));
  }

  /** The next model call answers `answer` (a commit message, say), after `before` ran. */
  next(answer: string, before?: () => void): void {
    this.queue.push((req, res, index) => {
      before?.();
      return this.text(answer)(req, res, index);
    });
  }
}

/** Runs one turn to its end; returns the completed turn and the `turn/diff/updated` that followed it. */
/** The harness's project as a repository with one commit, a scripted model, and an initialised server. */
export async function startGitServer(
  h: Harness,
  env: Record<string, string> = {},
): Promise<{ server: SpawnedAppServer; model: ScriptedModel }> {
  initRepo(h.project);
  const model = new ScriptedModel(h);
  const server = await h.start({ ...GIT_ENV, ...env });
  await server.client.initialize();
  return { server, model };
}

export async function runTurn(server: SpawnedAppServer, threadId: string, text: string) {
  const { client } = server;
  const { turn } = await client.request("turn/start", { threadId, input: [{ type: "text", text }] });
  // waitFor also looks at what already arrived, so matching the turn id cannot miss or mix up turns.
  const done = await client.waitFor("turn/completed", (n) => n.turn.id === turn.id);
  const diff = await client.waitFor("turn/diff/updated", (n) => n.turnId === turn.id);
  return { turn: done.turn, diff };
}

/** The JSON-RPC error `promise` rejects with; `code` is the spec's name (`data.code`), `reason` its `data.reason`. */
export async function rpcError(
  promise: Promise<unknown>,
  code: string,
  reason?: string,
): Promise<AppServerRequestError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected ${code}${reason ? ` (${reason})` : ""}`).to.be.instanceOf(AppServerRequestError);
  const rpc = error as AppServerRequestError;
  expect(rpc.data?.code, rpc.message).to.equal(code);
  if (reason !== undefined) expect(rpc.data?.reason, rpc.message).to.equal(reason);
  return rpc;
}
