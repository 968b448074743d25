/**
 * What the host knows about workspaces without the git engine: where managed worktrees live, which
 * one a cwd is in (`Thread.workspace`, `ThreadSummary.workspaceMode`), and the turn records `builtin:worktrees`
 * appends to a session (`Turn.files`, `turn/diff/updated`). All of it is synchronous and cheap: a listing of
 * many threads or the end of every turn pays a path check or a short walk, never a git call.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import {
  type HostServices,
  type SessionController,
  TURN_ENTRY_TYPE,
  worktreeSettings,
} from "@knightcodeai/cli/kit";
import type { ThreadWorkspaceWire } from "./protocol.js";

export { TURN_ENTRY_TYPE };

export interface TurnFiles {
  /** The id of the custom entry holding the record. */
  entryId: string;
  files: { path: string; additions: number; deletions: number }[];
}

/** The `worktrees.*` settings as written in the global settings (they name the agent's own storage). */
export interface WorktreesSettings {
  root?: string;
  keep?: number;
  branchPrefix?: string;
}

/**
 * The global `worktrees` settings through the host's settings service, read again only when the personal settings
 * file changed (a listing asks for the root once per page, the end of a turn once).
 */
export class WorktreesSetting {
  private cached: { path: string; stamp: number; value: WorktreesSettings } | undefined;

  constructor(private readonly host: HostServices) {}

  get(): WorktreesSettings {
    if (this.cached) {
      let stamp = 0;
      try {
        stamp = statSync(this.cached.path).mtimeMs;
      } catch {
        // No settings file: the defaults.
      }
      if (stamp === this.cached.stamp) return this.cached.value;
    }
    const settings = this.host.settings.read();
    const value = worktreesSettingsOf(settings.get("worktrees"));
    let stamp = 0;
    try {
      stamp = statSync(settings.paths.global).mtimeMs;
    } catch {
      // No settings file yet.
    }
    this.cached = { path: settings.paths.global, stamp, value };
    return value;
  }

  /** `worktrees.root` (`~` is the home folder), else `<agentDir>/worktrees`: the kit's `worktreeSettings` rule. */
  root(): string {
    return worktreeSettings(this.host.agentDir, this.get()).root;
  }
}

function worktreesSettingsOf(value: unknown): WorktreesSettings {
  if (typeof value !== "object" || value === null) return {};
  const { root, keep, branchPrefix } = value as Record<string, unknown>;
  return {
    ...(typeof root === "string" ? { root } : {}),
    ...(typeof keep === "number" ? { keep } : {}),
    ...(typeof branchPrefix === "string" ? { branchPrefix } : {}),
  };
}

/** The `<4 hex>` folder of the managed worktree `cwd` is in, from the path alone. */
function worktreeId(root: string, cwd: string): string | undefined {
  const rel = relative(root, resolve(cwd));
  if (rel === "" || rel.startsWith(`..${sep}`) || rel === ".." || isAbsolute(rel)) return undefined;
  const id = rel.split(sep)[0] ?? "";
  return /^[0-9a-f]{4}$/.test(id) ? id : undefined;
}

/** Whether `cwd` lies in a managed worktree (a path check only). */
export function inManagedWorktree(root: string, cwd: string): boolean {
  return worktreeId(root, cwd) !== undefined;
}

/** `Thread.workspace` of a thread whose cwd is `cwd`. */
export function describeWorkspace(root: string, cwd: string): ThreadWorkspaceWire {
  const id = worktreeId(root, cwd);
  if (id === undefined) return { mode: "local" };
  let record: { path?: unknown; projectCwd?: unknown; deleted?: unknown } = {};
  try {
    record = JSON.parse(readFileSync(join(root, `${id}.json`), "utf8")) as typeof record;
  } catch {
    // A folder with no readable record is not managed by us: the thread runs there like in any checkout.
    return { mode: "local" };
  }
  const path = typeof record.path === "string" ? record.path : join(root, id);
  return {
    mode: "worktree",
    path,
    ...(typeof record.projectCwd === "string" ? { projectCwd: record.projectCwd } : {}),
    deleted: record.deleted === true || !existsSync(path),
  };
}

function filesOf(data: unknown): TurnFiles["files"] | undefined {
  const files = (data as { files?: unknown } | undefined)?.files;
  if (!Array.isArray(files)) return undefined;
  return files
    .filter((f): f is { path: string; additions: number; deletions: number } => typeof f?.path === "string")
    .map((f) => ({ path: f.path, additions: Number(f.additions) || 0, deletions: Number(f.deletions) || 0 }));
}

/** `Turn.files` of a custom entry, when it is a turn record. */
export function turnFilesOfEntry(entry: { type: string; customType?: string; data?: unknown }) {
  return entry.type === "custom" && entry.customType === TURN_ENTRY_TYPE ? filesOf(entry.data) : undefined;
}

/**
 * The turn record appended since the entry `since` (the leaf when the turn started): a walk back from the leaf
 * over this turn's entries only.
 */
export function turnRecordSince(session: SessionController, since: string | null): TurnFiles | undefined {
  const manager = session.sessionManager;
  let id = manager.getLeafId();
  while (id !== null && id !== since) {
    const entry = manager.getEntry(id);
    if (!entry) return undefined;
    const files = turnFilesOfEntry(entry as { type: string; customType?: string; data?: unknown });
    if (files) return { entryId: entry.id, files };
    id = entry.parentId;
  }
  return undefined;
}
