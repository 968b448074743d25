/**
 * Crash safety: torn last lines, malformed lines in the middle, and a real child process killed with SIGKILL
 * while appending — every entry it acknowledged must be in the file afterwards.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { SessionManager } from "../../../plugins/session-store/session-manager.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { assistant, jsonLines, user } from "./helpers.js";

const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const APPEND_LOOP = fileURLToPath(new URL("./fixtures/append-loop.ts", import.meta.url));

describe("session-store: crash safety", () => {
  const tmp = useTempDir("kc-crash-");
  let managers: SessionManager[] = [];
  const track = (manager: SessionManager) => {
    managers.push(manager);
    return manager;
  };
  afterEach(() => {
    for (const manager of managers) manager.close();
    managers = [];
  });

  /** A closed session file with three messages; returns its path and entry ids. */
  function writeSession(): { file: string; ids: string[] } {
    const session = SessionManager.create({
      cwd: join(tmp.path, "project"),
      agentDir: join(tmp.path, "agent"),
    });
    const ids = [
      session.appendMessage(user("one")).id,
      session.appendMessage(assistant("two")).id,
      session.appendMessage(user("three")).id,
    ];
    session.close();
    return { file: session.getSessionFile()!, ids };
  }

  it("skips a torn last line with a warning, keeps its bytes, and starts the next append on a line of its own", () => {
    const { file, ids } = writeSession();
    const torn = JSON.stringify({
      type: "message",
      id: "deadbeef",
      parentId: ids[2],
      timestamp: "t",
      message: user("four"),
    }).slice(0, 40);
    appendFileSync(file, torn);
    const before = readFileSync(file, "utf8");

    const session = track(SessionManager.open(file));
    expect(session.warnings).to.deep.equal([
      `${file}: line 5 is incomplete (torn write?) and was skipped; it stays in the file, and the next entry starts on a new line`,
    ]);
    expect(session.getEntries().map((e) => e.id)).to.deep.equal(ids);
    expect(session.getLeafId()).to.equal(ids[2]);
    // Opening alone does not modify the file.
    expect(readFileSync(file, "utf8")).to.equal(before);

    const next = session.appendMessage(assistant("four, again"));
    expect(next.parentId).to.equal(ids[2]);
    // The torn bytes are where they were, ended by a newline; the new entry is a line of its own after them.
    const after = readFileSync(file, "utf8");
    expect(after.startsWith(`${before}\n`)).to.equal(true);
    const lines = after.split("\n");
    expect(lines[4]).to.equal(torn);
    expect(JSON.parse(lines[5]!).id).to.equal(next.id);
    expect(lines).to.have.length(7); // header, three entries, the torn line, the new entry, and the final ""
    session.close();

    // From now on the torn bytes are a malformed line in the middle: reported, skipped, kept.
    const reopened = track(SessionManager.open(file));
    expect(reopened.warnings).to.deep.equal([`${file}: line 5 is not valid JSON and was skipped`]);
    expect(reopened.getBranch().map((e) => e.id)).to.deep.equal([...ids, next.id]);
    reopened.appendMessage(user("five"));
    expect(readFileSync(file, "utf8").split("\n")[4]).to.equal(torn);
  });

  it("a complete last line without its newline is kept, and the next append starts on a fresh line", () => {
    const { file, ids } = writeSession();
    writeFileSync(file, readFileSync(file, "utf8").replace(/\n$/, ""));
    const session = track(SessionManager.open(file));
    expect(session.warnings).to.deep.equal([]);
    expect(session.getLeafId()).to.equal(ids[2]);
    const next = session.appendMessage(user("four"));
    expect(
      jsonLines(file)
        .slice(1)
        .map((l) => l.id),
    ).to.deep.equal([...ids, next.id]);
  });

  it("skips a malformed line in the middle with its line number; both neighbours survive", () => {
    const { file, ids } = writeSession();
    const lines = readFileSync(file, "utf8").split("\n");
    // header, one, two, three → header, one, GARBAGE, two, three
    lines.splice(2, 0, "{this is not json");
    writeFileSync(file, lines.join("\n"));

    const session = track(SessionManager.open(file));
    expect(session.warnings).to.deep.equal([`${file}: line 3 is not valid JSON and was skipped`]);
    expect(session.getEntries().map((e) => e.id)).to.deep.equal(ids);
    expect(session.getBranch().map((e) => e.id)).to.deep.equal(ids);
    session.appendMessage(user("four"));
    expect(readFileSync(file, "utf8")).to.contain("{this is not json\n");
  });

  it("when the malformed line was an entry, its child is re-attached so the branch still reaches the root", () => {
    const { file, ids } = writeSession();
    const lines = readFileSync(file, "utf8").split("\n");
    lines[2] = `${lines[2]!.slice(0, 20)}#garbage#`; // entry "two" is damaged
    writeFileSync(file, lines.join("\n"));

    const session = track(SessionManager.open(file));
    expect(session.warnings).to.deep.equal([
      `${file}: line 3 is not valid JSON and was skipped`,
      `${file}: line 4 (entry ${ids[2]}) refers to a missing parent ${ids[1]}; attached it to the previous entry ${ids[0]}`,
    ]);
    expect(session.getBranch().map((e) => e.id)).to.deep.equal([ids[0], ids[2]]);
    expect(session.buildContext().messages).to.have.length(2);
  });

  it("reports lines that are JSON but not entries, and repeated ids, and keeps unknown entry types", () => {
    const { file, ids } = writeSession();
    appendFileSync(
      file,
      [
        "[1,2,3]",
        JSON.stringify({ type: "message", parentId: ids[2] }),
        JSON.stringify({ type: "future_thing", id: "0000abcd", parentId: ids[2], timestamp: "t", x: 1 }),
        JSON.stringify({ type: "label", id: ids[0], parentId: "0000abcd", timestamp: "t", targetId: ids[0] }),
        "",
      ].join("\n"),
    );
    const session = track(SessionManager.open(file));
    expect(session.warnings).to.deep.equal([
      `${file}: line 5 is not a JSON object, so it is not a session entry and was skipped`,
      `${file}: line 6 has no id, so it is not a session entry and was skipped`,
      `${file}: line 8 repeats entry id ${ids[0]} and was skipped`,
    ]);
    expect(session.getLeafId()).to.equal("0000abcd");
    expect(session.getEntry("0000abcd")).to.deep.include({ type: "future_thing", x: 1 });
    expect(session.buildContext().messages).to.have.length(3);
  });

  it("every entry a killed child acknowledged is in the file, and the file opens", async function () {
    this.timeout(120_000);
    const trials = 5;
    for (let trial = 0; trial < trials; trial++) {
      const agentDir = join(tmp.path, `agent-${trial}`);
      const delay = 50 + Math.floor(Math.random() * 350);
      const { file, acknowledged } = await runAndKill(agentDir, join(tmp.path, "project"), delay);
      expect(acknowledged.length, `trial ${trial}: the child acknowledged entries`).to.be.greaterThan(0);

      // The child's lock names a dead pid now: open takes it over.
      const session = track(SessionManager.open(file));
      const stored = new Set(session.getEntries().map((e) => e.id));
      const missing = acknowledged.filter((id) => !stored.has(id));
      expect(missing, `trial ${trial} (killed after ${delay} ms): acknowledged but missing`).to.deep.equal(
        [],
      );
      expect(session.warnings.every((w) => w.includes("incomplete (torn write?)"))).to.equal(true);
      expect(session.getBranch().length).to.equal(session.getEntries().length);

      // The file keeps working: append, reopen, all there; a torn tail is now a kept line in the middle.
      const after = session.appendMessage(user("after the crash"));
      session.close();
      const reopened = track(SessionManager.open(file));
      expect(reopened.warnings).to.have.length(session.warnings.length);
      expect(reopened.warnings.every((w) => w.includes("is not valid JSON and was skipped"))).to.equal(true);
      expect(reopened.getLeafId()).to.equal(after.id);
      reopened.close();
    }
  });
});

