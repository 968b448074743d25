/**
 * The core tools (`builtin:core-tools`): read, bash, edit, write (active by default), grep, find, ls (registered,
 * inactive until `defaultTools` or `--tools` turns them on). Registered through the public API only, with the
 * factories `@knightcodeai/cli` exports (tools.ts), so a user extension can replace any of them by registering the
 * same name, or disable them all with `"extensions": ["-builtin:core-tools"]`. Made without a folder, each tool
 * works in the session's working folder at each call.
 */
import type { ExtensionAPI, ShellEnvPolicy } from "@knightcodeai/cli/kit";
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
  // Asked at each call: the settings in force when the command runs apply.
  knightcode.registerTool(createBashTool(undefined, { shellEnv: () => shellEnvSettings(knightcode) }));
  knightcode.registerTool(createEditTool());
  knightcode.registerTool(createWriteTool());
  knightcode.registerTool({ ...createGrepTool(), defaultActive: false });
  knightcode.registerTool({ ...createFindTool(), defaultActive: false });
  knightcode.registerTool({ ...createLsTool(), defaultActive: false });
}

/** The `shellEnv` settings (validated by the settings loader), or the default policy without them. */
function shellEnvSettings(knightcode: ExtensionAPI): ShellEnvPolicy | undefined {
  return knightcode.getSettings().shellEnv as ShellEnvPolicy | undefined;
}
