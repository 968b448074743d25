/**
 * `toolOperationsService`: where the core tools' file reads and writes and shell commands go when a host puts them
 * somewhere other than this machine's disk and shell, such as an editor's open buffers and terminals over the Agent
 * Client Protocol (`knightcode acp`). `builtin:core-tools` asks for it at each call of `read`, `write`, `edit` and
 * `bash`; with no provider (the default) or a part left out, that tool uses the local file system or shell.
 */
import { defineService } from "../../../kernel/index.js";
import type { BashOperations } from "../process/shell.js";

/** Text files as the host sees them (an editor's unsaved buffer included). Paths are absolute. */
export interface ToolTextFiles {
  /** The file's text; rejects with an error whose `code` is `ENOENT` when there is no such file. */
  readTextFile(absolutePath: string): Promise<string>;
  /** Creates or replaces the file with `content`. */
  writeTextFile(absolutePath: string, content: string): Promise<void>;
}

export interface ToolOperations {
  /** `read`, `write` and `edit` of text files (images still come from the disk). */
  files?: ToolTextFiles;
  /** `bash`. */
  bash?: BashOperations;
}

export const toolOperationsService = defineService<ToolOperations>("knightcode.toolOperations", {
  description: "where the core tools read and write files and run commands, when not on the local machine",
});
