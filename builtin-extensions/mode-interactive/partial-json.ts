/**
 * Reads the arguments of a tool call while the model is still writing them: the JSON text so far is cut anywhere,
 * yet the transcript wants `$ ls -la` as soon as `{"command":"ls -l` has arrived. Only the top-level object is
 * read: each member whose value is complete is parsed, a string value still being written is decoded up to where
 * it stops, and a member cut inside a nested object or array is left out until it ends.
 */

/** The members of a partial top-level JSON object; `{}` when the text is no object (yet). */
export function partialArgs(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let i = skipSpace(text, 0);
  if (text[i] !== "{") return out;
  i++;
  for (;;) {
    i = skipSpace(text, i);
    if (text[i] === ",") i = skipSpace(text, i + 1);
    if (text[i] !== '"') return out;
    const key = readString(text, i);
    if (!key.closed) return out;
    i = skipSpace(text, key.end);
    if (text[i] !== ":") return out;
    i = skipSpace(text, i + 1);
    if (i >= text.length) return out;
    if (text[i] === '"') {
      const value = readString(text, i);
      out[key.value] = value.value;
      if (!value.closed) return out;
      i = value.end;
      continue;
    }
    const end = valueEnd(text, i);
    if (end === undefined) return out;
    try {
      out[key.value] = JSON.parse(text.slice(i, end));
    } catch {
      return out;
    }
    i = end;
  }
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && /\s/.test(text[i]!)) i++;
  return i;
}

/** A JSON string starting at `start` (its quote): its text so far, and whether it ended. */
function readString(text: string, start: number): { value: string; closed: boolean; end: number } {
  let value = "";
  for (let i = start + 1; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') return { value, closed: true, end: i + 1 };
    if (c !== "\\") {
      value += c;
      continue;
    }
    const next = text[i + 1];
    if (next === undefined) break;
    if (next === "u") {
      const hex = text.slice(i + 2, i + 6);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) break;
      value += String.fromCharCode(Number.parseInt(hex, 16));
      i += 5;
      continue;
    }
    value += ({ n: "\n", t: "\t", r: "\r", b: "\b", f: "\f" } as Record<string, string>)[next] ?? next;
    i++;
  }
  return { value, closed: false, end: text.length };
}

/** Where a non-string value starting at `start` ends, or undefined when it has not ended yet. */
function valueEnd(text: string, start: number): number | undefined {
  let depth = 0;
  for (let i = start; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      const s = readString(text, i);
      if (!s.closed) return undefined;
      i = s.end - 1;
    } else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      if (depth === 0) return i;
      depth--;
      if (depth === 0) return i + 1;
    } else if (c === "," && depth === 0) return i;
  }
  return undefined;
}
