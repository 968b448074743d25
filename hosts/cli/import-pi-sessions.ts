/**
 * The sessions part of `knightcode import pi`: each pi session file becomes a KnightCode session of the same working
 * folder (the header's `cwd`), under the same file name, so `-c`, `-r`, `/resume` and `--session <id>` find it.
 *
 * pi's version-3 files are nearly KnightCode's format already (same header, same entry types; KnightCode passes
 * entry types it does not know, such as pi's `usage`, through unread). What is converted:
 * - older pi files (version 1: no entry ids; version 2: `hookMessage` messages) are migrated the way pi migrates
 *   them when it opens one (ids and parents added in file order, `firstKeptEntryIndex` turned into
 *   `firstKeptEntryId`, `hookMessage` renamed `custom`), and the header says version 3;
 * - pi's `bashExecution` messages (a `!command` and its output) become KnightCode's form of the same thing: a custom
 *   message of type `bashExecution` in the context, or, for `!!` commands pi kept out of the context, a `custom`
 *   entry holding the command and output that never reaches the model;
 * - a line KnightCode would skip each time it opens the session (not JSON, not an entry, an entry of the wrong
 *   shape, a repeated id) is left out and reported by line number, and an entry whose parent was left out is
 *   attached to the entry before it, as KnightCode's reader would do.
 * Every other line is copied byte for byte.
 *
 * Files are read line by line and written to a temp file next to the target, which is then linked to the target
 * name (so an existing file is never replaced) and removed: a session appears whole or not at all, and only one
 * line of one file is in memory at a time (plus the ids of that file's entries).
 */

import { randomBytes } from "node:crypto";
import {
  closeSync,
  createReadStream,
  existsSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { createInterface } from "node:readline";

type Plugin = typeof import("@knightcodeai/cli/plugin");
type Outcome = "imported" | "skipped" | "not-importable" | "error";
type Json = Record<string, unknown>;

export interface SessionImportOptions {
  plugin: Plugin;
  /** pi's agent folder. */
  piDir: string;
  /** KnightCode's agent folder. */
  agentDir: string;
  dryRun: boolean;
  add(source: string, what: string, outcome: Outcome, detail?: string): void;
}

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

/**
 * pi's sessions folder: the `sessionDir` of pi's settings.json when it is an absolute or `~/` path, else
 * `<pi agent dir>/sessions`.
 */
export function piSessionsDir(piDir: string, settings: Json | undefined): string {
  const dir = settings?.sessionDir;
  if (typeof dir === "string" && dir !== "") {
    const expanded = dir.replace(/^~(?=\/|$)/, homedir());
    if (isAbsolute(expanded)) return expanded;
  }
  return join(piDir, "sessions");
}

/** pi's session files: `*.jsonl` in each folder of the sessions folder, and directly in it. Sorted, for a stable report. */
function piSessionFiles(root: string): string[] {
  const files: string[] = [];
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(root, { withFileTypes: true });
  } catch {
    return files;
  }
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name.startsWith(".")) continue;
    const path = join(root, entry.name);
    if (entry.isDirectory()) {
      let names: string[];
      try {
        names = readdirSync(path).sort();
      } catch {
        continue;
      }
      for (const name of names)
        if (name.endsWith(".jsonl") && !name.startsWith(".")) files.push(join(path, name));
    } else if (entry.name.endsWith(".jsonl")) files.push(path);
  }
  return files;
}

/** The first line of a file (at most 1 MiB of it), without a byte-order mark; undefined when it has none. */
function firstLine(path: string): string | undefined {
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.alloc(1 << 20);
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    let text = buffer.toString("utf8", 0, read);
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    const end = text.indexOf("\n");
    if (end < 0 && read === buffer.length) return undefined;
    return (end < 0 ? text : text.slice(0, end)).replace(/\r$/, "");
  } finally {
    closeSync(fd);
  }
}

