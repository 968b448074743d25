/**
 * What a folder holds of each resource kind, and what a package offers. The folder rules are the ones the session
 * uses for its own folders: extensions are the `.ts`/`.js` files and subfolders of a folder (one level); skills are
 * `SKILL.md` files (a folder with one is a skill, other folders are searched); prompt templates are the `.md` files
 * of a folder; themes are its `.json` files.
 *
 * A package says what it offers in `package.json`: the `knightcode` key, else the closest peer's `pi` key (same
 * shape, so packages published for it install unchanged), each kind a list of paths and globs relative to the
 * package with `!`/`+`/`-` patterns; a kind the manifest leaves out offers nothing. Without a manifest the folders
 * `extensions/`, `skills/`, `prompts/` and `themes/` are read.
 *
 * A package offers only what is inside its own folder: every manifest entry, conventional folder and offered file
 * (and a folder extension's index file and listed entries) must resolve, symbolic links followed, inside the
 * package's real folder. Anything else is refused with a PackageContainmentError naming the package and the entry.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve, sep } from "node:path";
import {
  applyResourcePatterns,
  globToRegExp,
  hasGlob,
  RESOURCE_KINDS,
  type ResourceKind,
} from "../kit/resource-patterns.js";

/** A package entry that resolves outside the package's real folder; `install` refuses the package. */
export class PackageContainmentError extends Error {
  readonly code = "KC_ERR_PACKAGE";
}

const EXTENSION_FILE = /\.(ts|js|mts|mjs)$/;
const SKILL_DEPTH = 4;
const INDEX_FILES = ["index.ts", "index.js", "index.mts", "index.mjs"];

const isDir = (path: string) => statSync(path, { throwIfNoEntry: false })?.isDirectory() ?? false;
const isFile = (path: string) => statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;

function entries(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => !name.startsWith(".") && name !== "node_modules")
      .sort();
  } catch {
    return [];
  }
}

/**
 * The resources of `kind` at `path`: the path itself when it is a file, else what the folder holds. With `entry`
 * (a path named in settings), a folder that is one extension (an `index.ts`, or a package.json listing extensions)
 * is that extension rather than a folder of them.
 */
export function collectResources(path: string, kind: ResourceKind, entry = false): string[] {
  const target = resolve(path);
  if (isFile(target)) return [target];
  if (!isDir(target)) return [];
  if (entry && kind === "extensions") {
    if (INDEX_FILES.some((name) => isFile(join(target, name)))) return [target];
    const { manifest } = readManifest(target);
    if (manifest?.extensions) return packageOffers(target, "extensions", manifest);
  }
  switch (kind) {
    case "extensions":
      return entries(target)
        .map((name) => join(target, name))
        .filter((p) => isDir(p) || (EXTENSION_FILE.test(p) && !p.endsWith(".d.ts")));
    case "skills":
      return skillFiles(target, 0);
    case "prompts":
      return entries(target)
        .filter((name) => name.endsWith(".md"))
        .map((name) => join(target, name))
        .filter(isFile);
    case "themes":
      return entries(target)
        .filter((name) => name.endsWith(".json"))
        .map((name) => join(target, name))
        .filter(isFile);
  }
}

function skillFiles(dir: string, depth: number): string[] {
  const own = join(dir, "SKILL.md");
  if (isFile(own)) return [own];
  if (depth >= SKILL_DEPTH) return [];
  return entries(dir)
    .map((name) => join(dir, name))
    .filter(isDir)
    .flatMap((sub) => skillFiles(sub, depth + 1));
}

export type PackageManifest = Partial<Record<ResourceKind, string[]>>;

/** The manifest of a package folder: `knightcode` key, else `pi`, else undefined (conventional folders). */
export function readManifest(root: string): { manifest?: PackageManifest; error?: string } {
  const file = join(root, "package.json");
  if (!existsSync(file)) return {};
  let json: Record<string, unknown>;
  try {
    json = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  } catch (error) {
    return { error: `${file} is not valid JSON: ${(error as Error).message}` };
  }
  const key = json.knightcode !== undefined ? "knightcode" : json.pi !== undefined ? "pi" : undefined;
  if (!key) return {};
  const value = json[key];
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { error: `${file}: "${key}" must be an object of resource lists` };
  }
  const manifest: PackageManifest = {};
  for (const kind of RESOURCE_KINDS) {
    const list = (value as Record<string, unknown>)[kind];
    if (list === undefined) continue;
    if (!Array.isArray(list) || list.some((e) => typeof e !== "string")) {
      return { error: `${file}: "${key}.${kind}" must be a list of paths or globs` };
    }
    manifest[kind] = list as string[];
  }
  return { manifest };
}

