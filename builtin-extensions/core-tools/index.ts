/**
 * The core tools (`builtin:core-tools`): read, bash, edit, write (active by default), grep, find, ls (registered,
 * inactive until `defaultTools` or `--tools` turns them on). Registered through the public API only, so a user
 * extension can replace any of them by registering the same name, or disable them all with
 * `"extensions": ["-builtin:core-tools"]`.
 */
import type { ExtensionAPI } from "@knightcodeai/cli/kit";
import { createBashTool } from "./bash.js";
import { createEditTool } from "./edit.js";
import { createFindTool } from "./find.js";
import { createGrepTool } from "./grep.js";
import { createLsTool } from "./ls.js";
import { createReadTool } from "./read.js";
import { createWriteTool } from "./write.js";

export default function coreTools(knightcode: ExtensionAPI): void {
  knightcode.registerTool(createReadTool());
  knightcode.registerTool(createBashTool());
  knightcode.registerTool(createEditTool());
  knightcode.registerTool(createWriteTool());
  knightcode.registerTool({ ...createGrepTool(), defaultActive: false });
  knightcode.registerTool({ ...createFindTool(), defaultActive: false });
  knightcode.registerTool({ ...createLsTool(), defaultActive: false });
}
