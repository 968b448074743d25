/**
 * Listing: per cwd and across cwds, with counts, names and first messages; large files read only at their ends
 * plus a prefix scan; the summary cache reused when nothing changed and refreshed when a file did.
 */
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { sessionIndexStats } from "../../../plugins/session-store/list.js";
import { encodeCwd, SESSION_INDEX_FILE } from "../../../plugins/session-store/paths.js";
import { SessionManager } from "../../../plugins/session-store/session-manager.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { assistant, sleep, user } from "./helpers.js";

describe("session-store: listing", () => {
  const tmp = useTempDir("kc-list-");
  const agentDir = () => join(tmp.path, "agent");
  const projectA = () => join(tmp.path, "a");
  const projectB = () => join(tmp.path, "b");
  const indexFile = () => join(agentDir(), "sessions", SESSION_INDEX_FILE);

  /** Three sessions: two in A (one named, one without messages), one in B. Created oldest first. */
  async function populate() {
    const named = SessionManager.create({ cwd: projectA(), agentDir: agentDir() });
    named.appendCustomEntry("setup");
    named.appendMessage(user([1, 2].map((n) => `part ${n}`).join(" ")));
    named.appendMessage(assistant("reply"));
    named.appendSessionInfo("Refactor the parser");
    const fork = named.getLeafId()!;
    // Labels: one that stays, one cleared later, one replaced (the replacement counts, at its later position).
    named.appendLabel(fork, "first try");
    named.appendLabel(named.getEntries()[1]!.id, "scratch");
    named.appendLabel(named.getEntries()[1]!.id, undefined);
    named.appendLabel(named.getEntries()[0]!.id, "setup done");
    named.appendLabel(fork, "parser start");
    named.appendMessage(user("second question"));
    named.branch(fork);
    named.appendMessage(user("other branch"));
    named.close();
    await sleep(5);
    const noMessages = SessionManager.create({ cwd: projectA(), agentDir: agentDir() });
    noMessages.appendModelChange("p", "m");
    noMessages.close();
    await sleep(5);
    const other = SessionManager.create({ cwd: projectB(), agentDir: agentDir() });
    other.appendMessage({ role: "user", content: [{ type: "text", text: "from B" }], timestamp: Date.now() });
    other.close();
    return { named, noMessages, other };
  }

  it("lists one cwd's sessions, newest first, with id, cwd, name, dates, counts and first message", async () => {
    const { named, noMessages } = await populate();
    const list = SessionManager.list({ cwd: projectA(), agentDir: agentDir() });
    expect(list.map((s) => s.id)).to.deep.equal([noMessages.getSessionId(), named.getSessionId()]);

    const [empty, first] = list;
    expect(first).to.deep.include({
      path: named.getSessionFile(),
      id: named.getSessionId(),
      cwd: projectA(),
      name: "Refactor the parser",
      messageCount: 4,
      firstMessage: "part 1 part 2",
      labels: ["setup done", "parser start"],
    });
    expect(first!.created.toISOString()).to.equal(named.getHeader().timestamp);
    const lastMessage = named
      .getEntries()
      .filter((e) => e.type === "message")
      .at(-1)!;
    expect(first!.modified.toISOString()).to.equal(lastMessage.timestamp);

    expect(empty).to.deep.include({ messageCount: 0, firstMessage: "(no messages)" });
    expect(empty).to.not.have.property("name");
    expect(empty).to.not.have.property("labels");
    expect(empty!.modified.toISOString()).to.equal(noMessages.getHeader().timestamp);
  });

  it("lists every cwd with listAll, and nothing for an unknown cwd or a missing session dir", async () => {
    const { named, noMessages, other } = await populate();
    const all = SessionManager.listAll({ agentDir: agentDir() });
    expect(all.map((s) => s.id)).to.deep.equal([
      other.getSessionId(),
      noMessages.getSessionId(),
      named.getSessionId(),
    ]);
    expect(all[0]).to.deep.include({ cwd: projectB(), messageCount: 1, firstMessage: "from B" });
    expect(SessionManager.list({ cwd: join(tmp.path, "none"), agentDir: agentDir() })).to.deep.equal([]);
    expect(SessionManager.listAll({ agentDir: join(tmp.path, "no-agent") })).to.deep.equal([]);
  });

  it("skips files that are not sessions, lock files and the cache; a session whose header names another cwd is not that cwd's", async () => {
    const { named } = await populate();
    const dir = join("agent", "sessions", encodeCwd(projectA()));
    tmp.write(join(dir, "broken.jsonl"), "not json at all\n");
    tmp.write(join(dir, "empty.jsonl"), "");
    tmp.write(
      join(dir, "foreign.jsonl"),
      `${JSON.stringify({ type: "session", version: 3, id: "foreign", timestamp: new Date().toISOString(), cwd: "/a-b" })}\n`,
    );
    const held = SessionManager.open(named.getSessionFile()!); // leaves a .lock next to it
    try {
      expect(SessionManager.list({ cwd: projectA(), agentDir: agentDir() })).to.have.length(2);
      expect(SessionManager.listAll({ agentDir: agentDir() }).map((s) => s.id)).to.include("foreign");
    } finally {
      held.close();
    }
  });

  it("reads only the ends of a large file plus a prefix scan, and still counts exactly", () => {
    const session = SessionManager.create({ cwd: projectA(), agentDir: agentDir() });
    session.appendSessionInfo("named long ago");
    const question = session.appendMessage(user("the very first question"));
    session.appendLabel(question.id, "origin");
    const big = "x".repeat(10_000);
    for (let i = 0; i < 60; i++) session.appendMessage(i % 2 ? assistant(big) : user(big));
    session.appendCustomEntry("tail-noise", { big });
    session.close();
    const file = session.getSessionFile()!;
    expect(readFileSync(file).length).to.be.greaterThan(3 * 64 * 1024);

    const [info] = SessionManager.list({ cwd: projectA(), agentDir: agentDir() });
    expect(info).to.deep.include({
      messageCount: 61,
      firstMessage: "the very first question",
      name: "named long ago",
      labels: ["origin"],
    });

    // A torn last line is not counted; a name in the tail wins.
    rmSync(indexFile());
    appendFileSync(
      file,
      `${JSON.stringify({ type: "session_info", id: "0000aaaa", parentId: null, timestamp: new Date().toISOString(), name: "renamed" })}\n`,
    );
    appendFileSync(file, '{"type":"message","id":"0000bbbb","parentId":"0000aaaa","timestamp":"2026');
    const [again] = SessionManager.list({ cwd: projectA(), agentDir: agentDir() });
    expect(again).to.deep.include({ messageCount: 61, name: "renamed" });
  });

  it("counts only the appended part of a large file that grew since the last listing", () => {
    const session = SessionManager.create({ cwd: projectA(), agentDir: agentDir() });
    const firstEntry = session.appendMessage(user("first"));
    const big = "y".repeat(10_000);
    for (let i = 0; i < 30; i++) session.appendMessage(i % 2 ? assistant(big) : user(big));
    session.appendSessionInfo("early name");
    session.appendLabel(firstEntry.id, "start here");
    for (let i = 0; i < 30; i++) session.appendMessage(i % 2 ? assistant(big) : user(big));
    session.close();
    const file = session.getSessionFile()!;
    const list = () => SessionManager.list({ cwd: projectA(), agentDir: agentDir() })[0];
    expect(list()).to.deep.include({ messageCount: 61, name: "early name", firstMessage: "first" });

    // Make an early message line no longer look like one (same length): a full rescan would count 60 from now
    // on, a count that continues from the last one still says 61 for that part of the file.
    const text = readFileSync(file, "utf8");
    const early = text.indexOf('{"type":"message"', text.indexOf("\n") + 1);
    writeFileSync(file, `${text.slice(0, early)}{"type":"messagX"${text.slice(early + 17)}`);
    const reopened = SessionManager.open(file);
    reopened.appendMessage(user("appended"));
    const answered = reopened.appendMessage(assistant("answered"));
    reopened.appendLabel(answered.id, "appended label");
    reopened.close();
    // The size changed (the rewrite above kept it), so this listing continues the count: 61 + 2; the label counted
    // in the earlier part is still listed, beside one set in the appended part.
    expect(list()).to.deep.include({ messageCount: 63, name: "early name", firstMessage: "first" });
    expect(list()!.labels).to.deep.equal(["start here", "appended label"]);

    // A file that did not only grow (here: shrank) is counted from the start again.
    writeFileSync(file, readFileSync(file, "utf8").replace(`${"y".repeat(10_000)}`, "short"));
    expect(list()).to.deep.include({ messageCount: 62 });
  });

  it("reuses the cache when nothing changed and rescans only a changed file", async () => {
    const { named } = await populate();
    expect(existsSync(indexFile())).to.equal(false);

    const scanned0 = sessionIndexStats.filesScanned;
    const first = SessionManager.listAll({ agentDir: agentDir() });
    expect(sessionIndexStats.filesScanned - scanned0).to.equal(3);
    const cache = JSON.parse(readFileSync(indexFile(), "utf8"));
    expect(Object.keys(cache.files).sort()).to.deep.equal(first.map((s) => s.path).sort());

    // Nothing changed: no file is read and the cache is not rewritten.
    const writes = sessionIndexStats.indexWrites;
    const scanned1 = sessionIndexStats.filesScanned;
    const second = SessionManager.listAll({ agentDir: agentDir() });
    expect(sessionIndexStats.filesScanned - scanned1).to.equal(0);
    expect(sessionIndexStats.indexWrites).to.equal(writes);
    expect(second).to.deep.equal(first);
    expect(SessionManager.list({ cwd: projectA(), agentDir: agentDir() })).to.have.length(2);
    expect(sessionIndexStats.filesScanned - scanned1).to.equal(0);

    // One file changes: only it is read, and its summary is current.
    await sleep(5);
    const reopened = SessionManager.open(named.getSessionFile()!);
    reopened.appendMessage(user("one more"));
    reopened.appendSessionInfo("Renamed");
    reopened.close();
    const scanned2 = sessionIndexStats.filesScanned;
    const third = SessionManager.listAll({ agentDir: agentDir() });
    expect(sessionIndexStats.filesScanned - scanned2).to.equal(1);
    expect(third[0]).to.deep.include({ id: named.getSessionId(), messageCount: 5, name: "Renamed" });

    // A deleted file disappears from the listing and from the cache.
    rmSync(named.getSessionFile()!);
    expect(SessionManager.listAll({ agentDir: agentDir() })).to.have.length(2);
    expect(Object.keys(JSON.parse(readFileSync(indexFile(), "utf8")).files)).to.have.length(2);
  });

  it("ignores and rebuilds a corrupt cache", async () => {
    await populate();
    const expected = SessionManager.listAll({ agentDir: agentDir() });
    writeFileSync(indexFile(), '{"version":1,"files":{"tru');
    const scanned = sessionIndexStats.filesScanned;
    expect(SessionManager.listAll({ agentDir: agentDir() })).to.deep.equal(expected);
    expect(sessionIndexStats.filesScanned - scanned).to.equal(3);
    expect(JSON.parse(readFileSync(indexFile(), "utf8")).files).to.be.an("object");

    // Records of the wrong shape are rescanned, not trusted.
    const cache = JSON.parse(readFileSync(indexFile(), "utf8"));
    for (const key of Object.keys(cache.files)) cache.files[key] = "nonsense";
    writeFileSync(indexFile(), JSON.stringify(cache));
    expect(SessionManager.listAll({ agentDir: agentDir() })).to.deep.equal(expected);
  });
});
