/**
 * Where a call's path leads: inside the project or not, and whether it is protected. Paths are resolved as the
 * core tools resolve them (`@` dropped, `~` expanded, relative to the session folder), then through symlinks of
 * the part that exists, so `src/link -> ../../.ssh` is outside the project and `docs -> .git` is protected.
 */
import { existsSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { matchPattern } from "./rules.js";

export function resolveCallPath(cwd: string, input: string): string {
  let path = input.trim();
  if (path.startsWith("@")) path = path.slice(1);
  if (path === "~") path = homedir();
  else if (path.startsWith("~/")) path = join(homedir(), path.slice(2));
  return realPath(isAbsolute(path) ? resolve(path) : resolve(cwd, path));
}

/** The real path of the deepest part that exists, with the rest appended. */
export function realPath(path: string): string {
  const rest: string[] = [];
  let current = path;
  // existsSync before realpath: a thrown ENOENT costs more than the whole check (bench/gate.bench.ts).
  while (!existsSync(current)) {
    const parent = dirname(current);
    if (parent === current) return path;
    rest.push(basename(current));
    current = parent;
  }
  try {
    return join(realpathSync.native(current), ...rest.reverse());
  } catch {
    return path;
  }
}

/** `path` relative to `root` when inside it (`""` for the root itself), otherwise undefined. */
export function insideOf(root: string, path: string): string | undefined {
  const rel = relative(root, path);
  if (rel === "") return "";
  if (rel.startsWith("..") || isAbsolute(rel)) return undefined;
  return rel.split(sep).join("/");
}

export interface ProtectedPaths {
  /** The project folder and the agent folder, as real paths. */
  project: string;
  agentDir: string;
  /** More paths from tools.json: globs relative to the project, or absolute. */
  extra: readonly string[];
}

/** Why a path may not change without a person: `.git/`, `.knightcode/`, the agent folder, `.env*`, extras. */
export function protectedReason(path: string, paths: ProtectedPaths): string | undefined {
  if (insideOf(paths.agentDir, path) !== undefined) return "the KnightCode agent folder";
  const parts = path.split(sep);
  if (parts.includes(".git")) return "a .git folder";
  if (parts.includes(".knightcode")) return "a .knightcode folder";
  if (basename(path).startsWith(".env")) return "an .env file";
  const rel = insideOf(paths.project, path);
  for (const glob of paths.extra) {
    const hit = isAbsolute(glob)
      ? matchPattern(glob, "path", path)
      : rel !== undefined && matchPattern(glob, "path", rel);
    if (hit) return `the protected path ${glob}`;
  }
  return undefined;
}

/**
 * A shell command that names a protected path. Commands cannot be resolved like paths, so any mention counts:
 * `git status` does not name `.git`, `rm -rf .git` does.
 */
export function commandMentionsProtected(command: string, paths: ProtectedPaths): string | undefined {
  if (/(^|[\s/'"=:])\.git($|[\s/'"])/.test(command)) return "a .git folder";
  if (/(^|[\s/'"=:])\.knightcode($|[\s/'"])/.test(command)) return "a .knightcode folder";
  if (/(^|[\s/'"=:<>])\.env[\w.-]*($|[\s'"])/.test(command)) return "an .env file";
  if (command.includes(paths.agentDir)) return "the KnightCode agent folder";
  for (const glob of paths.extra) {
    const literal = glob.replace(/\/?\*.*$/, "");
    if (literal !== "" && command.includes(literal)) return `the protected path ${glob}`;
  }
  return undefined;
}