/** The ids of the sessions KnightCode has (from the file names, or the header of a file named otherwise), by id. */
function knightcodeSessionIds(plugin: Plugin, sessionRoot: string): Map<string, string> {
  const ids = new Map<string, string>();
  for (const file of piSessionFiles(sessionRoot)) {
    let id = plugin.idFromFileName(basename(file));
    if (id === undefined) {
      try {
        const header = JSON.parse(firstLine(file) ?? "") as unknown;
        if (isObject(header) && typeof header.id === "string") id = header.id;
      } catch {
        // not a session: it has no id to clash with
      }
    }
    if (id !== undefined && !ids.has(id)) ids.set(id, file);
  }
  return ids;
}

interface Header extends Json {
  type: "session";
  id: string;
  cwd: string;
  timestamp: string;
}

/** pi's header on the first line, with its version (1 when it has none), or why the file is not a pi session. */
function readHeader(plugin: Plugin, text: string | undefined): { header: Header; version: number } | string {
  if (text === undefined || text.trim() === "") return "it is empty (no session header)";
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "line 1 is not valid JSON, so it is not a session header";
  }
  if (!isObject(value) || value.type !== "session")
    return 'line 1 is not a session header ({"type":"session",...})';
  const version = value.version ?? 1;
  if (version !== 1 && version !== 2 && version !== 3) {
    return `its version ${JSON.stringify(value.version)} is not one KnightCode can import (pi's versions 1 to 3)`;
  }
  if (typeof value.id !== "string" || value.id === "") return "the header has no id";
  try {
    plugin.assertValidSessionId(value.id);
  } catch (error) {
    return (error as Error).message;
  }
  if (typeof value.cwd !== "string" || !isAbsolute(value.cwd)) {
    return "the header names no working folder (cwd), so there is no project to import it into";
  }
  if (typeof value.timestamp !== "string") return "the header has no timestamp";
  const { type: _type, version: _version, ...rest } = value;
  const header = { type: "session", version: 3, ...rest } as unknown as Header;
  return plugin.headerProblem(header) ?? { header, version };
}

/** Receives the converted lines; undefined in a dry run. */
interface Sink {
  write(line: string): void;
}

interface Converted {
  /** Lines left out, with why. */
  leftOut: string[];
  reattached: number;
  bash: number;
}

/** `{type, id, parentId, ...}`: the layout KnightCode writes, which it can index without parsing the line. */
function entryLine(entry: Json): string {
  const { type, id, parentId, ...rest } = entry;
  return JSON.stringify({ type, id, parentId, ...rest });
}

/** pi's `!command` message in KnightCode's form (hosts/sdk/session-bash.ts writes the same). */
function bashEntry(entry: Json, message: Json): Json {
  const command = typeof message.command === "string" ? message.command : "";
  const output = typeof message.output === "string" ? message.output : "";
  const exitCode = typeof message.exitCode === "number" ? message.exitCode : undefined;
  const { message: _message, ...base } = entry;
  if (message.excludeFromContext === true) {
    // pi kept a `!!` command out of the model's context: KnightCode keeps it as data that never reaches the model.
    return { ...base, type: "custom", customType: "bashExecution", data: { ...message } };
  }
  let status = "";
  if (message.cancelled === true) status = "\n(command cancelled)";
  else if (exitCode !== 0) status = `\n(exit code ${exitCode ?? "none"})`;
  const details: Json = { command, exitCode: exitCode ?? null, truncated: message.truncated === true };
  if (typeof message.fullOutputPath === "string") details.fullOutputPath = message.fullOutputPath;
  return {
    ...base,
    message: {
      role: "custom",
      customType: "bashExecution",
      content: `Ran \`${command}\`\n\`\`\`\n${output}\n\`\`\`${status}`,
      display: true,
      details,
      timestamp:
        typeof message.timestamp === "number" ? message.timestamp : Date.parse(String(entry.timestamp)) || 0,
    },
  };
}

