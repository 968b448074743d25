/**
 * builtin:themes — colour themes from JSON files, and the `theme` setting.
 *
 * Theme files come from `<agentDir>/themes/`, a trusted project's `.knightcode/themes/` (each filtered by its
 * scope's `themes` patterns), then the `themePaths` of packages, the `themes` setting and `resources_discover`
 * handlers (`ctx.getDiscoveredResources()`); the first theme of a name wins. They are read in a
 * `{ fallback: true }` handler of `resources_discover`, which runs after every other handler, at startup and on
 * reload. A file that is not a valid theme is a warning naming it, never a failure.
 *
 * The `theme` setting names the theme to use: a file theme or a built-in one (`dark`, `light`). In a mode with a
 * UI it becomes `ctx.ui.theme` through `ctx.ui.setTheme()`; modes without one (print, JSON) have nothing to theme.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import {
  BUILTIN_THEMES,
  type ExtensionAPI,
  type ExtensionContext,
  type ResourceScope,
  resourceFilter,
  type Theme,
  themeFromFile,
} from "@knightcodeai/cli/kit";

export default function themes(knightcode: ExtensionAPI): void {
  knightcode.on(
    "resources_discover",
    (event, ctx) => {
      const found = new Map<string, Theme>();
      for (const path of themeFiles(event.cwd, ctx)) {
        const loaded = themeFromFile(path);
        if ("error" in loaded) {
          knightcode.log.warn(loaded.error);
          continue;
        }
        const name = loaded.theme.name!;
        const earlier = found.get(name);
        if (earlier)
          knightcode.log.warn(
            `theme ${path}: "${name}" is already defined by ${earlier.sourcePath}; ignored`,
          );
        else found.set(name, loaded.theme);
      }
      const wanted = knightcode.getSettings().theme;
      if (wanted === undefined || !ctx.hasUI) return;
      if (typeof wanted !== "string") {
        knightcode.log.warn(`setting "theme" must be a theme name, not ${JSON.stringify(wanted)}`);
        return;
      }
      const theme = found.get(wanted) ?? (BUILTIN_THEMES.includes(wanted) ? wanted : undefined);
      if (theme === undefined) {
        const known = [...BUILTIN_THEMES, ...found.keys()].join(", ");
        knightcode.log.warn(`setting "theme": no theme named "${wanted}" (known: ${known})`);
        return;
      }
      const result = ctx.ui.setTheme(theme);
      if (!result.success)
        knightcode.log.warn(`setting "theme": ${result.error ?? "the mode cannot switch themes"}`);
    },
    { fallback: true },
  );
}

function themeFiles(cwd: string, ctx: ExtensionContext): string[] {
  const enabled = resourceFilter("themes", { agentDir: ctx.agentDir, cwd });
  const folder = (dir: string, scope: ResourceScope) => jsonFiles(dir).filter((path) => enabled(path, scope));
  return [
    ...folder(join(ctx.agentDir, "themes"), "user"),
    ...(ctx.isProjectTrusted() ? folder(join(cwd, ".knightcode", "themes"), "project") : []),
    // Already filtered by the package manager (packages, settings entries) or chosen by an extension.
    ...ctx
      .getDiscoveredResources()
      .themePaths.flatMap((path) => (path.endsWith(".json") ? [path] : jsonFiles(path))),
  ];
}

function jsonFiles(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => name.endsWith(".json"))
      .sort()
      .map((name) => join(dir, name));
  } catch {
    return [];
  }
}
