/**
 * `<agentDir>/auth.json`, read once and again only when the file changes (its size, mtime or inode), not on
 * every request. A malformed file is reported once per version of the file (with its line and column) and counts as
 * empty.
 *
 * pi's auth.json names a sign-in's access token `access` where KnightCode names it `key`: an entry with a string
 * `access` and no `key` reads as if `key` held it, so a pi auth.json copied as it is works.
 */
import { statSync } from "node:fs";
import { readJsonObjectFile } from "../kit/files/json-file.js";

export type AuthEntries = Record<string, { type?: string; key?: string; [field: string]: unknown }>;

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
    // The reader every JSON configuration file goes through: a byte-order mark is fine, a parse error gets its
    // line and column, and nesting too deep is refused before anything recurses over it.
    const read = readJsonObjectFile(this.path);
    if (read.status === "ok") entries = withKeyAliases(read.value as AuthEntries);
    else if (read.status === "invalid") this.warn?.(`${read.message}; stored credentials were ignored`);
    this.cached = { stamp, entries };
    return entries;
  }

  /** Forgets what was read, so the next read sees a write made within the same mtime tick. */
  invalidate(): void {
    this.cached = undefined;
  }
}

/** Entries whose token is under pi's name `access` (and not under `key`) get it as `key` too. */
export function withKeyAliases(entries: AuthEntries): AuthEntries {
  let out: AuthEntries | undefined;
  for (const [provider, entry] of Object.entries(entries)) {
    if (!entry || typeof entry !== "object" || Array.isArray(entry)) continue;
    const hasKey = typeof entry.key === "string" && entry.key !== "";
    if (hasKey || typeof entry.access !== "string" || entry.access === "") continue;
    out ??= { ...entries };
    out[provider] = { ...entry, key: entry.access };
  }
  return out ?? entries;
}
