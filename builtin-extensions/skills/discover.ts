/**
 * Finding skills on disk and reading their frontmatter. A skill is a folder with a `SKILL.md` whose frontmatter
 * names it (`name`) and says when to use it (`description`); files beside SKILL.md belong to the skill. Nothing
 * here throws for a bad skill: each problem becomes a warning naming the file, and the skill is left out.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";

export interface Skill {
  name: string;
  description: string;
  /** Absolute path of the SKILL.md. */
  filePath: string;
  /** The folder holding the SKILL.md: paths in the skill are relative to it. */
  baseDir: string;
}

export interface SkillDiscovery {
  skills: Skill[];
  warnings: string[];
}

export const SKILL_FILE = "SKILL.md";
/** The Agent Skills naming rule the peer follows: lower-case words joined by single hyphens. */
const NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const MAX_NAME_LENGTH = 64;
/** How deep a skills folder is searched for SKILL.md files (skills may be grouped in sub-folders). */
const MAX_DEPTH = 4;

/**
 * Skills from `places`, in order: each place is a SKILL.md, a skill folder or a folder of skills. A place that
 * does not exist is skipped quietly (most users have no skills folder). When two skills share a name the first
 * one found wins and the other is reported.
 */
export async function discoverSkills(places: readonly string[]): Promise<SkillDiscovery> {
  const warnings: string[] = [];
  const files: string[] = [];
  for (const place of places) files.push(...(await skillFiles(resolve(place), warnings)));
  const byName = new Map<string, Skill>();
  const seenFiles = new Set<string>();
  for (const file of files) {
    // The same folder can be reached twice (the home folder is also an ancestor of the cwd).
    if (seenFiles.has(file)) continue;
    seenFiles.add(file);
    const skill = await readSkill(file, warnings);
    if (!skill) continue;
    const first = byName.get(skill.name);
    if (first) {
      warnings.push(`skill "${skill.name}" in ${file} is ignored: ${first.filePath} already defines it`);
      continue;
    }
    byName.set(skill.name, skill);
  }
  return { skills: [...byName.values()], warnings };
}

async function skillFiles(place: string, warnings: string[], depth = 0): Promise<string[]> {
  const info = await stat(place).catch(() => undefined);
  if (!info) return [];
  if (info.isFile()) {
    if (basename(place) === SKILL_FILE) return [place];
    warnings.push(`skill path ${place} is neither a ${SKILL_FILE} nor a folder`);
    return [];
  }
  if (!info.isDirectory()) return [];
  const own = join(place, SKILL_FILE);
  if (await isFile(own)) return [own];
  if (depth >= MAX_DEPTH) return [];
  const entries = await readdir(place, { withFileTypes: true }).catch(() => []);
  const found: string[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    if (entry.isDirectory() || entry.isSymbolicLink()) {
      found.push(...(await skillFiles(join(place, entry.name), warnings, depth + 1)));
    }
  }
  return found;
}

async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() ?? false;
}

async function readSkill(file: string, warnings: string[]): Promise<Skill | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    warnings.push(`skill ${file} cannot be read: ${(error as Error).message}`);
    return undefined;
  }
  const parsed = parseFrontmatter(text);
  if ("error" in parsed) {
    warnings.push(`skill ${file} is left out: ${parsed.error}`);
    return undefined;
  }
  const { name, description } = parsed.fields;
  const problem = !name
    ? "its frontmatter has no `name`"
    : name.length > MAX_NAME_LENGTH
      ? `its name "${name}" is longer than ${MAX_NAME_LENGTH} characters`
      : !NAME_PATTERN.test(name)
        ? `its name "${name}" must be lower-case letters, digits and single hyphens (as in "pdf-forms")`
        : !description?.trim()
          ? "its frontmatter has no `description` (the model picks skills by it)"
          : undefined;
  if (problem) {
    warnings.push(`skill ${file} is left out: ${problem}`);
    return undefined;
  }
  return { name: name!, description: description!.trim(), filePath: file, baseDir: dirname(file) };
}

export type Frontmatter = { fields: Record<string, string>; body: string } | { error: string };

/**
 * The simple `key: value` frontmatter skills use, between `---` lines at the top of the file. Values may be
 * quoted; a value of `>` or `|` (YAML block scalars, common in skills written for other agents) takes the indented
 * lines below it, folded into one line or kept as lines. Anything else is an error, so a typo is reported rather
 * than silently read as something else.
 */
export function parseFrontmatter(text: string): Frontmatter {
  const lines = text.replace(/^\uFEFF/, "").split(/\r?\n/);
  if (lines[0]?.trim() !== "---") return { error: "it does not start with a `---` frontmatter block" };
  const end = lines.findIndex((line, i) => i > 0 && line.trim() === "---");
  if (end === -1) return { error: "its frontmatter has no closing `---` line" };
  const fields: Record<string, string> = {};
  let block: { key: string; folded: boolean; lines: string[] } | undefined;
  const closeBlock = () => {
    if (block) fields[block.key] = block.lines.join(block.folded ? " " : "\n").trim();
    block = undefined;
  };
  for (let i = 1; i < end; i++) {
    const line = lines[i]!;
    if (block && (/^\s/.test(line) || line.trim() === "")) {
      block.lines.push(line.trim());
      continue;
    }
    closeBlock();
    if (line.trim() === "" || line.trimStart().startsWith("#")) continue;
    const match = /^([A-Za-z0-9_-]+):(?:\s+(.*))?$/.exec(line.trimEnd());
    if (!match) return { error: `frontmatter line ${i + 1} is not \`key: value\`: ${JSON.stringify(line)}` };
    const key = match[1]!;
    const value = (match[2] ?? "").trim();
    if (/^[>|][+-]?$/.test(value)) {
      block = { key, folded: value.startsWith(">"), lines: [] };
      continue;
    }
    fields[key] = unquote(value);
  }
  closeBlock();
  return { fields, body: lines.slice(end + 1).join("\n") };
}

function unquote(value: string): string {
  const quote = value[0];
  if ((quote === '"' || quote === "'") && value.length >= 2 && value.endsWith(quote)) {
    const inner = value.slice(1, -1);
    return quote === '"' ? inner.replace(/\\"/g, '"').replace(/\\\\/g, "\\") : inner.replace(/''/g, "'");
  }
  return value;
}
