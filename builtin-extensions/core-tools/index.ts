/**
 * The core tools (`builtin:core-tools`): read, bash, edit, write (active by default), grep, find, ls (registered,
 * inactive until `defaultTools` or `--tools` turns them on). Registered through the public API only, with the
 * factories `@knightcodeai/cli` exports (tools.ts), so a user extension can replace any of them by registering the
 * same name, or disable them all with `"extensions": ["-builtin:core-tools"]`. Made without a folder, each tool
 * works in the session's working folder at each call.
 */
import type { ExtensionAPI } from "@knightcodeai/cli/kit";
import {
  createBashTool,
  createEditTool,
  createFindTool,
  createGrepTool,
  createLsTool,
  createReadTool,
  createWriteTool,
} from "./tools.js";

export default function coreTools(knightcode: ExtensionAPI): void {
  knightcode.registerTool(createReadTool());
  knightcode.registerTool(createBashTool());
  knightcode.registerTool(createEditTool());
  knightcode.registerTool(createWriteTool());
  knightcode.registerTool({ ...createGrepTool(), defaultActive: false });
  knightcode.registerTool({ ...createFindTool(), defaultActive: false });
  knightcode.registerTool({ ...createLsTool(), defaultActive: false });
}
