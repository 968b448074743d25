/**
 * Which session log a handle opens: the first one from the host's choice (a file, an id, the most recent, a new
 * one, or memory), and the logs session replacement switches to. Every log comes from the session store behind its
 * token, so a host that swaps the store changes all of them.
 */
import { resolve } from "node:path";
import { assertValidSessionId, type SessionManager } from "../../plugins/session-store/session-manager.js";
import type { SessionStore } from "../../plugins/tokens.js";
import type { SessionChoice } from "./session-options.js";

export class SessionLogs {
  constructor(
    private readonly store: () => SessionStore,
    private readonly where: {
      cwd: string;
      agentDir: string;
      choice: SessionChoice;
      warn?: (message: string) => void;
    },
  ) {}

  private location(): { agentDir: string; sessionDir?: string } {
    const dir = this.where.choice.sessionDir;
    return { agentDir: this.where.agentDir, ...(dir ? { sessionDir: resolve(dir) } : {}) };
  }

  /** The host's choice for the first session. */
  initial(): SessionManager {
    const { choice, cwd } = this.where;
    const store = this.store();
    const { id } = choice;
    if (id !== undefined) assertValidSessionId(id);
    if (choice.fork !== undefined) {
      if (choice.inMemory || choice.path || choice.continue) {
        throw new TypeError("session.fork cannot be combined with path, continue or inMemory");
      }
      return this.fork(choice.fork, id);
    }
    if (choice.inMemory) return store.inMemory(cwd, id);
    const location = this.location();
    if (choice.path) {
      const path = /[/\\]|\.jsonl$/.test(choice.path)
        ? resolve(choice.path)
        : store.findById(choice.path, location);
      return store.open(path, location);
    }
    if (choice.continue) return store.continueRecent({ cwd, ...location });
    if (id !== undefined) {
      const existing = this.findInFolder(id);
      if (existing) return store.open(existing, location);
      this.where.warn?.(`No session of this folder has the id '${id}'; creating a new session with that id.`);
      return store.create({ cwd, ...location, id });
    }
    return store.create({ cwd, ...location });
  }

  /** The file of this folder's session whose id is exactly `id`. */
  private findInFolder(id: string): string | undefined {
    return this.store()
      .list({ cwd: this.where.cwd, ...this.location() })
      .find((session) => session.id === id)?.path;
  }

  /** pi's `--fork <path|id>`: a new session of this folder with every entry of that session. */
  private fork(source: string, id: string | undefined): SessionManager {
    const store = this.store();
    if (!store.forkFrom) throw new Error("The session store in use cannot fork a session file (--fork)");
    const location = this.location();
    if (id !== undefined && this.findInFolder(id)) {
      throw new Error(`A session with the id '${id}' already exists in this folder: --fork needs a new id`);
    }
    const path = /[/\\]|\.jsonl$/.test(source)
      ? resolve(this.where.cwd, source)
      : store.findById(source, location);
    return store.forkFrom(path, { cwd: this.where.cwd, ...location, ...(id !== undefined ? { id } : {}) });
  }

  /** A new session: in memory when the handle keeps its sessions in memory, else a new file. */
  fresh(parentSession?: string): SessionManager {
    const { choice, cwd } = this.where;
    if (choice.inMemory) return this.store().inMemory(cwd);
    return this.store().create({
      cwd,
      ...this.location(),
      ...(parentSession !== undefined ? { parentSession } : {}),
    });
  }

  /** An existing session file. */
  open(path: string): SessionManager {
    return this.store().open(path, { agentDir: this.where.agentDir });
  }

  /** A new session holding the branch up to `entryId` (or up to its parent, `before`). */
  branch(log: SessionManager, entryId: string, position: "before" | "at"): SessionManager {
    const entry = log.getEntry(entryId);
    if (!entry) throw new Error(`No entry ${entryId} in this session`);
    const leaf = position === "before" ? entry.parentId : entryId;
    if (leaf === null) return this.store().create({ cwd: this.where.cwd, ...this.location() });
    return log.createBranchedSession(leaf);
  }

  /** The sessions of the handle's folder, newest first. */
  list() {
    return this.store().list({ cwd: this.where.cwd, ...this.location() });
  }

  /** Where the handle's sessions are stored (`sessionDir` overrides `<agentDir>/sessions`). */
  sessionDir(): string | undefined {
    return this.location().sessionDir;
  }
}
