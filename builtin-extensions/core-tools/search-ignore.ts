/**
 * Glob and ignore-file matching for the in-process search, written to agree with ripgrep and fd (both built on the
 * Rust `ignore` crate, whose globs come from `globset`):
 *
 * - `compileGlob` turns a glob into a RegExp the way globset does with `literal_separator`: `*` and `?` stay inside
 *   one path component, `**` spans components only as a whole component (`**​/x`, `x/**`, `a/**​/b`), `[...]` classes
 *   (`[!...]`/`[^...]` negate), `{a,b}` alternatives, `\` escapes the next character.
 * - `Gitignore` holds the rules of one ignore file (or a list of `--glob` lines), parsed like the `ignore` crate's
 *   `GitignoreBuilder::add_line`: a pattern without a slash matches a name at any depth, a leading or inner slash
 *   anchors it to the file's folder, a trailing slash matches folders only, `!` re-includes; the last matching rule
 *   decides, and a rule is tested against the path itself only (never its parents: the walker does not enter an
 *   ignored folder, and a search rooted inside an ignored folder still sees its files, as ripgrep does).
 * - `GlobOverride` is ripgrep's `--glob`: a plain glob lets matching paths in (even ignored ones) and keeps other
 *   files out, a `!glob` keeps matching paths out.
 *
 * The npm package `ignore` always applies parent-folder rules and has no `{a,b}` globs, so it cannot give the same
 * answers; that is why this file exists.
 */
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export type IgnoreMatch = "ignore" | "whitelist" | undefined;

export class GlobSyntaxError extends Error {
  constructor(glob: string, reason: string) {
    super(`Invalid glob "${glob}": ${reason}`);
    this.name = "GlobSyntaxError";
  }
}

type Token =
  | { t: "lit"; c: string }
  | { t: "any" }
  | { t: "star" }
  | { t: "rprefix" }
  | { t: "rsuffix" }
  | { t: "rzero" }
  | { t: "class"; negated: boolean; ranges: [string, string][] }
  | { t: "alt"; branches: Token[][] };

const SYNTAX = new Set(["\\", "^", "$", ".", "*", "+", "?", "(", ")", "[", "]", "{", "}", "|", "/"]);
const CLASS_SYNTAX = new Set(["\\", "]", "[", "^", "-"]);
/** A non-ASCII character as the escapes of its UTF-8 bytes (globset matches bytes, so `?` is one byte). */
const byteEscapes = (c: string) =>
  Array.from(Buffer.from(c, "utf8"), (b) => `\\x${b.toString(16).padStart(2, "0")}`).join("");
const lit = (c: string) => (c.charCodeAt(0) >= 128 ? byteEscapes(c) : SYNTAX.has(c) ? `\\${c}` : c);
const classLit = (c: string) =>
  c.charCodeAt(0) >= 128 ? byteEscapes(c) : CLASS_SYNTAX.has(c) ? `\\${c}` : c;

/** A path as one character per UTF-8 byte, the form compiled globs match against. */
export function pathBytes(path: string): string {
  for (let i = 0; i < path.length; i++) {
    if (path.charCodeAt(i) >= 128) return Buffer.from(path, "utf8").toString("latin1");
  }
  return path;
}

