/**
 * `<agentDir>/auth.json`, read once and again only when the file changes (its size, mtime or inode), not on
 * every request. A malformed file is reported once per version of the file and counts as empty.
 */
import { readFileSync, statSync } from "node:fs";

export type AuthEntries = Record<string, { type?: string; key?: string }>;

export class AuthFile {
  private cached: { stamp: string; entries: AuthEntries } | undefined;

  constructor(
    readonly path: string,
    private readonly warn?: (message: string) => void,
  ) {}

  read(): AuthEntries {
    let stamp: string;
    try {
      const stat = statSync(this.path);
      stamp = `${stat.ino}:${stat.size}:${stat.mtimeMs}`;
    } catch {
      this.cached = undefined;
      return {};
    }
    if (this.cached?.stamp === stamp) return this.cached.entries;
    let entries: AuthEntries = {};
    try {
      const parsed: unknown = JSON.parse(readFileSync(this.path, "utf8"));
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) entries = parsed as AuthEntries;
      else this.warn?.(`${this.path} must hold a JSON object; stored credentials were ignored`);
    } catch {
      this.warn?.(`${this.path} is not valid JSON; stored credentials were ignored`);
    }
    this.cached = { stamp, entries };
    return entries;
  }

  /** Forgets what was read, so the next read sees a write made within the same mtime tick. */
  invalidate(): void {
    this.cached = undefined;
  }
}
