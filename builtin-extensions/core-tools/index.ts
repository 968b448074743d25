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

/** Registered as defaults: a tool of the same name from another extension takes the place of the built-in. */
const DEFAULT = { fallback: true } as const;

export default function coreTools(knightcode: ExtensionAPI): void {
  knightcode.registerTool(createReadTool(), DEFAULT);
  // Asked at each call: the settings in force when the command runs apply.
  knightcode.registerTool(
    createBashTool(undefined, { shellEnv: () => shellEnvSettings(knightcode) }),
    DEFAULT,
  );
  knightcode.registerTool(createEditTool(), DEFAULT);
  knightcode.registerTool(createWriteTool(), DEFAULT);
  knightcode.registerTool({ ...createGrepTool(), defaultActive: false }, DEFAULT);
  knightcode.registerTool({ ...createFindTool(), defaultActive: false }, DEFAULT);
  knightcode.registerTool({ ...createLsTool(), defaultActive: false }, DEFAULT);
}

/** The `shellEnv` settings (validated by the settings loader), or the default policy without them. */
function shellEnvSettings(knightcode: ExtensionAPI): ShellEnvPolicy | undefined {
  return knightcode.getSettings().shellEnv as ShellEnvPolicy | undefined;
}
