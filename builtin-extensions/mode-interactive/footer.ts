/**
 * The footer under the editor: where you are (folder, git branch, session name), what the session costs (tokens,
 * dollars, how full the context is), which model at which thinking level, and the extensions' statuses. Also the
 * git branch watcher custom footers read through `FooterData`, and the working row shown while a run goes on.
 */
import { type FSWatcher, readFileSync, statSync, watch } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { FooterData, SessionController, UIHost, UITheme } from "@knightcodeai/cli/kit";
import { type Component, truncateToWidth, visibleWidth } from "@knightcodeai/cli/tui";

/** The branch checked out in `cwd`'s git work tree (a short hash when detached), or null outside one. */
export function readGitBranch(cwd: string): string | null {
  const head = gitHeadFile(cwd);
  if (!head) return null;
  try {
    const text = readFileSync(head, "utf8").trim();
    const ref = /^ref: refs\/heads\/(.+)$/.exec(text);
    return ref ? ref[1]! : text.slice(0, 8);
  } catch {
    return null;
  }
}

function gitHeadFile(cwd: string): string | undefined {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const dotGit = join(dir, ".git");
    try {
      if (statSync(dotGit).isDirectory()) return join(dotGit, "HEAD");
      // A worktree or submodule: `.git` is a file naming the real folder.
      const pointer = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, "utf8"));
      if (pointer) return join(resolve(dir, pointer[1]!.trim()), "HEAD");
    } catch {
      // not here; look further up
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** The footer's data, shared by the built-in footer and custom ones. */
export class FooterState implements FooterData {
  readonly statuses = new Map<string, string>();
  private branch: string | null;
  private readonly listeners = new Set<() => void>();
  private watcher: FSWatcher | undefined;

  constructor(
    private readonly cwd: string,
    private readonly providers: () => number,
  ) {
    this.branch = readGitBranch(cwd);
    const head = gitHeadFile(cwd);
    if (head) {
      try {
        this.watcher = watch(dirname(head), (_event, name) => {
          if (name === "HEAD") this.refreshBranch();
        });
        this.watcher.unref();
      } catch {
        // No watching (a read-only or odd file system): the branch still refreshes after each run.
      }
    }
  }

  refreshBranch(): void {
    const now = readGitBranch(this.cwd);
    if (now === this.branch) return;
    this.branch = now;
    for (const listener of [...this.listeners]) listener();
  }

  getGitBranch(): string | null {
    return this.branch;
  }

  getExtensionStatuses(): ReadonlyMap<string, string> {
    return this.statuses;
  }

  getAvailableProviderCount(): number {
    return this.providers();
  }

  onBranchChange(callback: () => void): () => void {
    this.listeners.add(callback);
    return () => this.listeners.delete(callback);
  }

  dispose(): void {
    this.watcher?.close();
    this.listeners.clear();
  }
}

function tokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** Left and right parts on one line, the right one pushed to the edge; the left is cut first. */
function spread(left: string, right: string, width: number): string {
  const room = width - visibleWidth(right) - 1;
  if (room < 8) return truncateToWidth(left, width);
  const cut = truncateToWidth(left, room);
  return `${cut}${" ".repeat(Math.max(1, width - visibleWidth(cut) - visibleWidth(right)))}${right}`;
}

/**
 * The mode's footer. Its figures come from the session's statistics, which walk the whole branch, so the lines are
 * kept until `changed()` (a message ended, the model or a status changed) rather than recomputed every frame.
 */
export class Footer implements Component {
  private cache: { width: number; lines: string[] } | undefined;

  constructor(
    private readonly session: SessionController,
    private readonly state: FooterState,
    private readonly theme: () => UITheme,
  ) {}

  changed(): void {
    this.cache = undefined;
  }

  invalidate(): void {
    this.cache = undefined;
  }

  render(width: number): string[] {
    if (this.cache?.width !== width) this.cache = { width, lines: this.draw(width) };
    return this.cache.lines;
  }

  private draw(width: number): string[] {
    const t = this.theme();
    const home = homedir();
    const cwd = this.session.cwd.startsWith(home)
      ? `~${this.session.cwd.slice(home.length)}`
      : this.session.cwd;
    const branch = this.state.getGitBranch();
    const name = this.session.getState().sessionName;
    const where = `${cwd}${branch ? ` (${branch})` : ""}${name ? ` • ${name}` : ""}`;

    const stats = this.session.getSessionStats();
    const { model, thinkingLevel } = this.session.getState();
    // A model without prices (a local server) costs nothing to show; a priced one shows $0.000 until it answers.
    const priced = stats.cost > 0 || (model?.cost !== undefined && model.cost.input + model.cost.output > 0);
    const usage = [
      `↑${tokens(stats.tokens.input)}`,
      `↓${tokens(stats.tokens.output)}`,
      ...(stats.tokens.cacheRead ? [`R${tokens(stats.tokens.cacheRead)}`] : []),
      ...(stats.tokens.cacheWrite ? [`W${tokens(stats.tokens.cacheWrite)}`] : []),
      ...(priced ? [`$${stats.cost.toFixed(3)}`] : []),
    ];
    const context = stats.contextUsage;
    if (context) {
      // Before the first answer nothing is known: the window alone, not a question mark.
      const painted =
        context.percent === null
          ? `${tokens(context.contextWindow)} context`
          : `${context.percent.toFixed(1)}%/${tokens(context.contextWindow)}`;
      usage.push(
        context.percent !== null && context.percent > 90
          ? t.fg("error", painted)
          : context.percent !== null && context.percent > 70
            ? t.fg("warning", painted)
            : painted,
      );
    }
    const right = model
      ? `${model.provider}/${model.id}${model.reasoning ? ` • ${thinkingLevel}` : ""}`
      : t.fg("warning", "no model (/login, /model)");
    const lines = [
      t.fg("dim", truncateToWidth(where, width)),
      t.fg("dim", spread(usage.join(" "), right, width)),
    ];
    if (this.state.statuses.size > 0) {
      const statuses = [...this.state.statuses.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([, text]) => text.replace(/[\r\n\t]+/g, " "));
      lines.push(truncateToWidth(statuses.join(t.fg("dim", " · ")), width));
    }
    return lines;
  }
}

const DEFAULT_FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/** The row above the editor while a run goes on: a spinner and `setWorkingMessage`'s text. */
export class WorkingRow implements Component {
  message: string | undefined;
  visible = true;
  private frames = DEFAULT_FRAMES;
  private intervalMs = 80;
  private frame = 0;
  private timer: NodeJS.Timeout | undefined;
  private active = false;

  constructor(
    private readonly tui: UIHost,
    private readonly theme: () => UITheme,
  ) {}

  setIndicator(options?: { frames?: string[]; intervalMs?: number }): void {
    this.frames = options?.frames ?? DEFAULT_FRAMES;
    this.intervalMs = options?.intervalMs && options.intervalMs > 0 ? options.intervalMs : 80;
    if (this.active) this.start();
  }

  start(): void {
    this.active = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    if (this.frames.length > 1) {
      this.timer = setInterval(() => {
        this.frame = (this.frame + 1) % this.frames.length;
        this.tui.requestRender();
      }, this.intervalMs);
    }
    this.tui.requestRender();
  }

  stop(): void {
    this.active = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.tui.requestRender();
  }

  invalidate(): void {}

  render(width: number): string[] {
    if (!this.active || !this.visible) return [];
    const t = this.theme();
    const spinner = this.frames.length
      ? `${t.fg("accent", this.frames[this.frame % this.frames.length]!)} `
      : "";
    return [
      "",
      truncateToWidth(
        `${spinner}${t.fg("muted", this.message ?? "Working…")} ${t.fg("dim", "(esc stops)")}`,
        width,
      ),
    ];
  }
}
