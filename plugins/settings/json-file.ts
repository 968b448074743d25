/**
 * Reading the JSON configuration files (settings.json, trust.json): plain JSON (no comments), an object at the top
 * level, and errors that point at a line and column.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

export type JsonObject = Record<string, unknown>;

/** A JSON object: not null, not an array. */
export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export type JsonFileRead =
  | { status: "missing" }
  /** `version` is the SHA-256 hex of the bytes read. */
  | { status: "ok"; value: JsonObject; version: string }
  /** The file exists but cannot be used; `message` names the file (and the line and column when it was parsed). */
  | { status: "invalid"; message: string; version?: string };

/**
 * Reads a JSON file whose top level must be an object. A missing file is `missing`; an unreadable file, invalid
 * JSON or another top-level value is `invalid` with a message of the form `<file>:<line>:<column>: <reason>`.
 * A leading UTF-8 byte-order mark is ignored, and so is a file holding only whitespace (it reads as `{}`).
 */
export function readJsonObjectFile(file: string): JsonFileRead {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { status: "missing" };
    return { status: "invalid", message: `${file}: cannot be read: ${(error as Error).message}` };
  }
  const version = createHash("sha256").update(bytes).digest("hex");
  const text = bytes.toString("utf8").replace(/^\uFEFF/, "");
  if (text.trim() === "") return { status: "ok", value: {}, version };
  const parsed = parseJson(text);
  if (!parsed.ok) {
    const { line, column } = lineAndColumn(text, parsed.offset);
    return {
      status: "invalid",
      message: `${file}:${line}:${column}: invalid JSON: ${parsed.reason}`,
      version,
    };
  }
  if (!isPlainObject(parsed.value)) {
    const start = text.length - text.trimStart().length;
    const { line, column } = lineAndColumn(text, start);
    const found =
      parsed.value === null ? "null" : Array.isArray(parsed.value) ? "an array" : typeof parsed.value;
    return {
      status: "invalid",
      message: `${file}:${line}:${column}: the top level must be a JSON object, found ${found}`,
      version,
    };
  }
  return { status: "ok", value: parsed.value, version };
}

export type JsonParse = { ok: true; value: unknown } | { ok: false; reason: string; offset: number };

/**
 * `JSON.parse` with the offset of the first error. Node 20's messages give "at position N" for some errors only
 * ("Unexpected token '}', ... is not valid JSON" has none), so the offset comes from the message when it has one
 * and otherwise from a small scanner that finds the first character that is not valid JSON.
 */
export function parseJson(text: string): JsonParse {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    const reason = (error as Error).message;
    return {
      ok: false,
      reason: shortReason(reason),
      offset: offsetFromMessage(reason, text) ?? firstErrorOffset(text) ?? 0,
    };
  }
}

/** 1-based line and column of a character offset. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lines = before.split("\n");
  return { line: lines.length, column: lines[lines.length - 1]!.length + 1 };
}

function shortReason(message: string): string {
  // V8 quotes the whole input in some messages: `Unexpected token '}', "{ ...whole file... }" is not valid JSON`.
  const quoted = /^(Unexpected token .+?), ".*" is not valid JSON$/s.exec(message);
  if (quoted) return quoted[1]!;
  // The position is given as line and column instead.
  return message.replace(/ (in JSON )?at position \d+.*$/s, "").replace(/ \(line \d+ column \d+\)$/, "");
}

function offsetFromMessage(message: string, text: string): number | undefined {
  const position = /at position (\d+)/.exec(message);
  if (position) return Number(position[1]);
  const lineColumn = /line (\d+) column (\d+)/.exec(message);
  if (lineColumn) {
    const lines = text.split("\n");
    const line = Math.min(Number(lineColumn[1]), lines.length);
    let offset = 0;
    for (let i = 0; i < line - 1; i++) offset += lines[i]!.length + 1;
    return offset + Number(lineColumn[2]) - 1;
  }
  if (/Unexpected end of JSON input/.test(message)) return text.length;
  return undefined;
}

class ScanError {
  constructor(readonly offset: number) {}
}

/** The offset of the first character that makes `text` invalid JSON (RFC 8259), or undefined if it is valid. */
export function firstErrorOffset(text: string): number | undefined {
  let i = 0;
  const fail = (at = i): never => {
    throw new ScanError(at);
  };
  const skipSpace = () => {
    while (i < text.length && (text[i] === " " || text[i] === "\t" || text[i] === "\n" || text[i] === "\r"))
      i++;
  };
  const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";
  const literal = (word: string) => {
    for (const c of word) {
      if (text[i] !== c) fail();
      i++;
    }
  };
  const string = () => {
    i++; // opening quote
    for (;;) {
      if (i >= text.length) fail();
      const c = text[i]!;
      if (c === '"') {
        i++;
        return;
      }
      if (c === "\\") {
        i++;
        const e = text[i];
        if (e === "u") {
          for (let k = 1; k <= 4; k++) if (!/[0-9a-fA-F]/.test(text[i + k] ?? "")) fail(i + k);
          i += 5;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i++;
        else fail();
        continue;
      }
      if (c.charCodeAt(0) < 0x20) fail();
      i++;
    }
  };
  const number = () => {
    if (text[i] === "-") i++;
    if (text[i] === "0") i++;
    else if (isDigit(text[i])) while (isDigit(text[i])) i++;
    else fail();
    if (text[i] === ".") {
      i++;
      if (!isDigit(text[i])) fail();
      while (isDigit(text[i])) i++;
    }
    if (text[i] === "e" || text[i] === "E") {
      i++;
      if (text[i] === "+" || text[i] === "-") i++;
      if (!isDigit(text[i])) fail();
      while (isDigit(text[i])) i++;
    }
  };
  const value = (): void => {
    skipSpace();
    const c = text[i];
    if (c === "{") {
      i++;
      skipSpace();
      if (text[i] === "}") {
        i++;
        return;
      }
      for (;;) {
        skipSpace();
        if (text[i] !== '"') fail();
        string();
        skipSpace();
        if (text[i] !== ":") fail();
        i++;
        value();
        skipSpace();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return;
        }
        fail();
      }
    }
    if (c === "[") {
      i++;
      skipSpace();
      if (text[i] === "]") {
        i++;
        return;
      }
      for (;;) {
        value();
        skipSpace();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return;
        }
        fail();
      }
    }
    if (c === '"') {
      string();
      return;
    }
    if (c === "-" || isDigit(c)) {
      number();
      return;
    }
    const word = c === "t" ? "true" : c === "f" ? "false" : c === "n" ? "null" : undefined;
    if (word === undefined) fail();
    else literal(word);
  };
  try {
    value();
    skipSpace();
    if (i < text.length) fail();
    return undefined;
  } catch (error) {
    if (error instanceof ScanError) return error.offset;
    return undefined; // e.g. a stack overflow on absurdly deep nesting
  }
}
