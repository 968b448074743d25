/**
 * The resource patterns of the settings keys `extensions`, `skills`, `prompts` and `themes` and of a package's
 * filters, with the closest peer's meaning so its users' settings keep working:
 * - a plain entry with `*` or `?` is a glob that selects (when a list has any, only what they match is in);
 * - `!glob` excludes what it matches;
 * - `+path` forces one exact path in (beating `!`), `-path` forces one out (beating everything).
 * A glob matches a path relative to the base folder, the file name, or the absolute path; for a `SKILL.md` also
 * its folder in each of those forms, so `!skills/old-*` and `-skills/review` work on skill folders.
 *
 * It is a kit helper because the built-ins that walk their own folders (skills, prompt templates) apply the same
 * patterns to what they find, and the package manager applies them to package contents.
 */
import { readFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

export type ResourceKind = "extensions" | "skills" | "prompts" | "themes";
export const RESOURCE_KINDS: readonly ResourceKind[] = ["extensions", "skills", "prompts", "themes"];

/** Whether a settings entry is a pattern rather than a path to add. */
export function isResourcePattern(entry: string): boolean {
  return /^[!+-]/.test(entry) || hasGlob(entry);
}

export function hasGlob(entry: string): boolean {
  return entry.includes("*") || entry.includes("?");
}

const globCache = new Map<string, RegExp>();

/** `**` crosses folders, `*` and `?` stay inside one; everything else is literal. */
export function globToRegExp(glob: string): RegExp {
  const cached = globCache.get(glob);
  if (cached) return cached;
  let source = "";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === "*" && glob[i + 1] === "*") {
      i++;
      if (glob[i + 1] === "/") {
        i++;
        source += "(?:.*/)?";
      } else source += ".*";
    } else if (c === "*") source += "[^/]*";
    else if (c === "?") source += "[^/]";
    else source += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  const regex = new RegExp(`^${source}$`);
  globCache.set(glob, regex);
  return regex;
}

const posix = (path: string) => path.split(sep).join("/");

/** The forms of `file` a pattern is compared with. */
function forms(file: string, baseDir: string): string[] {
  const out = [posix(relative(baseDir, file)), basename(file), posix(file)];
  if (basename(file) === "SKILL.md") {
    const folder = dirname(file);
    out.push(posix(relative(baseDir, folder)), basename(folder), posix(folder));
  }
  return out;
}

function matchesGlob(file: string, globs: readonly string[], baseDir: string): boolean {
  const candidates = forms(file, baseDir);
  return globs.some((glob) => {
    const regex = globToRegExp(posix(glob));
    return candidates.some((c) => regex.test(c));
  });
}

function matchesExact(file: string, paths: readonly string[], baseDir: string): boolean {
  const candidates = forms(file, baseDir).filter((_, i) => i !== 1 && i !== 4);
  return paths.some((path) => {
    const wanted = posix(isAbsolute(path) ? path : path.replace(/^\.[/\\]/, ""));
    return candidates.includes(wanted);
  });
}

function split(patterns: readonly string[]) {
  const out = {
    include: [] as string[],
    exclude: [] as string[],
    force: [] as string[],
    drop: [] as string[],
  };
  for (const p of patterns) {
    if (p.startsWith("+")) out.force.push(p.slice(1));
    else if (p.startsWith("-")) out.drop.push(p.slice(1));
    else if (p.startsWith("!")) out.exclude.push(p.slice(1));
    else out.include.push(p);
  }
  return out;
}

/**
 * The subset of `files` that `patterns` leave enabled, in the order of `files`. Plain globs select (all files when
 * there are none), `!` removes, `+` adds back, `-` removes for good.
 */
export function applyResourcePatterns(
  files: readonly string[],
  patterns: readonly string[],
  baseDir: string,
): Set<string> {
  const { include, exclude, force, drop } = split(patterns);
  return new Set(
    files.filter((file) => {
      if (matchesExact(file, drop, baseDir)) return false;
      if (matchesExact(file, force, baseDir)) return true;
      if (include.length > 0 && !matchesGlob(file, include, baseDir)) return false;
      return !matchesGlob(file, exclude, baseDir);
    }),
  );
}

/**
 * Whether the overriding patterns (`!`, `+`, `-`) of a settings list leave a found resource enabled: plain entries
 * add paths and do not filter what a resource folder holds.
 */
export function enabledByOverrides(file: string, patterns: readonly string[], baseDir: string): boolean {
  const { exclude, force, drop } = split(patterns.filter((p) => /^[!+-]/.test(p)));
  if (matchesExact(file, drop, baseDir)) return false;
  if (matchesExact(file, force, baseDir)) return true;
  return !matchesGlob(file, exclude, baseDir);
}

/** The scope a resource folder belongs to, which decides the settings file whose patterns apply. */
export type ResourceScope = "user" | "project";

/**
 * For the built-ins that walk their own folders: whether `file` found in a folder of `scope` is enabled by the
 * `kind` patterns of that scope's settings file (`<agentDir>/settings.json`, or `<cwd>/.knightcode/settings.json`
 * for a trusted project). Patterns are relative to the folder holding the settings file. An unreadable file counts
 * as no patterns: the settings loader already reported it.
 */
export function resourceFilter(
  kind: ResourceKind,
  places: { agentDir: string; cwd: string },
): (file: string, scope: ResourceScope) => boolean {
  const bases = { user: resolve(places.agentDir), project: join(resolve(places.cwd), ".knightcode") };
  const lists = {
    user: readPatterns(join(bases.user, "settings.json"), kind),
    project: readPatterns(join(bases.project, "settings.json"), kind),
  };
  return (file, scope) => enabledByOverrides(file, lists[scope], bases[scope]);
}

function readPatterns(file: string, kind: ResourceKind): string[] {
  try {
    const value = (JSON.parse(readFileSync(file, "utf8").replace(/^\uFEFF/, "")) as Record<string, unknown>)[
      kind
    ];
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
  } catch {
    return [];
  }
}
