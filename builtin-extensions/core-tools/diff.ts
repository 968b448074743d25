/**
 * A small line-based unified diff (what `edit` reports in `details.diff`). Common leading and trailing lines are
 * set aside first, the middle is compared with Myers' algorithm, and a middle whose difference is too large to
 * search cheaply is reported as one replacement: always a valid diff, minimal in the usual case of local edits.
 */

export interface UnifiedDiff {
  /** `--- <old>` / `+++ <new>` headers and `@@` hunks; empty when the texts are equal. */
  diff: string;
  /** 1-based line of the first change (the same in both texts, since everything before it is equal). */
  firstChangedLine: number | undefined;
  added: number;
  removed: number;
}

export interface UnifiedDiffOptions {
  oldName: string;
  newName: string;
  /** Lines of context around each change; 3 like `diff -u`. */
  context?: number;
}

type Op = { kind: " " | "-" | "+"; line: string };

/** Bigger differences than this (in changed lines) are not searched for a minimal script. */
const MAX_EDIT_DISTANCE = 2000;

/** Lines with their terminator, so a missing final newline is a difference like any other. */
function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n").map((line) => `${line}\n`);
  const last = lines.length - 1;
  if (text.endsWith("\n")) lines.pop();
  else lines[last] = lines[last]!.slice(0, -1);
  return lines;
}

/** Myers' O((N+M)D) shortest edit script, or undefined when D would exceed `maxD`. */
function myers(a: string[], b: string[], maxD: number): Op[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, maxD);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice(offset - d - 1, offset + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x: number;
      if (k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!)) x = v[offset + k + 1]!;
      else x = v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(a, b, trace, d);
    }
  }
  return undefined;
}

function backtrack(a: string[], b: string[], trace: Int32Array[], dEnd: number): Op[] {
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = dEnd; d > 0; d--) {
    // trace[d] holds v before round d, for k in [-d-1, d+1] at index k + d + 1.
    const vPrev = trace[d]!;
    const at = (k: number) => vPrev[k + d + 1]!;
    const k = x - y;
    const down = k === -d || (k !== d && at(k - 1) < at(k + 1));
    const prevK = down ? k + 1 : k - 1;
    const prevX = at(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      y--;
      ops.push({ kind: " ", line: a[--x]! });
    }
    if (down) ops.push({ kind: "+", line: b[--y]! });
    else ops.push({ kind: "-", line: a[--x]! });
  }
  while (x > 0 && y > 0) {
    y--;
    ops.push({ kind: " ", line: a[--x]! });
  }
  return ops.reverse();
}

function compare(a: string[], b: string[]): Op[] {
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const middle = myers(midA, midB, MAX_EDIT_DISTANCE) ?? [
    ...midA.map((line): Op => ({ kind: "-", line })),
    ...midB.map((line): Op => ({ kind: "+", line })),
  ];
  return [
    ...a.slice(0, start).map((line): Op => ({ kind: " ", line })),
    ...middle,
    ...a.slice(endA).map((line): Op => ({ kind: " ", line })),
  ];
}

/** `diff -u` range: a one-line range is just its start; an empty range names the line before it. */
function range(start: number, count: number): string {
  if (count === 0) return `${start - 1},0`;
  return count === 1 ? `${start}` : `${start},${count}`;
}

function formatLine(op: Op): string {
  if (op.line.endsWith("\n")) return `${op.kind}${op.line}`;
  return `${op.kind}${op.line}\n\\ No newline at end of file\n`;
}

export function unifiedDiff(oldText: string, newText: string, options: UnifiedDiffOptions): UnifiedDiff {
  const context = options.context ?? 3;
  const ops = compare(splitLines(oldText), splitLines(newText));
  const changed = ops.map((op, i) => (op.kind === " " ? -1 : i)).filter((i) => i >= 0);
  if (changed.length === 0) return { diff: "", firstChangedLine: undefined, added: 0, removed: 0 };

  // Group changes whose context windows touch into hunks: [first op, last op] index ranges.
  const groups: [number, number][] = [];
  for (const i of changed) {
    const last = groups[groups.length - 1];
    if (last && i - last[1] <= 2 * context + 1) last[1] = i;
    else groups.push([i, i]);
  }

  // Line numbers (1-based) of each op in the old and new text.
  const oldLine: number[] = [];
  const newLine: number[] = [];
  let o = 1;
  let n = 1;
  for (const op of ops) {
    oldLine.push(o);
    newLine.push(n);
    if (op.kind !== "+") o++;
    if (op.kind !== "-") n++;
  }

  let out = `--- ${options.oldName}\n+++ ${options.newName}\n`;
  for (const [first, last] of groups) {
    const from = Math.max(0, first - context);
    const to = Math.min(ops.length - 1, last + context);
    const slice = ops.slice(from, to + 1);
    const oldCount = slice.filter((op) => op.kind !== "+").length;
    const newCount = slice.filter((op) => op.kind !== "-").length;
    out += `@@ -${range(oldLine[from]!, oldCount)} +${range(newLine[from]!, newCount)} @@\n`;
    for (const op of slice) out += formatLine(op);
  }
  const first = changed[0]!;
  return {
    diff: out,
    firstChangedLine: ops[first]!.kind === "+" ? newLine[first]! : oldLine[first]!,
    added: ops.filter((op) => op.kind === "+").length,
    removed: ops.filter((op) => op.kind === "-").length,
  };
}
