/**
 * The operations of read, write and edit over `ToolTextFiles` (a host's text files, such as an editor's buffers
 * over ACP). One set is made per call, so a file the tool looks at twice (access, then read) is asked for once.
 * Images are binary, which a text API cannot carry: read takes them from the disk as before.
 */
import { mkdir } from "node:fs/promises";
import type { ToolTextFiles } from "@knightcodeai/cli/kit";
import type { EditOperations } from "./edit.js";
import { createLocalReadOperations, type ReadOperations } from "./read.js";
import type { WriteOperations } from "./write.js";

const IMAGE_FILE = /\.(png|jpe?g|gif|webp)$/i;

function reader(files: ToolTextFiles): (path: string) => Promise<string> {
  const seen = new Map<string, Promise<string>>();
  return (path) => {
    let text = seen.get(path);
    if (!text) {
      text = files.readTextFile(path);
      seen.set(path, text);
    }
    return text;
  };
}

export function readThrough(files: ToolTextFiles): ReadOperations {
  const local = createLocalReadOperations();
  const read = reader(files);
  return {
    readFile: async (path) => (IMAGE_FILE.test(path) ? local.readFile(path) : Buffer.from(await read(path))),
    access: async (path) => {
      if (IMAGE_FILE.test(path)) return local.access(path);
      await read(path);
    },
  };
}

export function editThrough(files: ToolTextFiles): EditOperations {
  const read = reader(files);
  return {
    readFile: async (path) => Buffer.from(await read(path)),
    writeFile: (path, content) => files.writeTextFile(path, content),
    access: async (path) => {
      await read(path);
    },
  };
}

export function writeThrough(files: ToolTextFiles): WriteOperations {
  return {
    writeFile: (path, content) => files.writeTextFile(path, content),
    // The host writes where the agent runs (ACP clients start it as a child process), so missing folders are
    // made here; the host's write then has a folder to write into.
    mkdir: async (dir) => {
      await mkdir(dir, { recursive: true });
    },
  };
}
