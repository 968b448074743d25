/**
 * The core tools (`builtin:core-tools`): read, bash, edit, write (active by default), grep, find, ls (registered,
 * inactive until `defaultTools` or `--tools` turns them on). Registered through the public API only, with the
 * factories `@knightcodeai/cli` exports (tools.ts), so a user extension can replace any of them by registering the
 * same name, or disable them all with `"extensions": ["-builtin:core-tools"]`. Made without a folder, each tool
 * works in the session's working folder at each call.
 *
 * When an extension of the session provides `toolOperationsService` (the ACP mode does, for a client that offers
 * its file system and terminals), read, write, edit and bash go through it at each call (remote-operations.ts).
 */
import {
  type ExtensionAPI,
  type ShellEnvPolicy,
  type ToolOperations,
  toolOperationsService,
} from "@knightcodeai/cli/kit";
import { editThrough, readThrough, writeThrough } from "./remote-operations.js";
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
  const remote = () => knightcode.services.get(toolOperationsService);
  // Asked at each call: the settings in force when the command runs apply.
  const shellEnv = () => shellEnvSettings(knightcode);
  knightcode.registerTool(
    switched(createReadTool(), remote, (ops) =>
      ops.files ? createReadTool(undefined, { operations: readThrough(ops.files) }) : undefined,
    ),
    DEFAULT,
  );
  knightcode.registerTool(
    switched(createBashTool(undefined, { shellEnv }), remote, (ops) =>
      ops.bash ? createBashTool(undefined, { shellEnv, operations: ops.bash }) : undefined,
    ),
    DEFAULT,
  );
  knightcode.registerTool(
    switched(createEditTool(), remote, (ops) =>
      ops.files ? createEditTool(undefined, { operations: editThrough(ops.files) }) : undefined,
    ),
    DEFAULT,
  );
  knightcode.registerTool(
    switched(createWriteTool(), remote, (ops) =>
      ops.files ? createWriteTool(undefined, { operations: writeThrough(ops.files) }) : undefined,
    ),
    DEFAULT,
  );
  knightcode.registerTool({ ...createGrepTool(), defaultActive: false }, DEFAULT);
  knightcode.registerTool({ ...createFindTool(), defaultActive: false }, DEFAULT);
  knightcode.registerTool({ ...createLsTool(), defaultActive: false }, DEFAULT);
}

/**
 * The local tool, whose `execute` runs the tool `through` makes when the session's extensions provide operations
 * it can use (made per call: the provider may change between calls).
 */
function switched<T extends { execute: (...args: never[]) => unknown }>(
  local: T,
  remote: () => ToolOperations | undefined,
  through: (ops: ToolOperations) => T | undefined,
): T {
  return {
    ...local,
    execute: ((...args: Parameters<T["execute"]>) => {
      const ops = remote();
      const tool = (ops && through(ops)) ?? local;
      return tool.execute(...args);
    }) as T["execute"],
  };
}

/** The `shellEnv` settings (validated by the settings loader), or the default policy without them. */
function shellEnvSettings(knightcode: ExtensionAPI): ShellEnvPolicy | undefined {
  return knightcode.getSettings().shellEnv as ShellEnvPolicy | undefined;
}
