/**
 * What a `toolCall` item carries beyond the call, so an editor can draw it: a bash call's command, folder and exit
 * code; the files `write` and `edit` changed, with a diff; and output deltas that carry only new text although a
 * tool's partial results each show its latest output.
 */
import { readFileSync, statSync } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";
import type { Item } from "./items.js";

type ToolCallItem = Extract<Item, { type: "toolCall" }>;
type FileChange = NonNullable<ToolCallItem["changes"]>[number];

/** Files larger than this are not read for a `write` diff (the change is reported without one). */
const DIFF_MAX_BYTES = 1024 * 1024;
const CONTEXT_LINES = 3;

/** What the thread keeps about a running call to finish its item. */
export interface ToolRun {
  startedAt: number;
  /** `write`: the file before the call (undefined: it did not exist; null: not read, too large or unreadable). */
  before?: string | undefined | null;
  path?: string;
  /** The last partial output and where it starts in the whole output, when the tool says (bash). */
  shown?: { text: string; start?: number };
}

function argString(args: unknown, key: string): string | undefined {
  const value = args && typeof args === "object" ? (args as Record<string, unknown>)[key] : undefined;
  return typeof value === "string" ? value : undefined;
}

function readSmall(path: string): string | undefined | null {
  try {
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) return undefined;
    if (!stat.isFile() || stat.size > DIFF_MAX_BYTES) return null;
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/** Fills the item's fields known when the call starts, and what its end needs. */
export function startToolItem(item: ToolCallItem, cwd: string): ToolRun {
  const run: ToolRun = { startedAt: Date.now() };
  item.startedAt = run.startedAt;
  if (item.name === "bash") {
    const command = argString(item.arguments, "command");
    if (command !== undefined) item.command = command;
    item.cwd = cwd;
  } else if (item.name === "write" || item.name === "edit") {
    const path = argString(item.arguments, "path");
    if (path !== undefined) {
      run.path = isAbsolute(path) ? path : resolve(cwd, path);
      if (item.name === "write") run.before = readSmall(run.path);
    }
  }
  return run;
}

/** Fills the item's fields known once the call ended, from its result's details. */
export function finishToolItem(item: ToolCallItem, run: ToolRun, details: unknown, cwd: string): void {
  item.durationMs = Date.now() - run.startedAt;
  const d = details && typeof details === "object" ? (details as Record<string, unknown>) : {};
  if (item.name === "bash" && (typeof d.exitCode === "number" || d.exitCode === null))
    item.exitCode = d.exitCode;
  const change = fileChange(item, run, d, cwd);
  if (change) item.changes = [change];
}

function fileChange(
  item: ToolCallItem,
  run: ToolRun,
  details: Record<string, unknown>,
  cwd: string,
): FileChange | undefined {
  if (item.status !== "completed") return undefined;
  const path = typeof details.path === "string" ? details.path : run.path;
  if (path === undefined) return undefined;
  if (item.name === "edit")
    return { path, kind: "update", ...(typeof details.diff === "string" ? { diff: details.diff } : {}) };
  if (item.name !== "write") return undefined;
  const created = details.created === true || (details.created === undefined && run.before === undefined);
  const content = argString(item.arguments, "content");
  const name = relative(cwd, path) || path;
  const diff =
    content !== undefined && run.before !== null
      ? unifiedDiff(run.before ?? "", content, created ? "/dev/null" : `a/${name}`, `b/${name}`)
      : undefined;
  return { path, kind: created ? "add" : "update", ...(diff !== undefined ? { diff } : {}) };
}

/** Lines with their terminators, so a missing final newline is a difference like any other. */
function lines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/**
 * A unified diff of two texts as one hunk: the lines common at both ends are set aside (keeping three of context)
 * and the middle is shown as removed and added. Always a valid diff, minimal for the usual single-region change.
 */
export function unifiedDiff(before: string, after: string, oldName: string, newName: string): string {
  if (before === after) return "";
  const a = lines(before);
  const b = lines(after);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail++;
  const from = Math.max(0, head - CONTEXT_LINES);
  const aEnd = a.length - Math.max(0, tail - CONTEXT_LINES);
  const bEnd = b.length - Math.max(0, tail - CONTEXT_LINES);
  const out: string[] = [];
  const push = (prefix: string, line: string) => {
    out.push(`${prefix}${line.replace(/\n$/, "")}`);
    if (!line.endsWith("\n")) out.push("\\ No newline at end of file");
  };
  for (let i = from; i < head; i++) push(" ", a[i]!);
  for (let i = head; i < a.length - tail; i++) push("-", a[i]!);
  for (let i = head; i < b.length - tail; i++) push("+", b[i]!);
  for (let i = a.length - tail; i < aEnd; i++) push(" ", a[i]!);
  const range = (start: number, count: number) =>
    count === 1 ? `${start + 1}` : `${count === 0 ? start : start + 1},${count}`;
  return [
    `--- ${oldName}`,
    `+++ ${newName}`,
    `@@ -${range(from, aEnd - from)} +${range(from, bEnd - from)} @@`,
    ...out,
  ].join("\n");
}

/**
 * What a client appends after a partial result: the text past what it was sent. With `start` offsets (bash says
 * where its tail begins) the new part is exact; otherwise a partial that extends the last one gives its rest, one
 * that adds nothing gives nothing, and any other replaces the output (`reset`).
 */
export function outputDelta(
  previous: ToolRun["shown"],
  next: { text: string; start?: number },
): { delta: string; reset?: true } | undefined {
  if (!previous) return next.text === "" ? undefined : { delta: next.text };
  if (previous.start !== undefined && next.start !== undefined) {
    const end = previous.start + previous.text.length;
    const from = end - next.start;
    if (from >= 0 && from <= next.text.length) {
      const delta = next.text.slice(from);
      return delta === "" ? undefined : { delta };
    }
  } else if (next.text.startsWith(previous.text)) {
    const delta = next.text.slice(previous.text.length);
    return delta === "" ? undefined : { delta };
  } else if (previous.text.endsWith(next.text)) return undefined;
  return { delta: next.text, reset: true };
}
