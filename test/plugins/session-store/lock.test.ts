/**
 * One owner per session file: a lock held by a live process refuses the open (naming the pid), a stale lock of
 * a dead process is taken over, and a second manager in the same process is refused.
 */
import { type ChildProcess, spawn } from "node:child_process";
import {
  existsSync,
  linkSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
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

  const HOLDER = fileURLToPath(new URL("./fixtures/hold-session.ts", import.meta.url));

  /** Another process that opens `path` and holds it; resolves with its first line of output (bounded). */
  async function holder(path: string): Promise<{ child: ChildProcess; said: string }> {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "--conditions=knightcode-source", HOLDER, path],
      {
        stdio: ["pipe", "pipe", "inherit"],
      },
    );
    children.push(child);
    const said = await new Promise<string>((resolve, reject) => {
      let out = "";
      const timer = setTimeout(() => reject(new Error(`holder of ${path} said nothing in 15 s`)), 15_000);
      child.stdout!.on("data", (chunk) => {
        out += chunk;
        if (out.includes("\n")) {
          clearTimeout(timer);
          resolve(out.trim());
        }
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        resolve(out.trim() || `exited ${code}`);
      });
    });
    return { child, said };
  }

  /** Ends a holder through its stdin and waits (bounded) until it has closed the session and exited. */
  async function release(child: ChildProcess): Promise<void> {
    const exited = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("holder did not exit in 10 s")), 10_000);
      child.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    child.stdin!.end();
    await exited;
  }

  for (const kind of ["symbolic", "hard"] as const) {
    const makeLink = (file: string) => {
      const link = join(tmp.path, `other-name-${kind}.jsonl`);
      if (kind === "symbolic") symlinkSync(file, link);
      else linkSync(file, link);
      return link;
    };

    it(`refuses a ${kind} link to a file another process holds, and the file to a process holding the link`, async function () {
      // Three TypeScript child processes start one after another.
      this.timeout(60_000);
      const file = closedSession();
      const link = makeLink(file);

      const first = await holder(file);
      expect(first.said).to.equal("ready");
      expect(() => track(SessionManager.open(link)))
        .to.throw(`in use by process ${first.child.pid}`)
        .with.property("code", "KC_ERR_SESSION_LOCKED");
      await release(first.child);

      const second = await holder(link);
      expect(second.said).to.equal("ready");
      expect(() => track(SessionManager.open(file)))
        .to.throw(`in use by process ${second.child.pid}`)
        .with.property("code", "KC_ERR_SESSION_LOCKED");
      // A third process through the other name is refused too, and nothing it could write reached the file.
      const third = await holder(file);
      expect(third.said).to.match(/^locked .*in use by process/);
      await release(second.child);

      // Released: every name opens again, and the file holds exactly the two holders' entries.
      const session = track(SessionManager.open(link));
      const texts = session.getEntries().map((e) => (e.type === "message" ? e.message.content : e.type));
      expect(texts).to.deep.equal(["hello", `from ${first.child.pid}`, `from ${second.child.pid}`]);
    });

    it(`refuses a ${kind} link to a file open in this process`, () => {
      const file = closedSession();
      const link = makeLink(file);
      track(SessionManager.open(file));
      expect(() => track(SessionManager.open(link)))
        .to.throw(/already open in this process/)
        .with.property("code", "KC_ERR_SESSION_LOCKED");
    });
  }

  it("a new session's file cannot be opened through a hard link while the session writes it", async function () {
    this.timeout(30_000);
    const session = track(
      SessionManager.create({ cwd: join(tmp.path, "p"), agentDir: join(tmp.path, "agent") }),
    );
    session.appendMessage(user("a"));
    const link = join(tmp.path, "new-link.jsonl");
    linkSync(session.getSessionFile()!, link);
    const other = await holder(link);
    expect(other.said).to.match(/^locked .*in use by process/);
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
