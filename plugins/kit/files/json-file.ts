/**
 * Reading the JSON configuration files (settings.json, tools.json, mcp.json, trust.json, and models.json through
 * `parseJson`): plain JSON (RFC 8259: no comments, no trailing commas), an object at the top level, and errors that
 * point at a line and column. `JSON.parse` reads the file; only when it fails is `jsonc-parser` loaded, to find
 * where and say why in words of our own (V8's messages give no position for some errors).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { sha256Hex } from "../util/random.js";

export type JsonObject = Record<string, unknown>;

/** A JSON object: not null, not an array. */
export function isPlainObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export type JsonFileRead =
  | { status: "missing" }
  /** `version` is the SHA-256 hex of the bytes read, taken on first use. */
  | { status: "ok"; value: JsonObject; version: string }
  /** The file exists but cannot be used; `message` names the file (and the line and column when it was parsed). */
  | { status: "invalid"; message: string; version?: string };

/**
 * Reads a JSON file whose top level must be an object. A missing file is `missing`; an unreadable file, invalid
 * JSON or another top-level value is `invalid` with a message of the form `<file>:<line>:<column>: <reason>`.
 * A leading UTF-8 byte-order mark is ignored, and so is a file holding only whitespace (it reads as `{}`).
 * Nesting deeper than MAX_JSON_DEPTH is `invalid` too (`<file>:<line>:<column>: nested deeper than ... levels`).
 */
export function readJsonObjectFile(file: string): JsonFileRead {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { status: "missing" };
    return { status: "invalid", message: `${file}: cannot be read: ${readFailure(error)}` };
  }
  // The digest is taken when someone asks for the version (a settings write, the app-server's config/read): it
  // loads node:crypto, which a run that only reads its configuration does not otherwise need.
  let digest: string | undefined;
  const version = () => {
    digest ??= sha256Hex(bytes);
    return digest;
  };
  const text = bytes.toString("utf8").replace(/^\uFEFF/, "");
  if (text.trim() === "")
    return {
      status: "ok",
      value: {},
      get version() {
        return version();
      },
    };
  const parsed = parseJson(text);
  if (!parsed.ok) {
    return {
      status: "invalid",
      message: `${file}:${parsed.line}:${parsed.column}: ${jsonProblem(parsed)}`,
      get version() {
        return version();
      },
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
      get version() {
        return version();
      },
    };
  }
  return {
    status: "ok",
    value: parsed.value,
    get version() {
      return version();
    },
  };
}

/**
 * Why a file could not be read, in words: `it is a directory`, `permission denied`, `it is a symbolic link loop`,
 * else the system's message.
 */
export function readFailure(error: unknown): string {
  switch ((error as NodeJS.ErrnoException).code) {
    case "EISDIR":
      return "it is a directory";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "ELOOP":
      return "it is a symbolic link loop";
    default:
      return error instanceof Error ? error.message : String(error);
  }
}

export type JsonParse =
  | { ok: true; value: unknown }
  /**
   * `line` and `column` are 1-based; `reason` is short and names no position. `tooDeep`: the text may be JSON,
   * but it nests deeper than MAX_JSON_DEPTH (`reason` says so).
   */
  | { ok: false; line: number; column: number; reason: string; tooDeep?: true };

/**
 * How deep a configuration file may nest arrays and objects. No real configuration comes near it; far deeper
 * nesting (tens of thousands of levels) parses, but overflows the stack of every recursive step after the parse
 * (merging, validation, cloning, masking), which would end the run naming no file.
 */
export const MAX_JSON_DEPTH = 1000;

/**
 * `JSON.parse`, and for text that is not JSON, where the first error is and why. A leading byte-order mark is
 * ignored. Text nesting deeper than MAX_JSON_DEPTH is refused (`tooDeep`) before it is parsed.
 */
export function parseJson(text: string): JsonParse {
  const source = text.replace(/^\uFEFF/, "");
  const deep = nestingBeyond(source, MAX_JSON_DEPTH);
  if (deep !== undefined) {
    return {
      ok: false,
      ...lineAndColumn(source, deep),
      reason: `nested deeper than ${MAX_JSON_DEPTH} levels`,
      tooDeep: true,
    };
  }
  try {
    return { ok: true, value: JSON.parse(source) };
  } catch (error) {
    return { ok: false, ...(locateJsonError(source) ?? fromV8(source, error)) };
  }
}

