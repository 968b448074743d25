/**
 * A reopened session holds only what its tree and context need: messages a compaction cut off, and messages on
 * other branches, are read back from their line in the file when asked for. Shown by overwriting such a line on
 * disk after the open: reading that entry now fails with a clear error, while the context never touches it.
 */
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { SessionManager, SessionStoreError } from "../../../plugins/session-store/session-manager.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { assistant, user } from "./helpers.js";

describe("session-store: entries read back from the file", () => {
  const tmp = useTempDir("kc-readback-");
  let managers: SessionManager[] = [];
  const track = (manager: SessionManager) => {
    managers.push(manager);
    return manager;
  };
  afterEach(() => {
    for (const manager of managers) manager.close();
    managers = [];
  });

  /** 20 messages, a side branch from entry 3, then a compaction keeping entries 16-19 and 2 more messages. */
  function writeSession() {
    const session = SessionManager.create({ cwd: join(tmp.path, "p"), agentDir: join(tmp.path, "agent") });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      ids.push(session.appendMessage(i % 2 === 0 ? user(`u${i}`) : assistant(`a${i}`)).id);
    }
    session.branch(ids[3]!);
    const side = session.appendMessage(user("side branch")).id;
    session.branch(ids[19]!);
    const compaction = session.appendCompaction("what happened before", ids[16]!, 1234).id;
    ids.push(session.appendMessage(user("after")).id);
    ids.push(session.appendMessage(assistant("done")).id);
    const leaf = session.getLeafId()!;
    const expected = {
      entries: session.getEntries(),
      context: session.buildContext(),
      branch: session.getBranch(),
    };
    session.close();
    return { file: session.getSessionFile()!, ids, compaction, side, leaf, expected };
  }

  /** Replaces the bytes of entry `id`'s line with `x`s of the same length (the line stays a line). */
  function scribbleOver(file: string, id: string): void {
    const text = readFileSync(file, "utf8");
    const start = text.indexOf(`"id":"${id}"`);
    const lineStart = text.lastIndexOf("\n", start) + 1;
    const lineEnd = text.indexOf("\n", start);
    const fd = openSync(file, "r+");
    try {
      writeSync(fd, "x".repeat(Buffer.byteLength(text.slice(lineStart, lineEnd))), lineStart);
    } finally {
      closeSync(fd);
    }
  }

  it("gives the same entries, branch, tree and context as the session that wrote them", () => {
    const { file, expected, ids, side } = writeSession();
    const session = track(SessionManager.open(file));
    expect(session.warnings).to.deep.equal([]);
    expect(session.getEntries()).to.deep.equal(expected.entries);
    expect(session.getBranch()).to.deep.equal(expected.branch);
    expect(session.buildContext()).to.deep.equal(expected.context);
    expect(session.getChildren(ids[3]!).map((e) => e.id)).to.deep.equal([ids[4], side]);
    expect(session.getEntry(ids[0]!)).to.deep.equal(expected.entries[0]);
    // Reading back keeps working after close (the file is opened for each read then).
    session.close();
    expect(session.getEntry(ids[1]!)).to.deep.equal(expected.entries[1]);
  });

  it("does not hold the messages a compaction cut off or another branch holds, but does hold the context", () => {
    const { file, ids, side, expected } = writeSession();
    const session = track(SessionManager.open(file));
    scribbleOver(file, ids[2]!);
    scribbleOver(file, side);
    scribbleOver(file, ids[17]!);

    // The context (summary, kept entries 16..19, then the two after the compaction) is in memory.
    expect(session.buildContext()).to.deep.equal(expected.context);
    expect(session.getEntry(ids[17]!)).to.deep.equal(expected.entries[17]);
    for (const id of [ids[2]!, side]) {
      let error: unknown;
      try {
        session.getEntry(id);
      } catch (caught) {
        error = caught;
      }
      expect(error, id).to.be.instanceOf(SessionStoreError);
      expect((error as SessionStoreError).code).to.equal("KC_ERR_SESSION_IO");
      expect((error as Error).message)
        .to.contain(file)
        .and.contain(`entry ${id}`);
    }
  });

  it("lets go of what a new compaction cuts off, and keeps reading it back correctly", () => {
    const { file, ids } = writeSession();
    const session = track(SessionManager.open(file));
    const more = [session.appendMessage(user("more")).id, session.appendMessage(assistant("ok")).id];
    session.appendCompaction("second summary", more[0]!, 99);
    scribbleOver(file, ids[21]!);
    expect(() => session.getEntry(ids[21]!)).to.throw(SessionStoreError, /changed after it was opened/);
    expect(session.buildContext().messages).to.have.length(3);
  });

  it("reads a re-attached entry back with the parent the tree gave it", () => {
    const { file, ids } = writeSession();
    // Break entry 5's line: entry 6 names it as parent and is re-attached to entry 4.
    scribbleOver(file, ids[5]!);
    const session = track(SessionManager.open(file));
    expect(session.warnings.join("\n")).to.contain(`(entry ${ids[6]}) refers to a missing parent ${ids[5]}`);
    expect(session.getEntry(ids[6]!)?.parentId).to.equal(ids[4]);
    expect(session.getBranch().map((e) => e.id)).to.not.include(ids[5]);
  });
});
