/**
 * One owner per session file: a lock held by a live process refuses the open (naming the pid), a stale lock of
 * a dead process is taken over, and a second manager in the same process is refused.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { expect } from "chai";
import { SessionLockedError } from "../../../plugins/session-store/errors.js";
import { SessionManager } from "../../../plugins/session-store/session-manager.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { user } from "./helpers.js";

describe("session-store: lock", () => {
  const tmp = useTempDir("kc-lock-");
  let managers: SessionManager[] = [];
  let children: ChildProcess[] = [];
  const track = (manager: SessionManager) => {
    managers.push(manager);
    return manager;
  };
  afterEach(() => {
    for (const manager of managers) manager.close();
    managers = [];
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    children = [];
  });

  function closedSession(): string {
    const session = SessionManager.create({
      cwd: join(tmp.path, "project"),
      agentDir: join(tmp.path, "agent"),
    });
    session.appendMessage(user("hello"));
    session.close();
    return session.getSessionFile()!;
  }

  /** A real node process; with `exit`, waits (bounded) until it has exited and been reaped. */
  async function nodeProcess(code: string, exit: boolean): Promise<ChildProcess> {
    const child = spawn(process.execPath, ["-e", code], { stdio: "ignore" });
    children.push(child);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("child did not start/exit within 10 s")), 10_000);
      child.once(exit ? "exit" : "spawn", () => {
        clearTimeout(timer);
        resolve();
      });
      child.once("error", reject);
    });
    return child;
  }

  it("takes <file>.lock with our pid while open, and removes it on close", () => {
    const file = closedSession();
    expect(existsSync(`${file}.lock`)).to.equal(false);
    const session = track(SessionManager.open(file));
    expect(readFileSync(`${file}.lock`, "utf8").trim()).to.equal(String(process.pid));
    session.close();
    expect(existsSync(`${file}.lock`)).to.equal(false);
  });

  it("refuses a file locked by a live process, naming the file and the pid", async () => {
    const file = closedSession();
    const holder = await nodeProcess("setTimeout(() => {}, 60000)", false);
    writeFileSync(`${file}.lock`, `${holder.pid}\n`);

    let error: unknown;
    try {
      track(SessionManager.open(file));
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(SessionLockedError);
    expect((error as SessionLockedError).code).to.equal("KC_ERR_SESSION_LOCKED");
    expect((error as SessionLockedError).pid).to.equal(holder.pid);
    expect((error as Error).message)
      .to.contain(file)
      .and.contain(`process ${holder.pid}`);
    // The other owner's lock is untouched.
    expect(readFileSync(`${file}.lock`, "utf8").trim()).to.equal(String(holder.pid));

    // continueRecent does not silently pick another session either.
    expect(() =>
      track(
        SessionManager.continueRecent({ cwd: join(tmp.path, "project"), agentDir: join(tmp.path, "agent") }),
      ),
    ).to.throw(SessionLockedError);
  });

  it("takes over a stale lock whose process has exited", async () => {
    const file = closedSession();
    const dead = await nodeProcess("", true);
    writeFileSync(`${file}.lock`, `${dead.pid}\n`);
    const session = track(SessionManager.open(file));
    expect(readFileSync(`${file}.lock`, "utf8").trim()).to.equal(String(process.pid));
    session.appendMessage(user("mine now"));
    expect(session.getEntries()).to.have.length(2);
  });

  it("takes over an old lock without a readable pid, but not a fresh one", () => {
    const file = closedSession();
    writeFileSync(`${file}.lock`, "");
    expect(() => track(SessionManager.open(file)))
      .to.throw(/being opened by another process/)
      .with.property("code", "KC_ERR_SESSION_LOCKED");
    const old = new Date(Date.now() - 60_000);
    writeFileSync(`${file}.lock`, "garbage");
    utimesSync(`${file}.lock`, old, old);
    expect(() => track(SessionManager.open(file))).to.not.throw();
  });

  it("refuses a second manager for the same file in the same process, until the first closes", () => {
    const file = closedSession();
    const first = track(SessionManager.open(file));
    expect(() => track(SessionManager.open(file)))
      .to.throw(`Session file ${file} is already open in this process (pid ${process.pid})`)
      .with.property("code", "KC_ERR_SESSION_LOCKED");
    first.close();
    const second = track(SessionManager.open(file));
    second.appendMessage(user("second"));
    expect(second.getEntries()).to.have.length(2);
  });

  it("recognises the same file reached through a symlinked directory", () => {
    const file = closedSession();
    const link = join(tmp.path, "link");
    symlinkSync(dirname(file), link);
    track(SessionManager.open(file));
    expect(() => track(SessionManager.open(join(link, basename(file)))))
      .to.throw(/already open in this process/)
      .with.property("code", "KC_ERR_SESSION_LOCKED");
  });

  it("a new session locks its file on the first write", () => {
    const session = track(
      SessionManager.create({ cwd: join(tmp.path, "p"), agentDir: join(tmp.path, "agent") }),
    );
    const file = session.getSessionFile()!;
    expect(existsSync(`${file}.lock`)).to.equal(false);
    session.appendMessage(user("a"));
    expect(existsSync(`${file}.lock`)).to.equal(true);
    expect(() => track(SessionManager.open(file)))
      .to.throw()
      .with.property("code", "KC_ERR_SESSION_LOCKED");
  });

  it("in-memory sessions have no lock", () => {
    const session = track(SessionManager.inMemory(tmp.path));
    session.appendMessage(user("a"));
    const again = track(SessionManager.inMemory(tmp.path));
    again.appendMessage(user("b"));
    session.close();
    again.close();
    expect(readdirSync(tmp.path)).to.deep.equal([]);
  });
});
