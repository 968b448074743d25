/**
 * Extensions found in a folder (`<agentDir>/extensions`, `.knightcode/extensions`): each `.ts`/`.js` file and each
 * subfolder (the loader reads its `index.ts` or its package.json list), in name order.
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionOrigin, ExtensionSource } from "../../kernel/index.js";

const FILE = /\.(ts|js|mts|mjs)$/;

export function discoverExtensions(dir: string, origin: ExtensionOrigin): ExtensionSource[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true })
    .filter(
      (e) => !e.name.startsWith(".") && (e.isDirectory() || (FILE.test(e.name) && !e.name.endsWith(".d.ts"))),
    )
    .map((e) => e.name)
    .sort()
    .map((name) => ({ origin, path: join(dir, name) }));
}
