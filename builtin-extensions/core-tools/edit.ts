/**
 * `edit`: exact text replacements in one file. Every `oldText` must match exactly once in the original content;
 * all edits apply or none. Matching ignores the file's line-ending style and BOM; what is written back keeps both,
 * and lines no edit touches keep their bytes exactly.
 */
import { constants } from "node:fs";
import { access, readFile } from "node:fs/promises";
import { withFileMutationQueue } from "@knightcodeai/cli/kit";
import { type Static, Type } from "@sinclair/typebox";
import type { CoreTool } from "./core-tool.js";
import { unifiedDiff } from "./diff.js";
import {
  diffNames,
  displayPath,
  fileErrorMessage,
  looksBinary,
  type ReplaceOutcome,
  replaceFileIfUnchanged,
  writeFileAtomic,
} from "./file-io.js";
import { resolveToolPath, toolCwd } from "./paths.js";

const EditItem = Type.Object({
  oldText: Type.String({
    description:
      "Text to replace: copied exactly from the file (whitespace included); must occur exactly once",
  }),
  newText: Type.String({ description: "The replacement text" }),
});

const EditParams = Type.Object({
  path: Type.String({ description: "Path of the file to edit, relative to the working folder or absolute" }),
  edits: Type.Array(EditItem, {
    minItems: 1,
    description: "Replacements, each matched against the original file; they must not overlap",
  }),
});

export type EditParams = Static<typeof EditParams>;

export interface EditDetails {
  /** The absolute path edited. */
  path: string;
  /** Unified diff of the change (LF line endings), 3 lines of context. */
  diff: string;
  /** 1-based line of the first change. */
  firstChangedLine: number | undefined;
}

/** Everything `edit` does to the file system, so a sandbox or a remote machine can take its place (pi's). */
export interface EditOperations {
  readFile(absolutePath: string): Promise<Buffer>;
  writeFile(absolutePath: string, content: string): Promise<void>;
  /**
   * Replaces the file with `content` only if it still holds `expected` (what `readFile` returned); otherwise
   * resolves `{replaced: false}` and edit reads it again. Without it, edit writes with `writeFile` and cannot see
   * another program's change in between.
   */
  replaceFile?(absolutePath: string, expected: Buffer, content: string): Promise<ReplaceOutcome>;
  /** Rejects when the file cannot be edited (with an `ENOENT`/`EACCES` code for the usual message). */
  access(absolutePath: string): Promise<void>;
}

export interface EditToolOptions {
  /** Default: the local file system, with atomic writes. */
  operations?: EditOperations;
}

/** The local file system: atomic replacement that keeps the file's mode. */
export function createLocalEditOperations(): EditOperations {
  return {
    readFile: (path) => readFile(path),
    writeFile: async (path, content) => {
      await writeFileAtomic(path, content);
    },
    replaceFile: (path, expected, content) => replaceFileIfUnchanged(path, expected, content),
    // Read access only: the atomic write replaces the file through its folder, so a read-only file can be edited.
    access: (path) => access(path, constants.R_OK),
  };
}

const BOM = "\uFEFF";
/** Reads and replacements of a file that keeps changing under the edit before it gives up. */
const MAX_ATTEMPTS = 5;
const toLF = (text: string) => text.replace(/\r\n/g, "\n");

/**
 * Accepts the old single-edit shape `{path, oldText, newText}` (and `old_string`/`new_string`, which models trained
 * on other agents send), and `edits` sent as a JSON string.
 */
function prepareArguments(raw: unknown): unknown {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return raw;
  const args: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
  if (typeof args.edits === "string") {
    try {
      args.edits = JSON.parse(args.edits);
    } catch {
      // left as it is: validation names the field
    }
  }
  if (args.edits === undefined) {
    const oldText = args.oldText ?? args.old_string;
    const newText = args.newText ?? args.new_string;
    if (oldText !== undefined || newText !== undefined) {
      for (const key of ["oldText", "newText", "old_string", "new_string"]) delete args[key];
      args.edits = [{ oldText, newText }];
    }
  }
  return args;
}

/** Every start of `needle` in `haystack`, overlapping ones included (they are ambiguous too). */
function findAll(haystack: string, needle: string): number[] {
  const found: number[] = [];
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) found.push(at);
  return found;
}