/** Reads pi's file after its header and hands KnightCode's lines to `sink`. */
async function convert(
  plugin: Plugin,
  path: string,
  version: number,
  sink: Sink | undefined,
): Promise<Converted> {
  const result: Converted = { leftOut: [], reattached: 0, bash: 0 };
  const ids = new Set<string>();
  /** Version 1: the id given to each parsed line, by its index among them (pi counts the header as 0). */
  const byIndex: (string | undefined)[] = [undefined];
  let previousId: string | null = null;
  let lineNumber = 0;
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const raw of lines) {
    lineNumber++;
    if (lineNumber === 1) continue;
    if (raw.trim() === "") continue;
    const leaveOut = (why: string) => result.leftOut.push(`line ${lineNumber} ${why}`);
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      leaveOut("is not valid JSON");
      continue;
    }
    let changed = false;
    if (version === 1) {
      if (!isObject(value)) {
        byIndex.push(undefined);
        leaveOut("is not a JSON object");
        continue;
      }
      let id: string;
      do id = randomBytes(4).toString("hex");
      while (ids.has(id));
      byIndex.push(id);
      value = { ...value, id, parentId: previousId };
      changed = true;
      const entry = value as Json;
      if (entry.type === "compaction" && typeof entry.firstKeptEntryIndex === "number") {
        // The entries it kept: the one at that index of the parsed lines; one that cannot be found keeps none.
        entry.firstKeptEntryId = byIndex[entry.firstKeptEntryIndex] ?? id;
        delete entry.firstKeptEntryIndex;
      }
    }
    const problem = plugin.entryProblem(value);
    if (problem) {
      leaveOut(`${problem}, so it is not a session entry`);
      continue;
    }
    let entry = value as Json & { id: string; parentId: string | null };
    if (entry.type === "message" && isObject(entry.message)) {
      if (version < 3 && entry.message.role === "hookMessage") {
        entry = { ...entry, message: { ...entry.message, role: "custom" } };
        changed = true;
      } else if (entry.message.role === "bashExecution") {
        entry = bashEntry(entry, entry.message) as typeof entry;
        changed = true;
        result.bash++;
      }
    }
    const shape = plugin.entryShapeProblem(entry);
    if (shape) {
      leaveOut(`(${String(entry.type)} entry ${entry.id}): ${shape}`);
      continue;
    }
    if (ids.has(entry.id)) {
      leaveOut(`repeats entry id ${entry.id}`);
      continue;
    }
    if (entry.parentId !== null && !ids.has(entry.parentId)) {
      entry = { ...entry, parentId: previousId };
      changed = true;
      result.reattached++;
    }
    ids.add(entry.id);
    previousId = entry.id;
    sink?.write(changed ? entryLine(entry) : raw.replace(/^\uFEFF/, ""));
  }
  return result;
}

/** Writes lines to a temp file in `dir`, in blocks; `commit` links it to its name (never over a file) and fsyncs. */
class TempFile implements Sink {
  private readonly temp: string;
  private readonly fd: number;
  private open = true;
  private pending: string[] = [];
  private size = 0;

  constructor(private readonly target: string) {
    mkdirSync(dirname(target), { recursive: true });
    this.temp = join(
      dirname(target),
      `.${basename(target)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`,
    );
    // Sessions hold every tool's output: readable only by their owner, as KnightCode writes them.
    this.fd = openSync(this.temp, "wx", 0o600);
  }

  write(line: string): void {
    this.pending.push(line, "\n");
    this.size += line.length + 1;
    if (this.size >= 1 << 20) this.flush();
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    writeSync(this.fd, this.pending.join(""));
    this.pending = [];
    this.size = 0;
  }

  /** False when a file of that name appeared meanwhile (it is left alone). */
  commit(): boolean {
    try {
      this.flush();
      fsyncSync(this.fd);
    } finally {
      this.close();
    }
    try {
      linkSync(this.temp, this.target);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "EEXIST") {
        this.discard();
        return false;
      }
      // A file system without hard links: a rename, after checking the name is free.
      if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP") throw error;
      if (existsSync(this.target)) {
        this.discard();
        return false;
      }
      renameSync(this.temp, this.target);
      return true;
    }
    this.discard();
    return true;
  }

  private close(): void {
    if (!this.open) return;
    this.open = false;
    closeSync(this.fd);
  }

  discard(): void {
    try {
      this.close();
    } catch {
      // nothing more to do
    }
    try {
      unlinkSync(this.temp);
    } catch {
      // gone already
    }
  }
}

const MAX_LINES_SHOWN = 5;

