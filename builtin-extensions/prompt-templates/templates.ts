/**
 * Reading prompt templates (Markdown files with an optional frontmatter block) and expanding their argument
 * placeholders. Pure functions over the file system: index.ts turns the templates into commands.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { basename, join } from "node:path";

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
export function loadTemplates(folders: readonly TemplateFolder[]): {
  templates: PromptTemplate[];
  warnings: string[];
} {
  const templates: PromptTemplate[] = [];
  const warnings: string[] = [];
  const byName = new Map<string, PromptTemplate>();
  for (const folder of folders) {
    for (const file of markdownFiles(folder, warnings)) {
      const template = readTemplate(file, folder.scope, warnings);
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

function readTemplate(path: string, scope: TemplateScope, warnings: string[]): PromptTemplate | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    warnings.push(`prompt template ${path}: cannot read it: ${(error as Error).message}`);
    return undefined;
  }
  const { fields, body, problems } = parseFrontmatter(text);
  for (const problem of problems) warnings.push(`prompt template ${path}: ${problem}`);
  return {
    name: basename(path, ".md"),
    description: fields.description ?? firstLine(body),
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
 * The frontmatter subset templates use: a block between `---` lines at the very top holding `key: value` lines
 * (values optionally quoted), blank lines and `#` comments. Anything else in the block is reported and skipped;
 * a block that is never closed is reported and the whole file is the body.
 */
export function parseFrontmatter(text: string): {
  fields: Record<string, string>;
  body: string;
  problems: string[];
} {
  const fields: Record<string, string> = {};
  const problems: string[] = [];
  const normalised = text.replace(/^\uFEFF/, "").replace(/\r\n/g, "\n");
  if (!/^---[ \t]*\n/.test(normalised)) return { fields, body: normalised, problems };
  const lines = normalised.split("\n");
  const end = lines.findIndex((line, i) => i > 0 && /^---[ \t]*$/.test(line));
  if (end < 0) {
    problems.push(
      "the frontmatter starting on line 1 has no closing --- line; read the whole file as the text",
    );
    return { fields, body: normalised, problems };
  }
  for (let i = 1; i < end; i++) {
    const line = lines[i]!;
    if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
    const match = /^([A-Za-z_][\w-]*)[ \t]*:(.*)$/.exec(line);
    if (!match) {
      problems.push(`frontmatter line ${i + 1} is not "key: value": ${JSON.stringify(line)}; ignored`);
      continue;
    }
    const value = unquote(match[2]!.trim());
    if (value === undefined) {
      problems.push(`frontmatter line ${i + 1}: the value of "${match[1]}" has an unclosed quote; ignored`);
      continue;
    }
    fields[match[1]!] = value;
  }
  return { fields, body: lines.slice(end + 1).join("\n"), problems };
}

function unquote(value: string): string | undefined {
  const quote = value[0];
  if (quote !== '"' && quote !== "'") return value;
  if (value.length < 2 || !value.endsWith(quote)) return undefined;
  return value.slice(1, -1);
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
