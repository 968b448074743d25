/**
 * What an extension file written for pi imports, read from its source (and the files it imports by relative path)
 * once it has loaded: whether it imports pi's module names at all, or comes from a package published for pi, which
 * makes it "written for pi" (its event names are read with pi's dialect below), and which imported names
 * KnightCode refuses or lacks, each reported as a warning naming the name and its module when the extension loads. The loader calls `inspectPiExtension` through
 * its `inspect` option (create-agent-session.ts) for the sessions that keep `builtin:pi-compat` on.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { EventDialect, ExtensionInspection } from "../../../kernel/index.js";
import { refusalOf } from "./modules.js";
import { adaptPiProvider } from "./provider.js";

const PI_SPECIFIER = /^@(?:mariozechner|earendil-works)\/pi-(?:coding-agent|ai|tui|agent-core)(?:\/|$)/;
/** Files read per extension at most: a package's own sources, not its dependencies. */
const MAX_FILES = 200;
const EXTENSIONS = [".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".cjs"];

interface ImportedNames {
  specifier: string;
  names: string[];
}

/** The value-level names each import statement of `source` takes, and the specifiers it loads. */
export function importsOf(source: string): { named: ImportedNames[]; specifiers: string[] } {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
  const named: ImportedNames[] = [];
  const specifiers: string[] = [];
  const clause = /\b(import|export)\s+(type\s+)?([\w$\s{},*]*?)\s*from\s*["']([^"']+)["']/g;
  for (const match of code.matchAll(clause)) {
    const [, kind, typeOnly, bindings = "", specifier = ""] = match;
    specifiers.push(specifier);
    if (typeOnly) continue;
    const braces = /\{([^}]*)\}/.exec(bindings)?.[1];
    if (!braces) continue;
    const names = braces
      .split(",")
      .map((part) => part.trim())
      .filter((part) => part && !part.startsWith("type "))
      .map((part) => part.split(/\s+as\s+/)[0]!.trim());
    if (kind === "import" || kind === "export") named.push({ specifier, names });
  }
  for (const match of code.matchAll(
    /\b(?:import|require)\s*\(\s*["']([^"']+)["']\s*\)|\bimport\s+["']([^"']+)["']/g,
  )) {
    specifiers.push((match[1] ?? match[2])!);
  }
  return { named, specifiers };
}

function resolveLocal(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  const stem = base.replace(/\.(m|c)?js$/, "");
  const candidates = [
    base,
    ...EXTENSIONS.map((ext) => stem + ext),
    ...EXTENSIONS.map((ext) => resolve(base, `index${ext}`)),
  ];
  return candidates.find((file) => {
    try {
      return existsSync(file) && statSync(file).isFile();
    } catch {
      return false;
    }
  });
}

/** pi's event names that KnightCode's catalogue lacks, read as pi meant them. */
export const piEventDialect: EventDialect = {
  translateEvent(event) {
    // pi ≤ 0.64 fired these after a switch or fork; pi 0.65 folded them into session_start's reason.
    if (event === "session_switch") {
      return {
        event: "session_start",
        adapt: (payload: { reason?: string }) =>
          payload?.reason === "new" || payload?.reason === "resume" ? { ...payload, type: event } : undefined,
      };
    }
    if (event === "session_fork" || event === "session_branch") {
      return {
        event: "session_start",
        adapt: (payload: { reason?: string }) =>
          payload?.reason === "fork" ? { ...payload, type: event } : undefined,
      };
    }
    if (event === "session_before_branch") return { event: "session_before_fork" };
    return {
      never: `listens to "${event}", an event KnightCode does not emit (nor does the current pi): the handler never runs`,
    };
  },
  adaptProvider: adaptPiProvider,
};

/**
 * Whether `file` belongs to a package published for pi: the closest `package.json` with a name has a `pi` manifest
 * and no `knightcode` one, or the `pi-package` keyword. A built package's compiled JavaScript often imports nothing
 * from pi at run time (its imports of pi were types), so its package says what it was written for.
 */
function inPiPackage(file: string): boolean {
  let dir = dirname(file);
  for (let i = 0; i < 8; i++) {
    const manifest = resolve(dir, "package.json");
    if (existsSync(manifest)) {
      try {
        const json = JSON.parse(readFileSync(manifest, "utf8")) as Record<string, unknown>;
        if (typeof json.name === "string") {
          const keywords = Array.isArray(json.keywords) ? json.keywords : [];
          return (json.pi !== undefined && json.knightcode === undefined) || keywords.includes("pi-package");
        }
      } catch {
        return false;
      }
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return false;
}

/** How many node_modules folders `file` is inside of. */
function nodeModulesDepth(file: string): number {
  return file.split(/[\\/]/).filter((part) => part === "node_modules").length;
}

/**
 * What the extension at `file` imports from pi: the dialect when it imports any pi module name, and a warning per
 * imported name its module refuses or lacks.
 */
export async function inspectPiExtension(
  file: string,
  modules: Record<string, unknown>,
): Promise<ExtensionInspection | undefined> {
  const queue = [file];
  const seen = new Set<string>();
  const warnings: string[] = [];
  let writtenForPi = false;
  // A package installed from npm lives in a node_modules folder itself: only the folders deeper than its own
  // (its dependencies) are left out.
  const depth = nodeModulesDepth(file);
  while (queue.length > 0 && seen.size < MAX_FILES) {
    const current = queue.shift()!;
    if (seen.has(current) || nodeModulesDepth(current) > depth) continue;
    seen.add(current);
    let source: string;
    try {
      source = readFileSync(current, "utf8");
    } catch {
      continue;
    }
    if (!source.includes("pi-") && !source.includes("./") && !source.includes("../")) continue;
    const { named, specifiers } = importsOf(source);
    for (const specifier of specifiers) {
      if (PI_SPECIFIER.test(specifier)) writtenForPi = true;
      else if (specifier.startsWith(".")) {
        const local = resolveLocal(current, specifier);
        if (local) queue.push(local);
      }
    }
    for (const { specifier, names } of named) {
      if (!PI_SPECIFIER.test(specifier) || !(specifier in modules)) continue;
      const module = (await modules[specifier]) as Record<string, unknown>;
      for (const name of names) {
        const value = module[name];
        if (value === undefined && !Object.hasOwn(module, name)) {
          warnings.push(
            `imports ${name} from ${specifier}, which KnightCode does not export (it is undefined there)`,
          );
          continue;
        }
        const reason = refusalOf(value);
        if (reason) {
          warnings.push(
            `imports ${name} from ${specifier}, which KnightCode does not support (${reason}); using it throws`,
          );
        }
      }
    }
  }
  if (!writtenForPi && !inPiPackage(file)) return undefined;
  return { dialect: piEventDialect, ...(warnings.length > 0 ? { warnings: [...new Set(warnings)] } : {}) };
}