/** A failed parse in words: `invalid JSON: <reason>`, or only the reason for nesting too deep. */
export function jsonProblem(failed: { reason: string; tooDeep?: true }): string {
  return failed.tooDeep ? failed.reason : `invalid JSON: ${failed.reason}`;
}

/** The offset of the first `[` or `{` that opens level `limit + 1`, counting outside strings; one pass, no stack. */
function nestingBeyond(text: string, limit: number): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return i;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return undefined;
}

/** 1-based line and column of a character offset. */
export function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lines = before.split("\n");
  return { line: lines.length, column: lines[lines.length - 1]!.length + 1 };
}

type JsonError = { line: number; column: number; reason: string };
type Jsonc = typeof import("jsonc-parser");

let jsonc: Jsonc | undefined;

/** The first error in `text` as jsonc-parser finds it with comments and trailing commas refused, if it can. */
function locateJsonError(text: string): JsonError | undefined {
  jsonc ??= createRequire(import.meta.url)("jsonc-parser") as Jsonc;
  const { printParseErrorCode, visit } = jsonc;
  const open: ("object" | "array")[] = [];
  let found: JsonError | undefined;
  try {
    visit(
      text,
      {
        onObjectBegin: () => {
          open.push("object");
        },
        onArrayBegin: () => {
          open.push("array");
        },
        onObjectEnd: () => {
          open.pop();
        },
        onArrayEnd: () => {
          open.pop();
        },
        onError: (code, offset, length, line, character) => {
          if (found) return;
          const reason = describe(printParseErrorCode(code), text, offset, length, open.at(-1));
          found = { line: line + 1, column: character + 1, reason };
        },
      },
      { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false },
    );
  } catch {
    // e.g. a stack overflow on absurdly deep nesting: V8's message is used instead
  }
  return found;
}

/** Our words for jsonc-parser's error codes. */
function describe(
  code: string,
  text: string,
  offset: number,
  length: number,
  inside: "object" | "array" | undefined,
): string {
  const closer = text[offset];
  const trailingComma = (closer === "}" || closer === "]") && /,\s*$/.test(text.slice(0, offset));
  const comma = `a comma before \`${closer}\` is not allowed in JSON`;
  switch (code) {
    case "InvalidCommentToken":
    case "UnexpectedEndOfComment":
      return "comments are not allowed in JSON";
    case "PropertyNameExpected":
      return trailingComma ? comma : "expected a property name in double quotes";
    case "ValueExpected":
      return trailingComma ? comma : "expected a value";
    case "ColonExpected":
      return "expected `:` after the property name";
    case "CommaExpected":
      return inside === "array"
        ? "expected `,` or `]` after an array element"
        : "expected `,` or `}` after a property value";
    case "CloseBraceExpected":
      return offset >= text.length ? "the text ends before `}` closes the object" : "expected `}`";
    case "CloseBracketExpected":
      return offset >= text.length ? "the text ends before `]` closes the array" : "expected `]`";
    case "EndOfFileExpected":
      return "unexpected text after the end of the JSON value";
    case "InvalidNumberFormat":
    case "UnexpectedEndOfNumber":
      return "invalid number";
    case "UnexpectedEndOfString":
      return "unterminated string (a line break in a string is written \\n)";
    case "InvalidUnicode":
      return "invalid \\u escape in a string";
    case "InvalidEscapeCharacter":
      return "invalid escape in a string (a backslash is written \\\\)";
    case "InvalidCharacter":
      return "a control character in a string (a tab is written \\t)";
    default: {
      const token = text.slice(offset, offset + Math.max(length, 1)).slice(0, 24);
      return /^[\x21-\x7e]+$/.test(token)
        ? `unexpected \`${token}\``
        : `unexpected character U+${token.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
    }
  }
}

/**
 * V8's own account, for an error jsonc-parser could not report (its parser recurses, so nesting thousands deep
 * overflows the stack): the position V8 gives, the end for a text that stops short, else the start.
 */
function fromV8(text: string, error: unknown): JsonError {
  const message = error instanceof Error ? error.message : String(error);
  const position = /at position (\d+)/.exec(message);
  const offset = position ? Number(position[1]) : /end of JSON input/.test(message) ? text.length : 0;
  const reason = message
    .replace(/, ".*" is not valid JSON$/s, "")
    .replace(/ in JSON at position \d+.*$/s, "");
  return { ...lineAndColumn(text, offset), reason };
}
