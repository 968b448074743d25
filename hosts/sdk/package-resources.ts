/**
 * How the session uses what the package manager resolved: enabled extensions become loader sources (in the
 * documented order: the scope's own folder and settings entries, then its packages), and the enabled skill,
 * prompt and theme paths of packages and settings entries seed the discovered resources the built-ins read
 * (`ctx.getDiscoveredResources()`). The resource folders themselves (`<agentDir>/skills`, ...) are walked by the
 * built-ins, which apply the same settings patterns.
 */
import type { DiscoveredResources, ExtensionSource } from "../../kernel/index.js";
import type { ResolvedResources } from "../../plugins/packages/package-manager.js";

/** A `-e` value that is a package source rather than an extension path. */
export const TEMPORARY_PACKAGE = /^(npm:|git:|https?:\/\/|ssh:\/\/|file:\/\/|git@)/;

export function packageSources(resolved: ResolvedResources): ExtensionSource[] {
  const extensions = resolved.resources.filter((r) => r.type === "extensions" && r.enabled);
  return [
    ...extensions.filter((r) => r.origin === "top-level"),
    ...extensions.filter((r) => r.origin === "package"),
  ].map((r) => ({
    origin:
      r.origin === "package"
        ? ("package" as const)
        : r.scope === "project"
          ? ("project" as const)
          : ("user" as const),
    path: r.path,
  }));
}

export function resourceSeed(all: readonly ResolvedResources[]): DiscoveredResources {
  const seed: DiscoveredResources = { skillPaths: [], promptPaths: [], themePaths: [] };
  const key = { skills: "skillPaths", prompts: "promptPaths", themes: "themePaths" } as const;
  for (const resolved of all) {
    for (const r of resolved.resources) {
      if (r.type === "extensions" || !r.enabled || r.source === "auto") continue;
      seed[key[r.type]].push(r.path);
    }
  }
  return seed;
}
