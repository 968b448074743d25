/**
 * What the editor offers while typing: `/` commands with their descriptions at the start of a message, and files
 * after `@`. Files come from `git ls-files` (tracked and untracked, without what `.gitignore` excludes) in a git
 * work tree, else from a bounded walk that skips dot folders and `node_modules`. On submit, `@path` words that name
 * files are attached as `<file name="path">` blocks, the shape the command line's `@file` arguments take.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import {
  type AutocompleteItem,
  type AutocompleteProvider,
  type AutocompleteSuggestions,
  fuzzyFilter,
} from "@knightcodeai/cli/tui";
import { isImageFile } from "./images.js";

export interface CommandItem {
  name: string;
  description?: string;
}

const MAX_FILES = 20_000;
const MAX_ATTACH_BYTES = 256 * 1024;

export class PromptCompletions implements AutocompleteProvider {
  private files: Promise<string[]> | undefined;

  constructor(
    private readonly cwd: string,
    private readonly commands: () => CommandItem[],
  ) {}

  /** Forgets the file list (after a shell command, say), so the next `@` lists the folder again. */
  refreshFiles(): void {
    this.files = undefined;
  }

  async getSuggestions(
    lines: string[],
    cursorLine: number,
    cursorCol: number,
  ): Promise<AutocompleteSuggestions | null> {
    const before = (lines[cursorLine] ?? "").slice(0, cursorCol);
    if (cursorLine === 0 && /^\/\S*$/.test(before)) {
      const matches = fuzzyFilter(this.commands(), before.slice(1), (c) => c.name);
      if (matches.length === 0) return null;
      return {
        prefix: before,
        items: matches.map((c) => ({
          value: c.name,
          label: `/${c.name}`,
          ...(c.description ? { description: c.description } : {}),
        })),
      };
    }
    const at = /(?:^|\s)@(\S*)$/.exec(before);
    if (at) {
      this.files ??= listFiles(this.cwd);
      const matches = fuzzyFilter(await this.files, at[1]!, (f) => f).slice(0, 50);
      if (matches.length === 0) return null;
      return { prefix: `@${at[1]}`, items: matches.map((f) => ({ value: f, label: f })) };
    }
    return null;
  }

  applyCompletion(
    lines: string[],
    cursorLine: number,
    cursorCol: number,
    item: AutocompleteItem,
    prefix: string,
  ): { lines: string[]; cursorLine: number; cursorCol: number } {
    const line = lines[cursorLine] ?? "";
    const start = cursorCol - prefix.length;
    const rest = line.slice(cursorCol);
    // A space after the word, unless one follows already.
    const inserted = `${prefix.startsWith("/") ? "/" : "@"}${item.value}${/^\s/.test(rest) ? "" : " "}`;
    const next = [...lines];
    next[cursorLine] = line.slice(0, start) + inserted + rest;
    return { lines: next, cursorLine, cursorCol: start + inserted.length };
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** The folder's files relative to it, `.gitignore` respected. */
export function listFiles(cwd: string): Promise<string[]> {
  return new Promise((done) => {
    execFile(
      "git",
      ["ls-files", "--cached", "--others", "--exclude-standard", "-z"],
      { cwd, maxBuffer: 64 * 1024 * 1024, timeout: 5000 },
      (error, stdout) => {
        if (error) return done(walk(cwd));
        done(
          [...new Set(stdout.split("\0").filter(Boolean))]
            .slice(0, MAX_FILES)
            .sort((a, b) => a.localeCompare(b)),
        );
      },
    );
  });
}

function walk(root: string): string[] {
  const found: string[] = [];
  const pending = [root];
  while (pending.length > 0 && found.length < MAX_FILES) {
    const dir = pending.shift()!;
    let entries: import("node:fs").Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) pending.push(path);
      else if (entry.isFile()) found.push(relative(root, path));
    }
  }
  return found.sort((a, b) => a.localeCompare(b));
}

/**
 * The prompt with each `@path` that names a readable file of the folder attached before it; `errors` names the
 * ones that could not be (too large). Words that name no file stay as typed (an e-mail address, a handle).
 */
export function attachFiles(
  text: string,
  cwd: string,
): { text: string; attached: string[]; errors: string[] } {
  const blocks: string[] = [];
  const attached: string[] = [];
  const errors: string[] = [];
  for (const match of text.matchAll(/(?:^|\s)@(\S+)/g)) {
    // "see @notes.txt." names notes.txt: punctuation that ends a sentence is not part of the path.
    const name = [match[1]!, match[1]!.replace(/[.,;:!?)\]}'"]+$/, "")].find((n) => isFile(resolve(cwd, n)));
    if (name === undefined) continue;
    const path = resolve(cwd, name);
    // Images go with the message as images (images.ts), not as text.
    if (attached.includes(name) || isImageFile(path)) continue;
    const size = statSync(path).size;
    if (size > MAX_ATTACH_BYTES) {
      errors.push(`@${name} is ${Math.round(size / 1024)} KiB; files over 256 KiB are not attached`);
      continue;
    }
    blocks.push(`<file name="${name}">\n${readFileSync(path, "utf8")}\n</file>`);
    attached.push(name);
  }
  return { text: blocks.length ? [...blocks, text].join("\n\n") : text, attached, errors };
}
