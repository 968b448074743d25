import { homedir } from "node:os";
import { isAbsolute, resolve } from "node:path";

/**
 * Resolves a path a model gave: relative to the session's working folder, a leading `@` (as people write file
 * references) stripped, and `~` expanded to the home folder.
 */
export function resolveToolPath(cwd: string, input: string): string {
  let path = input.trim();
  if (path.startsWith("@")) path = path.slice(1);
  if (path === "~") return homedir();
  if (path.startsWith("~/")) return resolve(homedir(), path.slice(2));
  return isAbsolute(path) ? resolve(path) : resolve(cwd, path);
}

/**
 * The folder a core tool works in: the one its factory was given, else the session's at each call (`ctx.cwd`; the
 * built-in tools use this, so every session of a process gets its own). Without either, the process's.
 */
export function toolCwd(fixed: string | undefined, ctx: { readonly cwd: string } | undefined): string {
  return fixed ?? ctx?.cwd ?? process.cwd();
}
