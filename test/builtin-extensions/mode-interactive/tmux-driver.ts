/**
 * Drives the built `knightcode` in a real terminal: tmux on a private socket runs it, `send-keys` types and
 * `capture-pane` reads the screen. Every wait is bounded; `close()` kills the tmux server and with it the program.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { startTestServer, type TestServer } from "../../helpers/sse-server.js";

export const hasTmux = spawnSync("tmux", ["-V"]).status === 0;

/**
 * The hooks of a tmux test against a local model server: the suite is skipped without tmux; each test gets a new
 * server and terminal (handed to `set`), both closed after it.
 */
export function useTerminalAndModel(set: (started: { server: TestServer; term: TmuxDriver }) => void): void {
  let started: { server: TestServer; term: TmuxDriver } | undefined;
  before(function () {
    if (!hasTmux) this.skip();
  });
  beforeEach(async () => {
    started = { server: await startTestServer(), term: new TmuxDriver() };
    set(started);
  });
  afterEach(async () => {
    started?.term.close();
    await started?.server.close();
  });
}

let counter = 0;

export class TmuxDriver {
  private readonly socket = `kc-tui-${process.pid}-${++counter}`;
  private readonly target = "kc";

  private tmux(...args: string[]): string {
    return execFileSync("tmux", ["-L", this.socket, ...args], { encoding: "utf8" });
  }

  /** Starts `command` (a shell line) in a `columns`×`rows` terminal; the shell prints KC-EXIT-<code> after it. */
  start(command: string, cwd: string, columns = 100, rows = 32): void {
    this.tmux(
      "new-session",
      "-d",
      "-s",
      this.target,
      "-x",
      String(columns),
      "-y",
      String(rows),
      "-c",
      cwd,
      `${command}; echo KC-EXIT-$?; sleep 60`,
    );
  }

  /** The visible screen, one string per row, trailing spaces removed. */
  screen(): string {
    return this.tmux("capture-pane", "-t", this.target, "-p");
  }

  /** The scrollback and the screen, oldest line first. */
  history(): string {
    return this.tmux("capture-pane", "-t", this.target, "-p", "-S", "-", "-E", "-");
  }

  type(text: string): void {
    this.tmux("send-keys", "-t", this.target, "-l", text);
  }

  /** Pastes `text` as a terminal paste does (bracketed, when the program asked for that). */
  paste(text: string): void {
    this.tmux("set-buffer", "-b", "kc-paste", "--", text);
    this.tmux("paste-buffer", "-p", "-d", "-b", "kc-paste", "-t", this.target);
  }

  /** tmux key names: `Enter`, `Escape`, `Tab`, `C-o`, `M-Enter`, `Down`, ... */
  key(...names: string[]): void {
    this.tmux("send-keys", "-t", this.target, ...names);
  }

  enter(text: string): void {
    this.type(text);
    this.key("Enter");
  }

  resize(columns: number, rows: number): void {
    this.tmux("resize-window", "-t", this.target, "-x", String(columns), "-y", String(rows));
  }

  /** Waits until the screen shows `text` (or matches it); fails with the screen after `timeoutMs`. */
  async waitFor(text: string | RegExp, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const shown = this.screen();
      if (typeof text === "string" ? shown.includes(text) : text.test(shown)) return shown;
      if (Date.now() > deadline)
        throw new Error(`${String(text)} did not appear; the screen shows:\n${shown}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Waits until the screen no longer shows `text`. */
  async waitForGone(text: string, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const shown = this.screen();
      if (!shown.includes(text)) return shown;
      if (Date.now() > deadline) throw new Error(`${text} is still shown:\n${shown}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  close(): void {
    spawnSync("tmux", ["-L", this.socket, "kill-server"]);
  }
}
