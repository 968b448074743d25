/**
 * git/commit's empty message, written by the thread's own model (the scripted provider of its session) from the
 * staged diff, through that session's model runtime even when another session opened later.
 */
import type { ExtensionAPI, ExtensionContext } from "@knightcodeai/cli/kit";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { commitMessageWriter } from "../../../../builtin-extensions/worktrees/git/commit-message.js";
import { gitCommit } from "../../../../builtin-extensions/worktrees/git/ops.js";
import { useGitRepo } from "./git-fixture.js";

describe("builtin:worktrees git engine: commit message", () => {
  const fx = useGitRepo();
  const sessions: TestSession[] = [];
  afterEach(async () => {
    for (const session of sessions.splice(0)) await session.dispose();
  });

  /** A test session whose model answers `answer` (recording what it was asked), and its context. */
  async function session(answer: string, asked: string[] = []) {
    let context: ExtensionContext | undefined;
    const t = await createTestSession({
      cwd: fx.repo,
      script: [
        (request) => {
          asked.push(JSON.stringify(request));
          return { text: answer };
        },
      ],
      extensions: [
        (kc: ExtensionAPI) =>
          kc.on("session_start", (_e, ctx) => {
            context = ctx;
          }),
      ],
    });
    sessions.push(t);
    if (!context?.model) throw new Error("no model in the session");
    return { t, ctx: context, model: context.model };
  }

  it("asks the model outside the conversation with the staged diff and commits its answer", async () => {
    const asked: string[] = [];
    const { t, ctx, model } = await session("Shout the first line\n\nMakes it louder.", asked);
    fx.write("a.txt", "ONE\n");
    const done = await gitCommit(fx.repo, {
      writeMessage: commitMessageWriter({ models: ctx.modelRegistry, model }),
    });
    expect(done.message).to.equal("Shout the first line\n\nMakes it louder.");
    expect(fx.git(["log", "-1", "--format=%B"]).trim()).to.equal("Shout the first line\n\nMakes it louder.");
    expect(asked.join("")).to.match(/\+ONE/);
    expect(t.session.sessionManager.getEntries().filter((e) => e.type === "message")).to.have.length(0);
  });

  it("goes through the thread's own model runtime, not the session opened last", async () => {
    const thread = await session("From the thread's model");
    const laterAsked: string[] = [];
    await session("From another session", laterAsked);
    fx.write("a.txt", "changed\n");
    const done = await gitCommit(fx.repo, {
      writeMessage: commitMessageWriter({ models: thread.ctx.modelRegistry, model: thread.model }),
    });
    expect(done.message).to.equal("From the thread's model");
    expect(laterAsked).to.deep.equal([]);
  });
});
