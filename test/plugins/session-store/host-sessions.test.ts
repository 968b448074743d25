/**
 * The session store as the host face offers it (`ModeContext.host.sessions`, what the app-server lists, reads, forks
 * and moves threads with), over the standard store and real files: pages by file time with cursors, a cwd's
 * sessions, find by id, the active branch read without opening a file, forks, a header pointed at another folder,
 * and moves refused while a session is open.
 */
import { readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { createStandaloneHostServices } from "../../../hosts/sdk/session-plugins.js";
import { SessionManager } from "../../../plugins/session-store/session-manager.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { assistant, user } from "./helpers.js";

describe("session-store: the host face's sessions", () => {
  const tmp = useTempDir("kc-host-sessions-");
  const agentDir = () => join(tmp.path, "agent");
  let faces: ReturnType<typeof createStandaloneHostServices>[] = [];
  afterEach(() => {
    for (const face of faces) face.dispose();
    faces = [];
  });
  function host() {
    const face = createStandaloneHostServices({ agentDir: agentDir() });
    faces.push(face);
    return face;
  }

  /** A closed session of `cwd` with one exchange, its file's time set to `at` (seconds). */
  function session(cwd: string, text: string, at: number): { path: string; id: string } {
    const manager = SessionManager.create({ cwd, agentDir: agentDir() });
    manager.appendMessage(user(text));
    manager.appendMessage(assistant(`re: ${text}`));
    const path = manager.getSessionFile()!;
    const id = manager.getSessionId();
    manager.close();
    utimesSync(path, at, at);
    return { path, id };
  }

  it("pages by file time, newest first, with a cursor; a cwd's only; an unknown cursor is refused", () => {
    const a = join(tmp.path, "a");
    const b = join(tmp.path, "b");
    const first = session(a, "one", 1_000);
    const second = session(b, "two", 2_000);
    const third = session(a, "three", 3_000);
    const sessions = host().sessions;
    const page1 = sessions.page({ limit: 2 });
    expect(page1.sessions.map((s) => s.id)).to.deep.equal([third.id, second.id]);
    expect(page1.sessions[0]!.fileModified.getTime()).to.equal(3_000_000);
    expect(page1.sessions[0]).to.include({ firstMessage: "three", messageCount: 2, cwd: a });
    const page2 = sessions.page({ limit: 2, cursor: page1.nextCursor! });
    expect(page2.sessions.map((s) => s.id)).to.deep.equal([first.id]);
    expect(page2.nextCursor).to.equal(undefined);
    expect(sessions.page({ cwd: a }).sessions.map((s) => s.id)).to.deep.equal([third.id, first.id]);
    expect(() => sessions.page({ cursor: "not a cursor" }))
      .to.throw(/Invalid cursor/)
      .with.property("code", "KC_ERR_SESSION_CURSOR");
    expect(sessions.find(second.id)?.path).to.equal(second.path);
    expect(sessions.find("00000000-0000-4000-8000-000000000000")).to.equal(undefined);
  });

  it("reads the end of the active branch as readBranch does, with its position, parsing only what it returns", () => {
    const cwd = join(tmp.path, "p");
    const manager = SessionManager.create({ cwd, agentDir: agentDir() });
    for (let i = 0; i < 50; i++) manager.appendMessage(i % 2 === 0 ? user(`q${i}`) : assistant(`a${i}`));
    const fork = manager.getLeafId()!;
    manager.appendMessage(user("abandoned"));
    manager.branch(fork);
    manager.appendModelChange("local", "m2");
    for (let i = 0; i < 9; i++) manager.appendMessage(user(`kept ${i}`));
    const path = manager.getSessionFile()!;
    const sessions = host().sessions;
    const whole = sessions.readBranch(path);
    expect(whole.entries).to.have.length(60);
    for (const count of [1, 7, 60, 500]) {
      const tail = sessions.readBranchTail(path, count);
      const start = Math.max(0, 60 - count);
      expect(tail, `last ${count}`).to.deep.equal({
        header: whole.header,
        entries: whole.entries.slice(start),
        start,
        length: 60,
      });
    }
    // A line before the tail that is not JSON at all is never read; the tail is the same.
    manager.close();
    const lines = readFileSync(path, "utf8").split("\n");
    lines[3] = lines[3]!.replace('"content"', '"content":,');
    writeFileSync(path, lines.join("\n"));
    const tail = sessions.readBranchTail(path, 5);
    expect(tail.entries.map((e) => e.id)).to.deep.equal(whole.entries.slice(55).map((e) => e.id));
    expect(tail.length).to.equal(60);
  });

  it("reads the active branch without opening the file, forks it, and points a closed session elsewhere", () => {
    const cwd = join(tmp.path, "p");
    const manager = SessionManager.create({ cwd, agentDir: agentDir() });
    manager.appendMessage(user("root"));
    const fork = manager.getLeafId()!;
    manager.appendMessage(user("abandoned"));
    manager.branch(fork);
    manager.appendMessage(user("kept"));
    const path = manager.getSessionFile()!;
    const sessions = host().sessions;
    // Read while it is open elsewhere: no lock is taken.
    const read = sessions.readBranch(path);
    expect(read.header.id).to.equal(manager.getSessionId());
    expect(read.entries.map((e) => (e.type === "message" ? e.message.content : e.type))).to.deep.equal([
      "root",
      "kept",
    ]);
    expect(() => sessions.setCwd(path, tmp.path))
      .to.throw()
      .with.property("code", "KC_ERR_SESSION_LOCKED");
    expect(() => sessions.archive(path))
      .to.throw()
      .with.property("code", "KC_ERR_SESSION_LOCKED");
    manager.close();

    const copy = sessions.fork(path);
    expect(sessions.header(copy.path)).to.include({ id: copy.id, cwd, parentSession: path });
    expect(statSync(copy.path).mode & 0o777).to.equal(0o600);
    expect(sessions.readBranch(copy.path).entries.map((e) => e.id)).to.deep.equal(
      read.entries.map((e) => e.id),
    );
    expect(sessions.page({ cwd }).sessions.map((s) => s.id)).to.have.members([copy.id, read.header.id]);

    const before = readFileSync(path, "utf8").split("\n").slice(1).join("\n");
    sessions.setCwd(path, tmp.path);
    expect(sessions.header(path)?.cwd).to.equal(tmp.path);
    expect(readFileSync(path, "utf8").split("\n").slice(1).join("\n")).to.equal(before);

    const archived = sessions.archive(path);
    expect(sessions.find(read.header.id)).to.equal(undefined);
    expect(sessions.find(read.header.id, { archived: true })?.path).to.equal(archived);
    expect(sessions.page({ archived: true }).sessions.map((s) => s.id)).to.deep.equal([read.header.id]);
    sessions.remove(archived);
    expect(sessions.find(read.header.id, { archived: true })).to.equal(undefined);
  });
});
