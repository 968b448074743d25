/**
 * Frontmatter: the YAML block between `---` lines at the top of a Markdown file. Skills (`SKILL.md`), prompt
 * templates and any extension's own files share this one reader, so a value means the same everywhere: quoting and
 * escapes, block scalars (`|`, `>`), nested mappings such as the Agent Skills `metadata:` map, comments and lists
 * are YAML's, read by the `yaml` package. It never throws for bad input: what is wrong comes back as errors and
 * warnings with the line and column in the file.
 */
import type { YamlProblem } from "./frontmatter-yaml.js";

/** A problem with a frontmatter block, at a 1-based line and column of the whole text (not of the block). */
export interface FrontmatterProblem {
  line: number;
  column: number;
  /** What is wrong, without the position. */
  message: string;
}

export interface ParsedFrontmatter {
  /** Whether the text opens with a `---` line (blank lines before it are allowed). */
  found: boolean;
  /** The block's `key: value` mapping; `{}` when there is no block, it is empty, or it has an error. */
  data: Record<string, unknown>;
  /**
   * The text after the closing `---` line, as it is (not trimmed); the whole text when there is no block or it is
   * never closed. A leading byte-order mark is dropped and line ends are `\n`.
   */
  body: string;
  /**
   * Why the block could not be read: it has no closing `---` line, it is not valid YAML, or it holds something other
   * than a mapping (a list, plain text). `data` is `{}` whenever there is one.
   */
  errors: FrontmatterProblem[];
  /** What the YAML parser accepted but flagged, such as an unknown tag; `data` is still read. */
  warnings: FrontmatterProblem[];
}

/** Blank lines, then a line holding `---` (spaces around it allowed). */
const OPENING = /^(?:[ \t]*\n)*[ \t]*---[ \t]*(?:\n|$)/;

/**
 * Splits `text` into its frontmatter and body and reads the frontmatter as YAML (1.2, core schema: `yes` and `1.0`
 * stay what they look like only when quoted, duplicate keys are an error). The block opens with a `---` line at the
 * top (after blank lines, if any) and ends at the next line that is `---` at the start of the line. The YAML parser
 * loads on the first call that has a non-empty block to read.
 */
export async function parseFrontmatter(text: string): Promise<ParsedFrontmatter> {
  const normalised = text.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  const opening = OPENING.exec(normalised);
  if (!opening) return { found: false, data: {}, body: normalised, errors: [], warnings: [] };
  const start = opening[0].length;
  // 1-based line of the opening `---`, and of the block's first line.
  const openingLine = lineCount(normalised, 0, start) + (opening[0].endsWith("\n") ? 0 : 1);
  const closing = /^---[ \t]*$/gm;
  closing.lastIndex = start;
  const end = opening[0].endsWith("\n") ? closing.exec(normalised) : null;
  if (!end) {
    const message = "the frontmatter block has no closing `---` line";
    return {
      found: true,
      data: {},
      body: normalised,
      errors: [{ line: openingLine, column: 1, message }],
      warnings: [],
    };
  }
  const source = normalised.slice(start, end.index);
  const body = normalised.slice(end.index + end[0].length + 1);
  if (source.trim() === "") return { found: true, data: {}, body, errors: [], warnings: [] };
  const { readYamlBlock } = await import("./frontmatter-yaml.js");
  const block = readYamlBlock(source);
  const at = (problem: YamlProblem) => position(source, problem, openingLine + 1);
  return {
    found: true,
    data: block.data ?? {},
    body,
    errors: block.errors.map(at),
    warnings: block.warnings.map(at),
  };
}

/** Number of line ends in `text` between `from` and `to`. */
function lineCount(text: string, from: number, to: number): number {
  let count = 0;
  for (let i = text.indexOf("\n", from); i !== -1 && i < to; i = text.indexOf("\n", i + 1)) count++;
  return count;
}

/** A problem at an offset of the block, placed in the file whose line `firstLine` is the block's first. */
function position(source: string, problem: YamlProblem, firstLine: number): FrontmatterProblem {
  // An error at the very end (a quote never closed) points at the block's last character, not past it.
  const offset = Math.max(0, Math.min(problem.offset, source.length - 1));
  const lineStart = offset === 0 ? 0 : source.lastIndexOf("\n", offset - 1) + 1;
  return {
    line: firstLine + lineCount(source, 0, lineStart),
    column: offset - lineStart + 1,
    message: problem.message,
  };
}
