/** git/commit's empty message, written by the session's model (the scripted provider) from the staged diff. */
import { getModel } from "@knightcodeai/cli/kit";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { commitMessageWriter } from "../../../plugins/git/commit-message.js";
import { gitCommit } from "../../../plugins/git/ops.js";
import { useGitRepo } from "./git-fixture.js";

describe("plugins/git commit message", () => {
  const fx = useGitRepo();
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it("asks the model outside the conversation with the staged diff and commits its answer", async () => {
    let asked = "";
    t = await createTestSession({
      cwd: fx.repo,
      script: [
        (request) => {
          asked = JSON.stringify(request);
          return { text: "Shout the first line\n\nMakes it louder." };
        },
      ],
    });
    fx.write("a.txt", "ONE\n");
    const model = getModel("scripted", "scripted");
    if (!model) throw new Error("no scripted model");
    const done = await gitCommit(fx.repo, { writeMessage: commitMessageWriter(model) });
    expect(done.message).to.equal("Shout the first line\n\nMakes it louder.");
    expect(fx.git(["log", "-1", "--format=%B"]).trim()).to.equal("Shout the first line\n\nMakes it louder.");
    expect(asked).to.match(/\+ONE/);
    expect(t.session.sessionManager.getEntries().filter((e) => e.type === "message")).to.have.length(0);
  });
});
