/**
 * Reading prompt templates (Markdown files with an optional YAML frontmatter block, read by the kit's
 * `parseFrontmatter`) and expanding their argument placeholders. Functions over the file system: index.ts turns the
 * templates into commands.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { type FrontmatterProblem, parseFrontmatter } from "@knightcodeai/cli/kit";

export type TemplateScope = "user" | "project" | "temporary";

export interface PromptTemplate {
  /** The file name without `.md`: the command is `/<name>`. */
  name: string;
  description: string;
  /** The text after the frontmatter, with the placeholders still in. */
  body: string;
  path: string;
  scope: TemplateScope;
}

export interface TemplateFolder {
  /** A folder of `*.md` files (not walked into), or one `.md` file. */
  path: string;
  scope: TemplateScope;
  /** The default folders may be absent without a warning; a path an extension named should exist. */
  optional: boolean;
}

/** Descriptions taken from the body's first line are cut to this many characters. */
const DESCRIPTION_CHARS = 60;

/**
 * The templates of `folders`, in order. A name already taken by an earlier template keeps the earlier one. Nothing
 * here throws: an unreadable file, a missing folder or bad frontmatter becomes a warning naming the file.
 */
export async function loadTemplates(folders: readonly TemplateFolder[]): Promise<{
  templates: PromptTemplate[];
  warnings: string[];
}> {
  const templates: PromptTemplate[] = [];
  const warnings: string[] = [];
  const byName = new Map<string, PromptTemplate>();
  for (const folder of folders) {
    for (const file of markdownFiles(folder, warnings)) {
      const template = await readTemplate(file, folder.scope, warnings);
      if (!template) continue;
      const earlier = byName.get(template.name);
      if (earlier) {
        warnings.push(
          `prompt template ${file}: /${template.name} is already defined by ${earlier.path}; ignored`,
        );
        continue;
      }
      byName.set(template.name, template);
      templates.push(template);
    }
  }
  return { templates, warnings };
}

function markdownFiles(folder: TemplateFolder, warnings: string[]): string[] {
  let isDirectory: boolean;
  try {
    isDirectory = statSync(folder.path).isDirectory();
  } catch (error) {
    if (!folder.optional)
      warnings.push(`prompt templates: cannot read ${folder.path}: ${(error as Error).message}`);
    return [];
  }
  if (!isDirectory) {
    if (folder.path.endsWith(".md")) return [folder.path];
    warnings.push(`prompt templates: ${folder.path} is neither a folder nor a .md file; ignored`);
    return [];
  }
  try {
    return readdirSync(folder.path, { withFileTypes: true })
      .filter((entry) => entry.name.endsWith(".md") && isFile(join(folder.path, entry.name)))
      .map((entry) => join(folder.path, entry.name))
      .sort();
  } catch (error) {
    warnings.push(`prompt templates: cannot list ${folder.path}: ${(error as Error).message}`);
    return [];
  }
}

/** Follows symbolic links; a broken one is not a file. */
function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

async function readTemplate(
  path: string,
  scope: TemplateScope,
  warnings: string[],
): Promise<PromptTemplate | undefined> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    warnings.push(`prompt template ${path}: cannot read it: ${(error as Error).message}`);
    return undefined;
  }
  const { data, body, errors, warnings: flagged } = await parseFrontmatter(text);
  const where = (problem: FrontmatterProblem) =>
    `prompt template ${path}: frontmatter line ${problem.line}, column ${problem.column}: ${problem.message}`;
  // Further YAML errors usually follow from the first one; the first says where to look.
  if (errors[0]) warnings.push(`${where(errors[0])}; the frontmatter is ignored`);
  for (const warning of flagged) warnings.push(where(warning));
  const { description } = data;
  if (description !== undefined && description !== null && typeof description !== "string") {
    warnings.push(
      `prompt template ${path}: its \`description\` is not text (quote it); the first line of the text is used`,
    );
  }
  return {
    name: basename(path, ".md"),
    description: typeof description === "string" ? description : firstLine(body),
    body,
    path,
    scope,
  };
}

function firstLine(body: string): string {
  const line =
    body
      .split("\n")
      .find((l) => l.trim() !== "")
      ?.trim() ?? "";
  return line.length > DESCRIPTION_CHARS ? `${line.slice(0, DESCRIPTION_CHARS)}...` : line;
}

/**
 * Splits command arguments the way a shell does for the simple cases: whitespace separates, single or double
 * quotes group (and may be empty: `""` is one empty argument). There are no escapes, as in the peer's templates.
 */
export function splitArgs(input: string): string[] {
  const args: string[] = [];
  let current = "";
  let started = false;
  let quote: string | undefined;
  for (const char of input) {
    if (quote) {
      if (char === quote) quote = undefined;
      else current += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      started = true;
    } else if (/\s/.test(char)) {
      if (started) args.push(current);
      current = "";
      started = false;
    } else {
      current += char;
      started = true;
    }
  }
  if (started) args.push(current);
  return args;
}

/**
 * Fills the placeholders in one pass, so text an argument brings in is never expanded again: `$1`..`$9` (and
 * `$10` on), `$@` and `$ARGUMENTS` (all arguments), `${@:N}` (from the Nth on) and `${@:N:L}` (L of them). An
 * argument that was not given expands to nothing.
 */
export function expandTemplate(body: string, args: readonly string[]): string {
  return body.replace(
    /\$\{@:(\d+)(?::(\d+))?\}|\$ARGUMENTS|\$@|\$(\d+)/g,
    (_match, from?: string, count?: string, position?: string) => {
      if (position !== undefined) return args[Number(position) - 1] ?? "";
      if (from === undefined) return args.join(" ");
      const start = Math.max(Number(from) - 1, 0);
      return (count === undefined ? args.slice(start) : args.slice(start, start + Number(count))).join(" ");
    },
  );
}
