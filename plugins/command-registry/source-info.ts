/** The peer's `SourceInfo` for what an extension registers, derived from the extension's own record. */
import { dirname } from "node:path";
import type { ExtensionInfo, SourceInfo } from "../../kernel/index.js";

export function sourceInfoOf(owner: ExtensionInfo): SourceInfo {
  const fromFile = owner.path !== undefined && owner.origin !== "builtin";
  return {
    path: fromFile ? owner.path! : owner.id,
    source: fromFile ? "local" : owner.origin === "builtin" ? "builtin" : owner.origin,
    scope: owner.origin === "user" || owner.origin === "project" ? owner.origin : "temporary",
    origin: owner.origin === "package" ? "package" : "top-level",
    ...(fromFile ? { baseDir: dirname(owner.path!) } : {}),
  };
}
