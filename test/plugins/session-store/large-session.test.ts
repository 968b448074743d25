/** A 10,000-entry session with a branch point reopens with the same entries, leaf and active branch. */
import { join } from "node:path";
import { expect } from "chai";
import { SessionManager } from "../../../plugins/session-store/session-manager.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { assistant, toolResult, user } from "./helpers.js";

describe("session-store: large session", () => {
  const tmp = useTempDir("kc-large-");

  it("reopens 10,000 entries with a branch point and gives the same active branch and context", () => {
    const session = SessionManager.create({ cwd: join(tmp.path, "p"), agentDir: join(tmp.path, "agent") });
    const ids: string[] = [];
    const append = (i: number) => {
      const message =
        i % 3 === 0 ? user(`u${i}`) : i % 3 === 1 ? assistant(`a${i}`) : toolResult(`c${i}`, `t${i}`);
      ids.push(session.appendMessage(message).id);
    };
    for (let i = 0; i < 6_000; i++) append(i);
    // Go back to entry 2,999 and continue from there: 4,000 more entries on a second branch.
    session.branch(ids[2_999]!);
    for (let i = 6_000; i < 10_000; i++) append(i);
    const file = session.getSessionFile()!;
    const branch = session.getBranch().map((e) => e.id);
    const context = session.buildContext();
    session.close();

    expect(new Set(ids).size).to.equal(10_000);
    expect(branch).to.have.length(3_000 + 4_000);
    expect(session.getChildren(ids[2_999]!).map((e) => e.id)).to.deep.equal([ids[3_000], ids[6_000]]);

    const reopened = SessionManager.open(file);
    try {
      expect(reopened.warnings).to.deep.equal([]);
      expect(reopened.getEntries().map((e) => e.id)).to.deep.equal(ids);
      expect(reopened.getLeafId()).to.equal(ids[9_999]);
      expect(reopened.getBranch().map((e) => e.id)).to.deep.equal(branch);
      expect(reopened.buildContext()).to.deep.equal(context);
      expect(reopened.getBranch(ids[5_999]).length).to.equal(6_000);
      expect(
        SessionManager.list({ cwd: join(tmp.path, "p"), agentDir: join(tmp.path, "agent") })[0],
      ).to.include({
        messageCount: 10_000,
        firstMessage: "u0",
      });
    } finally {
      reopened.close();
    }
  });
});
