/**
 * The core tool factories, as `@knightcodeai/cli` exports them. Each returns a `ToolDefinition` that
 * `registerTool()` takes as it is, so an extension can wrap a built-in tool or register a configured one under the
 * same name to replace it. The built-in extension (index.ts) is made of these same factories.
 */
import { type BashToolOptions, createBashTool } from "./bash.js";
import { createEditTool, type EditToolOptions } from "./edit.js";
import { createFindTool, type FindToolOptions } from "./find.js";
import { createGrepTool, type GrepToolOptions } from "./grep.js";
import { createLsTool, type LsToolOptions } from "./ls.js";
import { createReadTool, type ReadToolOptions } from "./read.js";
import { createWriteTool, type WriteToolOptions } from "./write.js";

export {
  type BashSpawnContext,
  type BashSpawnHook,
  type BashToolDetails,
  type BashToolOptions,
  createBashTool,
} from "./bash.js";
export type { CoreTool } from "./core-tool.js";
export {
  createEditTool,
  createLocalEditOperations,
  type EditDetails as EditToolDetails,
  type EditOperations,
  type EditParams as EditToolInput,
  type EditToolOptions,
} from "./edit.js";
export {
  createFindTool,
  type FindOperations,
  type FindToolDetails,
  type FindToolInput,
  type FindToolOptions,
} from "./find.js";
export {
  createGrepTool,
  type GrepOperations,
  type GrepToolDetails,
  type GrepToolInput,
  type GrepToolOptions,
} from "./grep.js";
export {
  createLocalLsOperations,
  createLsTool,
  type LsOperations,
  type LsToolDetails,
  type LsToolInput,
  type LsToolOptions,
} from "./ls.js";
export {
  createLocalReadOperations,
  createReadTool,
  type ReadDetails as ReadToolDetails,
  type ReadOperations,
  type ReadParams as ReadToolInput,
  type ReadToolOptions,
} from "./read.js";
export {
  createLocalWriteOperations,
  createWriteTool,
  type WriteDetails as WriteToolDetails,
  type WriteOperations,
  type WriteParams as WriteToolInput,
  type WriteToolOptions,
} from "./write.js";

/** Options for each tool of a set, by tool name. */
export interface ToolsOptions {
  read?: ReadToolOptions;
  bash?: BashToolOptions;
  edit?: EditToolOptions;
  write?: WriteToolOptions;
  grep?: GrepToolOptions;
  find?: FindToolOptions;
  ls?: LsToolOptions;
}

/** read, bash, edit and write: the tools active by default. */
export function createCodingTools(cwd?: string, options: ToolsOptions = {}) {
  return [
    createReadTool(cwd, options.read),
    createBashTool(cwd, options.bash),
    createEditTool(cwd, options.edit),
    createWriteTool(cwd, options.write),
  ] as const;
}

/** read, grep, find and ls: the tools that change nothing. */
export function createReadOnlyTools(cwd?: string, options: ToolsOptions = {}) {
  return [
    createReadTool(cwd, options.read),
    createGrepTool(cwd, options.grep),
    createFindTool(cwd, options.find),
    createLsTool(cwd, options.ls),
  ] as const;
}