/**
 * Every resource of `kind` the package offers, before the user's filter. With `label` (the package as the user
 * named it), the package is held to its own folder: an entry that is absolute, climbs out with `..`, or reaches
 * outside through a symbolic link throws PackageContainmentError. Without it (a folder named in the user's own
 * settings), entries are taken as they are.
 */
export function packageOffers(
  root: string,
  kind: ResourceKind,
  manifest: PackageManifest | undefined,
  label?: string,
): string[] {
  const fence = label === undefined ? undefined : new Fence(root, label);
  if (!manifest) {
    const folder = join(root, kind);
    fence?.check(folder, `the ${kind}/ folder`);
    return fence ? fence.all(collectResources(folder, kind), kind) : collectResources(folder, kind);
  }
  const list = manifest[kind];
  if (!list) return [];
  const sources = list.filter((e) => !/^[!+-]/.test(e));
  const found = sources.flatMap((entry) => {
    if (hasGlob(entry)) return expandGlob(root, entry).flatMap((p) => collectResources(p, kind));
    fence?.entry(entry, kind);
    return collectResources(join(root, entry), kind);
  });
  const unique = [...new Set(found)];
  fence?.all(unique, kind);
  const overrides = list.filter((e) => /^[!+-]/.test(e));
  if (overrides.length === 0) return unique;
  const kept = applyResourcePatterns(unique, overrides, root);
  return unique.filter((f) => kept.has(f));
}

/** Holds a package's entries to its real folder. */
class Fence {
  private readonly realRoot: string;

  constructor(
    private readonly root: string,
    private readonly label: string,
  ) {
    // A package folder that is missing offers nothing: every check below then finds nothing to refuse.
    this.realRoot = existsSync(root) ? realpathSync(root) : resolve(root);
  }

  /** A manifest entry: refused when absolute or climbing out, before anything is read from it. */
  entry(entry: string, kind: ResourceKind): void {
    const what = `the "${kind}" entry "${entry}"`;
    if (isAbsolute(entry)) this.refuse(what, "is an absolute path");
    if (escapes(relative(resolve(this.root), resolve(this.root, entry)))) {
      this.refuse(what, "climbs out of the package with ..");
    }
    this.check(join(this.root, entry), what);
  }

  /** A path in the package: refused when it (or a link on its way) resolves outside the real folder. */
  check(path: string, what: string): void {
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      return; // missing: offers nothing
    }
    if (escapes(relative(this.realRoot, real))) {
      this.refuse(what, `resolves through a symbolic link to ${real}`);
    }
  }

  /** Every offered path; a folder extension also by its index files and the entries of its package.json. */
  all(paths: string[], kind: ResourceKind): string[] {
    for (const path of paths) {
      const what = `${relative(this.root, path) || "."}`;
      this.check(path, what);
      if (kind !== "extensions" || !isDir(path)) continue;
      for (const name of INDEX_FILES) this.check(join(path, name), join(what, name));
      const listed = extensionsListedIn(path);
      for (const entry of listed) {
        const at = `${join(what, "package.json")} entry "${entry}"`;
        if (isAbsolute(entry)) this.refuse(at, "is an absolute path");
        const target = resolve(path, entry);
        if (escapes(relative(resolve(this.root), target)))
          this.refuse(at, "climbs out of the package with ..");
        this.check(target, at);
      }
    }
    return paths;
  }

  private refuse(what: string, why: string): never {
    throw new PackageContainmentError(
      `package ${this.label}: ${what} ${why}, outside the package folder ${this.realRoot}; a package may only ` +
        "offer files inside its own folder",
    );
  }
}

/** Whether a path relative to a folder leaves it. */
function escapes(rel: string): boolean {
  return isAbsolute(rel) || rel === ".." || rel.startsWith(`..${sep}`);
}

/** The `knightcode.extensions` entries of a folder's package.json, as the extension loader reads them. */
function extensionsListedIn(dir: string): string[] {
  try {
    const listed = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"))?.knightcode?.extensions;
    return Array.isArray(listed) ? listed.filter((e): e is string => typeof e === "string") : [];
  } catch {
    return [];
  }
}

/** Files and folders under `root` whose relative path matches `glob` (node_modules and dot entries skipped). */
function expandGlob(root: string, glob: string): string[] {
  const regex = globToRegExp(glob.replace(/^\.\//, ""));
  const out: string[] = [];
  const walk = (dir: string, depth: number) => {
    for (const name of entries(dir)) {
      const path = join(dir, name);
      const rel = relative(root, path).split("\\").join("/");
      if (regex.test(rel)) out.push(path);
      if (depth < 8 && isDir(path)) walk(path, depth + 1);
    }
  };
  walk(root, 0);
  return out;
}