function parseGlob(glob: string): Token[] {
  const chars = Array.from(glob);
  let i = 0;
  let prev: string | undefined;
  const stack: Token[][] = [[]];
  const top = () => stack[stack.length - 1]!;
  const peek = () => chars[i];
  const bump = () => {
    const c = chars[i++];
    prev = c;
    return c;
  };
  const popAlternate = () => {
    const branches: Token[][] = [];
    while (stack.length >= 2) branches.unshift(stack.pop()!);
    top().push({ t: "alt", branches });
  };
  const isSep = (c: string | undefined) => c === "/";
  const twoStars = () => top().push({ t: "star" }, { t: "star" });

  while (i < chars.length) {
    const before = prev;
    const c = bump()!;
    switch (c) {
      case "?":
        top().push({ t: "any" });
        break;
      case "*": {
        if (peek() !== "*") {
          top().push({ t: "star" });
          break;
        }
        bump();
        if (top().length === 0) {
          if (peek() !== undefined && !isSep(peek())) twoStars();
          else {
            top().push({ t: "rprefix" });
            if (peek() !== undefined) bump();
          }
          break;
        }
        if (!isSep(before) && (stack.length <= 1 || (before !== "," && before !== "{"))) {
          twoStars();
          break;
        }
        let isSuffix: boolean;
        const next = peek();
        if (next === undefined) isSuffix = true;
        else if ((next === "," || next === "}") && stack.length >= 2) isSuffix = true;
        else if (isSep(next)) {
          bump();
          isSuffix = false;
        } else {
          twoStars();
          break;
        }
        const last = top().pop();
        if (last?.t === "rprefix" || last?.t === "rsuffix") top().push(last);
        else top().push({ t: isSuffix ? "rsuffix" : "rzero" });
        break;
      }
      case "[": {
        const ranges: [string, string][] = [];
        let negated = false;
        if (peek() === "!" || peek() === "^") {
          bump();
          negated = true;
        }
        let first = true;
        let inRange = false;
        let closed = false;
        while (i < chars.length) {
          const d = bump()!;
          if (d === "]" && !first) {
            closed = true;
            break;
          }
          if (d === "-" && !first && !inRange) inRange = true;
          else if (inRange) {
            const range = ranges[ranges.length - 1]!;
            if (range[0] > d) throw new GlobSyntaxError(glob, `invalid range ${range[0]}-${d}`);
            range[1] = d;
            inRange = false;
          } else ranges.push([d, d]);
          first = false;
        }
        if (!closed) throw new GlobSyntaxError(glob, "unclosed character class");
        if (inRange) ranges.push(["-", "-"]);
        top().push({ t: "class", negated, ranges });
        break;
      }
      case "{":
        if (stack.length > 1) throw new GlobSyntaxError(glob, "nested alternate groups are not allowed");
        stack.push([]);
        break;
      case "}":
        if (stack.length > 1) popAlternate();
        else top().push({ t: "lit", c });
        break;
      case ",":
        if (stack.length > 1) stack.push([]);
        else top().push({ t: "lit", c });
        break;
      case "\\": {
        const d = bump();
        if (d === undefined) throw new GlobSyntaxError(glob, "dangling '\\'");
        top().push({ t: "lit", c: d });
        break;
      }
      default:
        top().push({ t: "lit", c });
    }
  }
  if (stack.length > 1) throw new GlobSyntaxError(glob, "unclosed alternate group");
  return stack[0]!;
}

function tokensToRegex(tokens: Token[]): string {
  let re = "";
  for (const tok of tokens) {
    switch (tok.t) {
      case "lit":
        re += lit(tok.c);
        break;
      case "any":
        re += "[^/]";
        break;
      case "star":
        re += "[^/]*";
        break;
      case "rprefix":
        re += "(?:/?|.*/)";
        break;
      case "rsuffix":
        re += "/.*";
        break;
      case "rzero":
        re += "(?:/|/.*/)";
        break;
      case "class": {
        const body = tok.ranges
          .map(([a, b]) => (a === b ? classLit(a) : `${classLit(a)}-${classLit(b)}`))
          .join("");
        re += `[${tok.negated ? "^" : ""}${body}]`;
        break;
      }
      case "alt": {
        const parts = tok.branches.map(tokensToRegex).filter((p) => p.length > 0);
        if (parts.length > 0) re += `(?:${parts.join("|")})`;
        break;
      }
    }
  }
  return re;
}

/**
 * A glob as an anchored RegExp over `/`-separated relative paths in `pathBytes` form (one character per byte).
 * Throws GlobSyntaxError.
 */
export function compileGlob(glob: string): RegExp {
  const tokens = parseGlob(glob);
  if (tokens.length === 1 && tokens[0]!.t === "rprefix") return /^.*$/s;
  return new RegExp(`^${tokensToRegex(tokens)}$`, "s");
}

interface Rule {
  re: RegExp;
  whitelist: boolean;
  onlyDir: boolean;
}

