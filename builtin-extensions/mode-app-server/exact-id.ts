/**
 * Request ids exactly as the client wrote them. `JSON.parse` turns a number token into a double, so an id such as
 * `9007199254740993` (past `Number.MAX_SAFE_INTEGER`) or `1.0` would be echoed as another number. When the parsed
 * number does not print back as the token the client sent, the id is kept as that token (`ExactId`) and written
 * back verbatim by `stringifyMessage`.
 */
import { stringifySafely } from "@knightcodeai/cli/kit";

/** A numeric id kept as its source text. */
export class ExactId {
  constructor(readonly raw: string) {}
  /** Anything that serializes it without `stringifyMessage` still gets a number. */
  toJSON(): number {
    return Number(this.raw);
  }
  toString(): string {
    return this.raw;
  }
}

export type RequestId = string | number | ExactId;

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/;

/**
 * The source text of the top-level `"id"` member's value when it is a number (the last one, as `JSON.parse` keeps
 * the last of repeated keys). `text` must be valid JSON (it was parsed already).
 */
export function rawIdToken(text: string): string | undefined {
  let depth = 0;
  let found: string | undefined;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const start = i;
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 0x5c /* \ */) i += 2;
        else if (d === 0x22) break;
        else i++;
      }
      i++;
      if (depth !== 1) continue;
      // A string at depth 1 followed by ':' is a member name of the top-level object.
      let j = i;
      while (j < n && isSpace(text.charCodeAt(j))) j++;
      if (text.charCodeAt(j) !== 0x3a /* : */) continue;
      if (JSON.parse(text.slice(start, i)) !== "id") continue;
      j++;
      while (j < n && isSpace(text.charCodeAt(j))) j++;
      const token = NUMBER.exec(text.slice(j, j + 400))?.[0];
      found = token;
      continue;
    }
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) depth++;
    else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
    i++;
  }
  return found;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

/** The id to echo: a number that would not print back as sent becomes an `ExactId` of its token. */
export function exactId(text: string, parsed: unknown): unknown {
  if (typeof parsed !== "number" || !Number.isFinite(parsed)) return parsed;
  const raw = rawIdToken(text);
  return raw !== undefined && raw !== JSON.stringify(parsed) ? new ExactId(raw) : parsed;
}

/** A message as one JSON text, an `ExactId` id written as its token. */
export function stringifyMessage(message: Record<string, unknown>): string {
  const { id } = message;
  if (!(id instanceof ExactId)) return stringifySafely(message).text;
  const { id: _id, ...rest } = message;
  const body = stringifySafely(rest).text;
  return body === "{}" ? `{"id":${id.raw}}` : `{"id":${id.raw},${body.slice(1)}`;
}
