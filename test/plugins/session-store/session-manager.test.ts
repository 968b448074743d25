/**
 * SessionManager with real files: create, append, reopen, the entry tree (branches in one file), fork and clone,
 * resuming, in-memory sessions, and the errors for misuse.
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { expect } from "chai";
import { encodeCwd } from "../../../plugins/session-store/paths.js";
import { SessionManager } from "../../../plugins/session-store/session-manager.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { assistant, jsonLines, sleep, user } from "./helpers.js";

describe("session-store: SessionManager", () => {
  const tmp = useTempDir("kc-sessions-");
  let managers: SessionManager[] = [];
  const track = (manager: SessionManager) => {
    managers.push(manager);
    return manager;
  };
  afterEach(() => {
    for (const manager of managers) manager.close();
    managers = [];
  });
  const agentDir = () => join(tmp.path, "agent");
  const cwd = () => join(tmp.path, "project");

  describe("files and format", () => {
    it("writes nothing until the first append, then the header and the entry, in the cwd's dir", () => {
      const session = track(SessionManager.create({ cwd: cwd(), agentDir: agentDir() }));
      const file = session.getSessionFile()!;
      expect(existsSync(file)).to.equal(false);
      expect(existsSync(agentDir())).to.equal(false);

      const entry = session.appendMessage(user("hello"));
      const expectedDir = join(agentDir(), "sessions", `--${cwd().slice(1).replaceAll("/", "-")}--`);
      expect(dirname(file)).to.equal(expectedDir);
      expect(basename(dirname(file))).to.equal(encodeCwd(cwd()));
      expect(basename(file)).to.match(/^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f-]{36}\.jsonl$/);
      expect(basename(file)).to.contain(session.getSessionId());
      // It holds the conversation and every tool's output: readable only by its owner.
      expect(statSync(file).mode & 0o777).to.equal(0o600);

      const [header, line] = jsonLines(file);
      expect(header).to.deep.equal({
        type: "session",
        version: 3,
        id: session.getSessionId(),
        timestamp: session.getHeader().timestamp,
        cwd: cwd(),
      });
      expect(line).to.deep.equal(entry);
      expect(entry.id).to.match(/^[0-9a-f]{8}$/);
      expect(entry.parentId).to.equal(null);
      expect(Number.isNaN(Date.parse(entry.timestamp))).to.equal(false);
    });

    it("uses sessionDir instead of <agentDir>/sessions when given", () => {
      const sessionDir = join(tmp.path, "elsewhere");
      const session = track(SessionManager.create({ cwd: cwd(), agentDir: agentDir(), sessionDir }));
      session.appendMessage(user("x"));
      expect(dirname(session.getSessionFile()!)).to.equal(join(sessionDir, encodeCwd(cwd())));
    });

    it("appends every entry type as a child of the leaf, and a reopen gives the same entries and leaf", () => {
      const session = track(SessionManager.create({ cwd: cwd(), agentDir: agentDir() }));
      const m1 = session.appendMessage(user("first"));
      const mc = session.appendModelChange("anthropic", "claude-x");
      const tl = session.appendThinkingLevelChange("high");
      const m2 = session.appendMessage(assistant("answer"));
      const cu = session.appendCustomEntry("my-ext", { state: 1 });
      const cm = session.appendCustomMessageEntry("note", "remember this", true, { why: "test" });
      const la = session.appendLabel(m1.id, "start");
      const si = session.appendSessionInfo("my session");
      const ce = session.appendContextEdit(m2.id, null);
      const co = session.appendCompaction("summary", m2.id, 1234, { files: [] });
      const bs = session.appendBranchSummary(m1.id, "a branch");

      const all = [m1, mc, tl, m2, cu, cm, la, si, ce, co, bs];
      for (let i = 1; i < all.length; i++) expect(all[i]!.parentId).to.equal(all[i - 1]!.id);
      expect(new Set(all.map((e) => e.id)).size).to.equal(all.length);
      expect(session.getLeafId()).to.equal(bs.id);
      expect(session.getLabel(m1.id)).to.equal("start");
      expect(session.getSessionName()).to.equal("my session");
      const file = session.getSessionFile()!;
      expect(jsonLines(file)).to.have.length(all.length + 1);
      session.close();

      const reopened = track(SessionManager.open(file));
      expect(reopened.warnings).to.deep.equal([]);
      expect(reopened.getEntries()).to.deep.equal(all);
      expect(reopened.getLeafId()).to.equal(bs.id);
      expect(reopened.getSessionId()).to.equal(session.getSessionId());
      expect(reopened.getCwd()).to.equal(cwd());
      expect(reopened.getLabel(m1.id)).to.equal("start");
      expect(reopened.getSessionName()).to.equal("my session");
      expect(reopened.getEntry(m2.id)).to.deep.equal(m2);

      // Appends after the reopen continue the same chain in the same file.
      const m3 = reopened.appendMessage(user("more"));
      expect(m3.parentId).to.equal(bs.id);
      expect(jsonLines(file)).to.have.length(all.length + 2);
    });

    it("durability 'fsync' appends and reopens the same", () => {
      const session = track(SessionManager.create({ cwd: cwd(), agentDir: agentDir(), durability: "fsync" }));
      const a = session.appendMessage(user("a"));
      const b = session.appendMessage(assistant("b"));
      session.close();
      const reopened = track(SessionManager.open(session.getSessionFile()!, { durability: "fsync" }));
      expect(reopened.getEntries()).to.deep.equal([a, b]);
      reopened.appendMessage(user("c"));
      expect(jsonLines(session.getSessionFile()!)).to.have.length(4);
    });

    it("stores what the file holds, not the caller's objects", () => {
      const session = track(SessionManager.create({ cwd: cwd(), agentDir: agentDir() }));
      const message = user("original");
      const entry = session.appendMessage(message);
      message.content = "mutated later";
      expect((entry.message as { content: string }).content).to.equal("original");
      expect(session.appendCustomEntry("x")).to.not.have.property("data");
    });

    it("later labels and names win; clearing removes them", () => {
      const session = track(SessionManager.create({ cwd: cwd(), agentDir: agentDir() }));
      const m = session.appendMessage(user("a"));
      session.appendLabel(m.id, "one");
      session.appendLabel(m.id, "two");
      session.appendSessionInfo("first name");
      session.appendSessionInfo("second name");
      expect(session.getLabel(m.id)).to.equal("two");
      expect(session.getSessionName()).to.equal("second name");
      session.appendLabel(m.id);
      session.appendSessionInfo();
      expect(session.getLabel(m.id)).to.equal(undefined);
      expect(session.getSessionName()).to.equal(undefined);
    });
  });

  describe("entries of a bad shape", () => {
    /** A session whose lines 3-5 are JSON of a bad shape for their type; line 6 is an unknown, newer type. */
    function damaged(): string {
      const session = SessionManager.create({ cwd: cwd(), agentDir: agentDir() });
      const first = session.appendMessage(user("question"));
      session.close();
      const file = session.getSessionFile()!;
      const line = (fields: object) =>
        `${JSON.stringify({ timestamp: new Date().toISOString(), ...fields })}\n`;
      const bad = [
        line({ type: "message", id: "bad00001", parentId: first.id, message: null }),
        line({
          type: "context_edit",
          id: "bad00002",
          parentId: "bad00001",
          targetId: first.id,
          replacement: 7,
        }),
        line({ type: "label", id: "bad00003", parentId: "bad00002", targetId: ["x"] }),
        line({ type: "future_kind", id: "new00001", parentId: "bad00003", payload: { any: "thing" } }),
        `${JSON.stringify({ type: "message", id: "good0001", parentId: "new00001", timestamp: new Date().toISOString(), message: assistant("answer") })}\n`,
      ];
      writeFileSync(file, readFileSync(file, "utf8") + bad.join(""));
      return file;
    }

    it("skips each with a warning naming file, line, entry and field, and keeps the branch connected", () => {
      const file = damaged();
      const session = track(SessionManager.open(file));
      expect(session.warnings.slice(0, 3)).to.deep.equal([
        `${file}: line 3 (message entry bad00001): message must be an object, not null, so it was skipped`,
        `${file}: line 4 (context_edit entry bad00002): replacement must be an object, not number, so it was skipped`,
        `${file}: line 5 (label entry bad00003): targetId: expected string, so it was skipped`,
      ]);
      expect(session.warnings[3]).to.contain("line 6 (entry new00001) refers to a missing parent bad00003");
      // An entry type this version does not know is kept as it is.
      expect(session.getBranch().map((e) => e.type)).to.deep.equal(["message", "future_kind", "message"]);
      expect(session.buildContext().messages.map((m) => m.role)).to.deep.equal(["user", "assistant"]);
      // Appends continue the branch from the last good entry.
      session.appendMessage(user("next"));
      expect(session.getBranch().at(-2)!.id).to.equal("good0001");
    });
  });

  describe("tree", () => {
    it("branch() makes the next append a sibling in the same file; getBranch/getTree/getChildren follow", () => {
      const session = track(SessionManager.create({ cwd: cwd(), agentDir: agentDir() }));
      const a = session.appendMessage(user("a"));
      const b = session.appendMessage(assistant("b"));
      const c = session.appendMessage(user("c"));
      session.branch(a.id);
      expect(session.getLeafId()).to.equal(a.id);
      const d = session.appendMessage(assistant("d"));
      const e = session.appendMessage(user("e"));
      session.appendLabel(d.id, "retry");

      expect(d.parentId).to.equal(a.id);
      expect(session.getChildren(a.id).map((x) => x.id)).to.deep.equal([b.id, d.id]);
      expect(session.getChildren(c.id)).to.deep.equal([]);
      expect(
        session
          .getBranch()
          .map((x) => x.id)
          .slice(0, 3),
      ).to.deep.equal([a.id, d.id, e.id]);
      expect(session.getBranch(c.id).map((x) => x.id)).to.deep.equal([a.id, b.id, c.id]);

      const tree = session.getTree();
      expect(tree).to.have.length(1);
      expect(tree[0]!.entry.id).to.equal(a.id);
      expect(tree[0]!.children.map((n) => n.entry.id)).to.deep.equal([b.id, d.id]);
      expect(tree[0]!.children[1]!.label).to.equal("retry");
      expect(tree[0]!.children[0]!.children[0]!.entry.id).to.equal(c.id);

      // One file, all entries; the reopened leaf is the file's last entry (the label).
      const file = session.getSessionFile()!;
      session.close();
      const reopened = track(SessionManager.open(file));
      expect(reopened.getEntries()).to.have.length(6);
      expect(reopened.getLeafId()).to.equal(session.getLeafId());
      expect(
        reopened
          .getBranch()
          .map((x) => x.id)
          .slice(0, 3),
      ).to.deep.equal([a.id, d.id, e.id]);
      expect(reopened.getChildren(a.id).map((x) => x.id)).to.deep.equal([b.id, d.id]);
    });

    it("resetLeaf() makes the next append a new root", () => {
      const session = track(SessionManager.create({ cwd: cwd(), agentDir: agentDir() }));
      const a = session.appendMessage(user("a"));
      session.resetLeaf();
      expect(session.getLeafId()).to.equal(null);
      expect(session.getBranch()).to.deep.equal([]);
      const b = session.appendMessage(user("b"));
      expect(b.parentId).to.equal(null);
      expect(session.getTree().map((n) => n.entry.id)).to.deep.equal([a.id, b.id]);
      expect(session.getChildren(a.id)).to.deep.equal([]);
    });

    it("refuses unknown ids with errors naming the id and the file", () => {
      const session = track(SessionManager.create({ cwd: cwd(), agentDir: agentDir() }));
      const a = session.appendMessage(user("a"));
      const file = session.getSessionFile()!;
      const expectEntryError = (fn: () => unknown) => {
        try {
          fn();
        } catch (error) {
          expect((error as { code?: string }).code).to.equal("KC_ERR_SESSION_ENTRY");
          expect((error as Error).message)
            .to.contain("nope1234")
            .and.contain(file);
          return;
        }
        expect.fail("expected an error");
      };
      expectEntryError(() => session.branch("nope1234"));
      expectEntryError(() => session.getBranch("nope1234"));
      expectEntryError(() => session.appendLabel("nope1234", "x"));
      expectEntryError(() => session.appendContextEdit("nope1234", null));
      expectEntryError(() => session.appendCompaction("s", "nope1234", 1));
      expectEntryError(() => session.createBranchedSession("nope1234"));
      expect(session.getLeafId()).to.equal(a.id);
      expect(jsonLines(file)).to.have.length(2);
    });
  });

  describe("fork and clone", () => {
    it("createBranchedSession writes a new file with the path root→leafId and parentSession", () => {
      const session = track(SessionManager.create({ cwd: cwd(), agentDir: agentDir() }));
      const a = session.appendMessage(user("a"));
      const b = session.appendMessage(assistant("b"));
      session.appendMessage(user("c"));
      const file = session.getSessionFile()!;

      const fork = track(session.createBranchedSession(b.id));
      const forkFile = fork.getSessionFile()!;
      expect(forkFile).to.not.equal(file);
      expect(dirname(forkFile)).to.equal(dirname(file));
      expect(fork.getSessionId()).to.not.equal(session.getSessionId());
      expect(fork.getHeader().parentSession).to.equal(file);
      expect(fork.getEntries()).to.deep.equal([a, b]);
      expect(fork.getLeafId()).to.equal(b.id);
      const lines = jsonLines(forkFile);
      expect(lines[0]).to.include({ type: "session", parentSession: file, cwd: cwd() });
      expect(lines.slice(1)).to.deep.equal([a, b]);

      // The fork is independent: appends go to its file only.
      const d = fork.appendMessage(user("d"));
      expect(d.parentId).to.equal(b.id);
      expect(jsonLines(forkFile)).to.have.length(4);
      expect(jsonLines(file)).to.have.length(4);

      // It is locked like any open session, and reopens the same.
      fork.close();
      const reopened = track(SessionManager.open(forkFile));
      expect(reopened.getBranch().map((e) => e.id)).to.deep.equal([a.id, b.id, d.id]);
    });

    it("a fork to another cwd goes to that cwd's dir", () => {
      const session = track(SessionManager.create({ cwd: cwd(), agentDir: agentDir() }));
      const a = session.appendMessage(user("a"));
      const other = join(tmp.path, "other");
      const fork = track(session.createBranchedSession(a.id, { cwd: other }));
      expect(dirname(fork.getSessionFile()!)).to.equal(join(agentDir(), "sessions", encodeCwd(other)));
      expect(fork.getCwd()).to.equal(other);
      expect(SessionManager.list({ cwd: other, agentDir: agentDir() }).map((s) => s.id)).to.deep.equal([
        fork.getSessionId(),
      ]);
    });

    it("clone() copies the active branch only", () => {
      const session = track(SessionManager.create({ cwd: cwd(), agentDir: agentDir() }));
      const a = session.appendMessage(user("a"));
      session.appendMessage(assistant("b"));
      session.branch(a.id);
      const c = session.appendMessage(assistant("c"));
      const clone = track(session.clone());
      expect(clone.getEntries().map((e) => e.id)).to.deep.equal([a.id, c.id]);
      expect(clone.getLeafId()).to.equal(c.id);
      expect(clone.getHeader().parentSession).to.equal(session.getSessionFile());
      expect(jsonLines(clone.getSessionFile()!)).to.have.length(3);
    });
  });

  describe("resume", () => {
    it("continueRecent opens the most recently active session of the cwd, or creates one", async () => {
      const location = { cwd: cwd(), agentDir: agentDir() };
      const fresh = track(SessionManager.continueRecent(location));
      expect(fresh.getEntries()).to.deep.equal([]);
      expect(existsSync(fresh.getSessionFile()!)).to.equal(false);
      fresh.close();

      const older = track(SessionManager.create(location));
      older.appendMessage(user("older"));
      await sleep(5);
      const newer = track(SessionManager.create(location));
      newer.appendMessage(user("newer"));
      // Another cwd's session is more recent still, and must not be picked.
      await sleep(5);
      const elsewhere = track(SessionManager.create({ cwd: join(tmp.path, "other"), agentDir: agentDir() }));
      elsewhere.appendMessage(user("elsewhere"));
      newer.close();
      older.close();

      const resumed = track(SessionManager.continueRecent(location));
      expect(resumed.getSessionId()).to.equal(newer.getSessionId());
      expect(resumed.getLeafId()).to.equal(newer.getLeafId());
      resumed.close();

      // Activity in the older session makes it the most recent.
      await sleep(5);
      const reopenedOlder = track(SessionManager.open(older.getSessionFile()!));
      reopenedOlder.appendMessage(assistant("back"));
      reopenedOlder.close();
      expect(track(SessionManager.continueRecent(location)).getSessionId()).to.equal(older.getSessionId());
    });

    it("findById resolves a full id or a unique prefix to the file", () => {
      const location = { cwd: cwd(), agentDir: agentDir() };
      const a = track(SessionManager.create(location));
      a.appendMessage(user("a"));
      const b = track(SessionManager.create({ ...location, cwd: join(tmp.path, "b") }));
      b.appendMessage(user("b"));
      expect(SessionManager.findById(a.getSessionId(), location)).to.equal(a.getSessionFile());
      expect(SessionManager.findById(b.getSessionId().slice(0, 8), location)).to.equal(b.getSessionFile());
      expect(() => SessionManager.findById("zzzz", location))
        .to.throw(/No session with id zzzz/)
        .with.property("code", "KC_ERR_SESSION_NOT_FOUND");
      expect(() => SessionManager.findById("", location))
        .to.throw()
        .with.property("code", "KC_ERR_SESSION_NOT_FOUND");
    });

    it("findById reports an ambiguous prefix", () => {
      const dir = join(agentDir(), "sessions", encodeCwd(cwd()));
      const header = (id: string) =>
        `${JSON.stringify({ type: "session", version: 3, id, timestamp: new Date().toISOString(), cwd: cwd() })}\n`;
      tmp.write(
        join("agent", "sessions", encodeCwd(cwd()), "t1_abc11111-0000-0000-0000-000000000000.jsonl"),
        header("abc11111-0000-0000-0000-000000000000"),
      );
      tmp.write(
        join("agent", "sessions", encodeCwd(cwd()), "t2_abc22222-0000-0000-0000-000000000000.jsonl"),
        header("abc22222-0000-0000-0000-000000000000"),
      );
      expect(readdirSync(dir)).to.have.length(2);
      expect(() => SessionManager.findById("abc", { agentDir: agentDir() }))
        .to.throw(/matches 2 sessions/)
        .with.property("code", "KC_ERR_SESSION_AMBIGUOUS");
      expect(SessionManager.findById("abc2", { agentDir: agentDir() })).to.contain("abc22222");
    });
  });

  describe("in memory", () => {
    it("never touches disk, and still supports the tree, context, fork and clone", () => {
      const before = readdirSync(tmp.path);
      const session = track(SessionManager.inMemory(cwd()));
      expect(session.getSessionFile()).to.equal(undefined);
      const a = session.appendMessage(user("a"));
      session.appendMessage(assistant("b"));
      session.branch(a.id);
      const c = session.appendMessage(assistant("c"));
      session.appendSessionInfo("memory");
      expect(
        session
          .getBranch()
          .map((e) => e.id)
          .slice(0, 2),
      ).to.deep.equal([a.id, c.id]);
      expect(session.buildContext().messages).to.have.length(2);

      const fork = track(session.createBranchedSession(c.id));
      expect(fork.getSessionFile()).to.equal(undefined);
      expect(fork.getEntries().map((e) => e.id)).to.deep.equal([a.id, c.id]);
      expect(track(session.clone()).getSessionFile()).to.equal(undefined);
      session.close();
      expect(readdirSync(tmp.path)).to.deep.equal(before);
      expect(existsSync(join(tmp.path, "agent"))).to.equal(false);
    });
  });

  describe("errors", () => {
    it("open() of a missing file, a non-session file and an empty file names the path", () => {
      const missing = join(tmp.path, "missing.jsonl");
      expect(() => SessionManager.open(missing))
        .to.throw(`Session file ${missing} does not exist`)
        .with.property("code", "KC_ERR_SESSION_NOT_FOUND");

      const notSession = tmp.write(
        "not-session.jsonl",
        '{"type":"message","id":"aaaaaaaa","parentId":null}\n',
      );
      expect(() => SessionManager.open(notSession))
        .to.throw(`${notSession} is not a KnightCode session file: line 1 should be the session header`)
        .with.property("code", "KC_ERR_SESSION_INVALID");

      const garbage = tmp.write("garbage.jsonl", "hello world\n");
      expect(() => SessionManager.open(garbage))
        .to.throw(garbage)
        .with.property("code", "KC_ERR_SESSION_INVALID");

      const empty = tmp.write("empty.jsonl", "");
      expect(() => SessionManager.open(empty))
        .to.throw(/is empty/)
        .with.property("code", "KC_ERR_SESSION_INVALID");

      const v2 = tmp.write("v2.jsonl", '{"type":"session","version":2,"id":"x","timestamp":"t","cwd":"/"}\n');
      expect(() => SessionManager.open(v2)).to.throw(/version 2 is not supported/);

      // A refused open leaves no lock behind.
      expect(existsSync(`${notSession}.lock`)).to.equal(false);
    });

    it("appends after close() are refused; close() is idempotent and releases the lock", () => {
      const session = track(SessionManager.create({ cwd: cwd(), agentDir: agentDir() }));
      session.appendMessage(user("a"));
      const file = session.getSessionFile()!;
      expect(existsSync(`${file}.lock`)).to.equal(true);
      session.close();
      session.close();
      expect(existsSync(`${file}.lock`)).to.equal(false);
      expect(() => session.appendMessage(user("b")))
        .to.throw(`Cannot append to session file ${file}: the session was closed`)
        .with.property("code", "KC_ERR_SESSION_CLOSED");
      expect(session.getEntries()).to.have.length(1);
      expect(readFileSync(file, "utf8").split("\n")).to.have.length(3);
    });

    it("an unwritable session dir gives an IO error naming the dir", () => {
      const blocker = tmp.write("blocker", "a file where the agent dir should be");
      const session = track(SessionManager.create({ cwd: cwd(), agentDir: blocker }));
      expect(() => session.appendMessage(user("a")))
        .to.throw(/Cannot create session directory/)
        .with.property("code", "KC_ERR_SESSION_IO");
    });
  });
});