/**
 * Starts the append loop, waits (bounded) until it has created its file, kills it with SIGKILL after `delayMs`,
 * waits (bounded) for it to exit, and returns the ids it printed.
 */
async function runAndKill(
  agentDir: string,
  cwd: string,
  delayMs: number,
): Promise<{ file: string; acknowledged: string[] }> {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", "--conditions=knightcode-source", APPEND_LOOP, agentDir, cwd],
    { cwd: REPO_ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  try {
    await bounded(
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (/^file .+\n/.test(stdout)) resolve();
        };
        child.stdout!.on("data", check);
        child.once("exit", (code) => reject(new Error(`append loop exited early (${code}): ${stderr}`)));
      }),
      30_000,
      "the append loop to start",
    );
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    child.kill("SIGKILL");
    // "close" waits for stdout to drain too, so every id the child wrote before dying is in `stdout`.
    await bounded(exited, 10_000, "the killed append loop to exit");
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  const lines = stdout.split("\n");
  const file = lines[0]!.slice("file ".length);
  // The last element is a partial line (or empty): only complete lines count as acknowledged.
  const acknowledged = lines.slice(1, -1);
  for (const id of acknowledged) expect(id).to.match(/^[0-9a-f]{8}$/);
  return { file, acknowledged };
}

async function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