const lineAt = (text: string, index: number) => {
  let line = 1;
  for (let at = text.indexOf("\n"); at !== -1 && at < index; at = text.indexOf("\n", at + 1)) line++;
  return line;
};

/** Lines where the old text occurs if whitespace at the start and end of each line is ignored. */
function whitespaceOnlyMatch(content: string, oldText: string): [number, number] | undefined {
  const want = oldText.split("\n").map((line) => line.trim());
  while (want.length > 0 && want[0] === "") want.shift();
  while (want.length > 0 && want[want.length - 1] === "") want.pop();
  if (want.length === 0) return undefined;
  const lines = content.split("\n").map((line) => line.trim());
  for (let i = 0; i + want.length <= lines.length; i++) {
    if (want.every((line, j) => lines[i + j] === line)) return [i + 1, i + want.length];
  }
  return undefined;
}

const times = (n: number) => `${n} time${n === 1 ? "" : "s"}`;

interface Span {
  index: number;
  start: number;
  end: number;
  newText: string;
}

/**
 * The `edit` tool. `cwd` is the folder relative paths resolve against; without it, the session's working folder
 * at each call.
 */
export function createEditTool(
  cwd?: string,
  options: EditToolOptions = {},
): CoreTool<typeof EditParams, EditDetails> {
  const ops = options.operations ?? createLocalEditOperations();
  return {
    name: "edit",
    label: "Edit",
    description: [
      "Edit a file by exact text replacement. Each edit replaces oldText with newText; oldText must match the",
      "current file exactly (whitespace and indentation included, without read's line-number gutter) and occur",
      "exactly once, so include enough surrounding lines to make it unique. Several edits of one file go in one",
      "call: each is matched against the original file, they must not overlap, and either all apply or none does.",
      "Line endings (LF or CRLF) are kept as the file has them.",
    ].join(" "),
    promptSnippet:
      "edit: replace exact text in a file (several non-overlapping edits per call, all or nothing)",
    promptGuidelines: [
      "Use edit for targeted changes: copy oldText exactly from a fresh read, with just enough context to be unique.",
      "Put all changes to one file in a single edit call with several edits rather than several calls.",
    ],
    annotations: {
      title: "Edit file",
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    },
    parameters: EditParams,
    prepareArguments,
    async execute(_toolCallId, params, signal, _onUpdate, ctx) {
      signal?.throwIfAborted();
      const shown = displayPath(params.path);
      const folder = toolCwd(cwd, ctx);
      const path = resolveToolPath(folder, params.path);
      const fail = (error: unknown): never => {
        const message = fileErrorMessage(error, shown, "edit");
        throw message ? new Error(message) : error;
      };
      if (params.edits.length === 0) throw new Error("edits is empty; give at least one {oldText, newText}");

      return withFileMutationQueue(path, async () => {
        await ops.access(path).catch(fail);
        /** The edits applied to `raw`; `changed`: the file is not what an earlier attempt read. */
        const plan = (raw: Buffer, changed: boolean) => {
          if (looksBinary(raw)) throw new Error(`${shown} is a binary file; edit cannot change it`);
          const decoded = raw.toString("utf8");
          const bom = decoded.startsWith(BOM) ? BOM : "";
          const original = decoded.slice(bom.length);
          const firstNewline = original.indexOf("\n");
          const eol = firstNewline > 0 && original[firstNewline - 1] === "\r" ? "\r\n" : "\n";

          // Match against the LF text; remember where CRLFs were to map positions back to the original.
          const content = toLF(original);
          const crlfAt: number[] = [];
          for (
            let at = original.indexOf("\r\n"), removed = 0;
            at !== -1;
            at = original.indexOf("\r\n", at + 2)
          ) {
            crlfAt.push(at - removed);
            removed++;
          }
          const toOriginal = (position: number) => {
            let lo = 0;
            let hi = crlfAt.length;
            while (lo < hi) {
              const mid = (lo + hi) >> 1;
              if (crlfAt[mid]! < position) lo = mid + 1;
              else hi = mid;
            }
            return position + lo;
          };

          const problems: string[] = [];
          const spans: Span[] = [];
          params.edits.forEach((edit, i) => {
            const label = `Edit ${i + 1}`;
            const oldText = toLF(edit.oldText);
            const newText = toLF(edit.newText);
            if (oldText === "") {
              problems.push(
                `${label}: oldText is empty; give the exact text to replace (use write to create a file)`,
              );
              return;
            }
            if (oldText === newText) {
              problems.push(`${label}: oldText and newText are the same; nothing would change`);
              return;
            }
            const found = findAll(content, oldText);
            if (found.length === 0) {
              const near = whitespaceOnlyMatch(content, oldText);
              const hint = near
                ? `; lines ${near[0]}-${near[1]} match except for whitespace at line starts or ends (indentation, trailing spaces): copy the text exactly`
                : "; it must match the file exactly, whitespace included (read the file again to copy the text)";
              problems.push(`${label}: oldText was not found in ${shown}${hint}`);
            } else if (found.length > 1) {
              const lines = found.slice(0, 10).map((at) => lineAt(content, at));
              const more = found.length > 10 ? ", ..." : "";
              problems.push(
                `${label}: oldText was found ${times(found.length)} in ${shown}; add surrounding lines so it matches exactly once (matches start at lines ${lines.join(", ")}${more})`,
              );
            } else {
              spans.push({ index: i, start: found[0]!, end: found[0]! + oldText.length, newText });
            }
          });
          const sorted = [...spans].sort((a, b) => a.start - b.start);
          for (let i = 1; i < sorted.length; i++) {
            const [a, b] = [sorted[i - 1]!, sorted[i]!];
            if (b.start < a.end) {
              const [x, y] = [a.index, b.index].sort((p, q) => p - q);
              problems.push(`Edits ${x! + 1} and ${y! + 1} overlap in ${shown}; combine them into one edit`);
            }
          }
          if (problems.length > 0) {
            if (params.edits.length > 1) problems.push("No edits were applied.");
            if (changed) {
              problems.unshift(
                `${shown} changed while the edit was applied (another program wrote to it), and the edits do not fit its new content; nothing was written. Read it again.`,
              );
            }
            throw new Error(problems.join("\n"));
          }

          // Apply from the end so earlier positions stay valid: to the LF text (for the diff) and the original bytes.
          let updatedLF = content;
          let updated = original;
          for (const span of [...sorted].reverse()) {
            updatedLF = updatedLF.slice(0, span.start) + span.newText + updatedLF.slice(span.end);
            const replacement = eol === "\r\n" ? span.newText.replace(/\n/g, "\r\n") : span.newText;
            updated =
              updated.slice(0, toOriginal(span.start)) + replacement + updated.slice(toOriginal(span.end));
          }

          return { content, updatedLF, output: bom + updated };
        };

        // Between reading the file and replacing it another program may write to it: the replacement happens only
        // if the file still holds what was read, else the edits are made again on what it holds now.
        let planned: ReturnType<typeof plan>;
        for (let attempt = 1; ; attempt++) {
          const raw = await ops.readFile(path).catch(fail);
          planned = plan(raw, attempt > 1);
          signal?.throwIfAborted();
          if (!ops.replaceFile) {
            await ops.writeFile(path, planned.output).catch(fail);
            break;
          }
          const outcome = await ops.replaceFile(path, raw, planned.output).catch(fail);
          if (outcome.replaced) break;
          if (attempt === MAX_ATTEMPTS) {
            throw new Error(
              `${shown} kept changing while the edit was applied (${MAX_ATTEMPTS} attempts); nothing was written. Try again when it is quiet.`,
            );
          }
        }
        const { content, updatedLF } = planned;

        const { diff, firstChangedLine, added, removed } = unifiedDiff(
          content,
          updatedLF,
          diffNames(folder, path),
        );
        const count = params.edits.length;
        const where = firstChangedLine === undefined ? "" : `, first change at line ${firstChangedLine}`;
        return {
          content: [
            {
              type: "text",
              text: `Applied ${count} edit${count === 1 ? "" : "s"} to ${shown} (+${added} -${removed} lines${where})`,
            },
          ],
          details: { path, diff, firstChangedLine },
        };
      });
    },
  };
}