/** Imports every pi session KnightCode does not have yet, reporting one line per project and one per problem. */
export async function importPiSessions(
  options: SessionImportOptions,
  piSettings: Json | undefined,
): Promise<void> {
  const { plugin, dryRun, add } = options;
  const piRoot = piSessionsDir(options.piDir, piSettings);
  const source = "sessions/";
  if (!existsSync(piRoot)) return;
  const shown = (file: string) => {
    const rel = relative(piRoot, file);
    return rel.startsWith("..") ? file : `sessions/${rel}`;
  };
  const sessionRoot = plugin.resolveSessionRoot({ agentDir: options.agentDir });
  if (resolve(sessionRoot) === resolve(piRoot)) {
    add(source, "sessions", "skipped", `pi's sessions folder ${piRoot} is KnightCode's too`);
    return;
  }
  const have = knightcodeSessionIds(plugin, sessionRoot);
  const projects = new Map<string, { count: number; bytes: number; migrated: number; bash: number }>();
  const files = piSessionFiles(piRoot);
  if (files.length === 0) return;
  for (const file of files) {
    const name = shown(file);
    let read: ReturnType<typeof readHeader>;
    try {
      read = readHeader(plugin, firstLine(file));
    } catch (error) {
      add(source, name, "error", `cannot be read: ${(error as Error).message}`);
      continue;
    }
    if (typeof read === "string") {
      add(source, name, "not-importable", `${read}; skipped`);
      continue;
    }
    const { header, version } = read;
    const cwd = resolve(header.cwd);
    const already = have.get(header.id);
    if (already !== undefined) {
      add(
        source,
        `session ${header.id} (${cwd})`,
        "skipped",
        `KnightCode already has a session with this id: ${already}`,
      );
      continue;
    }
    const target = join(
      plugin.cwdSessionDir(sessionRoot, cwd),
      plugin.sessionFileName(header.timestamp, header.id),
    );
    let temp: TempFile | undefined;
    let converted: Converted;
    try {
      if (!dryRun) temp = new TempFile(target);
      temp?.write(version === 3 ? (firstLine(file) as string) : JSON.stringify(header));
      converted = await convert(plugin, file, version, temp);
      if (temp && !temp.commit()) {
        add(
          source,
          `session ${header.id} (${cwd})`,
          "skipped",
          `${target} exists already; it was left as it is`,
        );
        continue;
      }
    } catch (error) {
      temp?.discard();
      add(source, name, "error", `could not be ${dryRun ? "read" : "copied"}: ${(error as Error).message}`);
      continue;
    }
    have.set(header.id, target);
    const project = projects.get(cwd) ?? { count: 0, bytes: 0, migrated: 0, bash: 0 };
    project.count++;
    project.bytes += statSync(file).size;
    if (version < 3) project.migrated++;
    project.bash += converted.bash;
    projects.set(cwd, project);
    if (converted.leftOut.length > 0 || converted.reattached > 0) {
      // The first few lines by number; a file with many bad lines is summed up.
      const parts = converted.leftOut.slice(0, MAX_LINES_SHOWN);
      if (converted.leftOut.length > MAX_LINES_SHOWN) {
        parts.push(`${converted.leftOut.length - MAX_LINES_SHOWN} more lines left out`);
      }
      if (converted.reattached > 0) {
        parts.push(
          `${plural(converted.reattached, "entry")} whose parent was left out attached to the entry before`,
        );
      }
      add(
        source,
        `${name} (session ${header.id})`,
        "not-importable",
        `${parts.join("; ")}; the rest of the session ${dryRun ? "would be" : "was"} imported`,
      );
    }
  }
  for (const [cwd, p] of projects) {
    const notes: string[] = [];
    if (p.migrated > 0) notes.push(`${p.migrated} migrated from pi's older session format`);
    if (p.bash > 0) notes.push(`${plural(p.bash, "!command")} in KnightCode's form`);
    add(
      source,
      cwd,
      "imported",
      `${plural(p.count, "session")}, ${(p.bytes / 1024).toFixed(1)} KiB${notes.length ? ` (${notes.join("; ")})` : ""}${dryRun ? "" : ` into ${plugin.cwdSessionDir(sessionRoot, cwd)}`}`,
    );
  }
}