/** One gitignore line as a rule; undefined for blanks, comments and globs that do not parse. */
function parseLine(raw: string): Rule | undefined {
  if (raw.startsWith("#")) return undefined;
  let line = raw.endsWith("\\ ") ? raw : raw.trimEnd();
  if (line === "") return undefined;
  let whitelist = false;
  let absolute = false;
  if (line.startsWith("\\!") || line.startsWith("\\#")) {
    line = line.slice(1);
  } else {
    if (line.startsWith("!")) {
      whitelist = true;
      line = line.slice(1);
    }
    if (line.startsWith("/")) {
      absolute = true;
      line = line.slice(1);
    }
  }
  let onlyDir = false;
  if (line.endsWith("/")) {
    onlyDir = true;
    line = line.slice(0, -1);
    if (line.endsWith("\\")) line = line.slice(0, -1);
  }
  let actual = line;
  if (!absolute && !line.includes("/") && !(actual.startsWith("**/") || actual === "**"))
    actual = `**/${actual}`;
  if (actual.endsWith("/**")) actual = `${actual}/*`;
  try {
    return { re: compileGlob(actual), whitelist, onlyDir };
  } catch {
    return undefined;
  }
}

/** The rules of one ignore file; paths given to `match` are relative to the file's folder. */
export class Gitignore {
  private constructor(private readonly rules: Rule[]) {}

  static parse(text: string): Gitignore {
    const rules: Rule[] = [];
    for (const line of text.split("\n")) {
      const rule = parseLine(line);
      if (rule) rules.push(rule);
    }
    return new Gitignore(rules);
  }

  /** Rules that were lines like `glob` (not `!glob`). */
  get ignoreRules(): number {
    return this.rules.filter((r) => !r.whitelist).length;
  }

  get empty(): boolean {
    return this.rules.length === 0;
  }

  match(path: string, isDir: boolean): IgnoreMatch {
    const bytes = pathBytes(path);
    for (let i = this.rules.length - 1; i >= 0; i--) {
      const rule = this.rules[i]!;
      if (rule.onlyDir && !isDir) continue;
      if (rule.re.test(bytes)) return rule.whitelist ? "whitelist" : "ignore";
    }
    return undefined;
  }
}

/**
 * ripgrep's `--glob`: each line is read like a gitignore line with the meaning turned around. A path matching a
 * plain glob is let in (before any ignore file is asked); a path matching `!glob` is kept out; when there is at
 * least one plain glob, a file that matches nothing is kept out (folders are still entered).
 */
export class GlobOverride {
  private readonly rules: Gitignore;
  private readonly plain: number;

  constructor(globs: readonly string[]) {
    for (const glob of globs) {
      const body = glob.startsWith("!") ? glob.slice(1) : glob;
      compileGlob(body.replace(/^\//, "").replace(/\/$/, ""));
    }
    this.rules = Gitignore.parse(globs.join("\n"));
    this.plain = this.rules.ignoreRules;
  }

  match(path: string, isDir: boolean): IgnoreMatch {
    const m = this.rules.match(path, isDir);
    if (m === "ignore") return "whitelist";
    if (m === "whitelist") return "ignore";
    if (this.plain > 0 && !isDir) return "ignore";
    return undefined;
  }

  /** For a listing already filtered by ignore files: is this file kept (neither it nor a parent folder is kept out)? */
  keeps(path: string): boolean {
    if (this.match(path, false) === "ignore") return false;
    let slash = path.indexOf("/");
    while (slash >= 0) {
      if (this.match(path.slice(0, slash), true) === "ignore") return false;
      slash = path.indexOf("/", slash + 1);
    }
    return true;
  }
}

const readText = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
};

/**
 * The user's global git excludes file, found the way the `ignore` crate finds it: `core.excludesFile` in
 * `~/.gitconfig`, else in `$XDG_CONFIG_HOME/git/config`, else `$XDG_CONFIG_HOME/git/ignore` (`~/.config/git/ignore`).
 */
export function loadGlobalGitignore(env: NodeJS.ProcessEnv = process.env): Gitignore | undefined {
  const home = env.HOME || homedir();
  const xdg = env.XDG_CONFIG_HOME ? env.XDG_CONFIG_HOME : join(home, ".config");
  const fromConfig = (text: string | undefined) => {
    const m = text ? /^\s*excludesfile\s*=\s*(.+)\s*$/im.exec(text) : null;
    if (!m) return undefined;
    const value = m[1]!;
    return value.startsWith("~/") ? join(home, value.slice(2)) : value;
  };
  const path =
    fromConfig(readText(join(home, ".gitconfig"))) ??
    fromConfig(readText(join(xdg, "git", "config"))) ??
    join(xdg, "git", "ignore");
  const text = readText(path);
  if (text === undefined) return undefined;
  const rules = Gitignore.parse(text);
  return rules.empty ? undefined : rules;
}
