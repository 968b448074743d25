/**
 * Finding skills on disk and reading their frontmatter. A skill is a folder with a `SKILL.md` whose YAML frontmatter
 * (the kit's `parseFrontmatter`) names it (`name`) and says when to use it (`description`); files beside SKILL.md
 * belong to the skill. Nothing here throws for a bad skill: each problem becomes a warning naming the file (and the
 * line, for a frontmatter that is not valid YAML), and the skill is left out.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { type FrontmatterProblem, parseFrontmatter } from "@knightcodeai/cli/kit";

export interface Skill {
  name: string;
  description: string;
  /** Every field of the frontmatter, as YAML read them (`metadata`, `license`, ...). */
  frontmatter: Record<string, unknown>;
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
  const parsed = await parseFrontmatter(text);
  for (const warning of parsed.warnings) warnings.push(`skill ${file}: ${frontmatterProblem(warning)}`);
  const fields = !parsed.found
    ? { problem: "it does not start with a `---` frontmatter block" }
    : parsed.errors[0]
      ? { problem: frontmatterProblem(parsed.errors[0]) }
      : checkFields(parsed.data);
  if ("problem" in fields) {
    warnings.push(`skill ${file} is left out: ${fields.problem}`);
    return undefined;
  }
  return { ...fields, frontmatter: parsed.data, filePath: file, baseDir: dirname(file) };
}

/** `frontmatter line 3, column 7: <what is wrong>`: where a frontmatter problem is in its file. */
export function frontmatterProblem(problem: FrontmatterProblem): string {
  return `frontmatter line ${problem.line}, column ${problem.column}: ${problem.message}`;
}

/** The skill's `name` and `description` if they follow the Agent Skills rules, or what is wrong with them. */
function checkFields(
  data: Record<string, unknown>,
): { name: string; description: string } | { problem: string } {
  const { name, description } = data;
  if (name === undefined || name === null || name === "") return { problem: "its frontmatter has no `name`" };
  if (typeof name !== "string") return { problem: `its \`name\` must be text, found ${kindOf(name)}` };
  if (name.length > MAX_NAME_LENGTH)
    return { problem: `its name "${name}" is longer than ${MAX_NAME_LENGTH} characters` };
  if (!NAME_PATTERN.test(name))
    return {
      problem: `its name "${name}" must be lower-case letters, digits and single hyphens (as in "pdf-forms")`,
    };
  const noDescription = { problem: "its frontmatter has no `description` (the model picks skills by it)" };
  if (description === undefined || description === null) return noDescription;
  if (typeof description !== "string")
    return { problem: `its \`description\` must be text, found ${kindOf(description)}` };
  if (description.trim() === "") return noDescription;
  return { name, description: description.trim() };
}

function kindOf(value: unknown): string {
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return `a ${typeof value} (${String(value)}); quote it`;
}
