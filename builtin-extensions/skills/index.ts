/**
 * builtin:skills — skills: folders with a `SKILL.md` that give the model instructions for particular tasks.
 *
 * The system prompt lists each skill's name, description and SKILL.md path (this extension fills
 * `systemPromptOptions.skills` in `before_agent_start`, and the prompt builder renders the `skills` section); the
 * model reads the full file when a task matches. `/skill:<name> [args]` sends the skill's instructions (and the
 * arguments) as the user's message; the setting `enableSkillCommands: false` turns that off.
 *
 * Places, in order (the first skill of a name wins, later ones are reported): `<agentDir>/skills/`,
 * `~/.agents/skills/`, then only in a trusted project `<cwd>/.knightcode/skills/` and `.agents/skills/` in the cwd
 * and each folder above it, then the `skillPaths` that `resources_discover` handlers contributed. The list is read
 * when it is first needed (the first run or `/skill:`), since discovery runs after the session started, and again
 * after a reload. The `skills` settings patterns (`!glob`, `+path`, `-path`) of the user's and the trusted
 * project's settings apply to the skills of that scope's folders; package skills and settings entries arrive in
 * the discovered paths already filtered by the package manager.
 */
import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join, resolve, sep } from "node:path";
import {
  type ExtensionAPI,
  type ExtensionContext,
  errorMessage,
  type InputResult,
  parseFrontmatter,
  type ResourceScope,
  resourceFilter,
} from "@knightcodeai/cli/kit";
import { discoverSkills, frontmatterProblem, type Skill } from "./discover.js";

export default function skills(knightcode: ExtensionAPI): void {
  let loaded: Promise<Skill[]> | undefined;
  const load = (ctx: ExtensionContext): Promise<Skill[]> => {
    loaded ??= discoverSkills(skillPlaces(ctx)).then(({ skills, warnings }) => {
      for (const warning of warnings) knightcode.log.warn(warning);
      const enabled = resourceFilter("skills", ctx);
      return skills.filter((skill) => {
        const scope = folderScope(skill.filePath, ctx);
        return scope === undefined || enabled(skill.filePath, scope);
      });
    });
    return loaded;
  };

  knightcode.on("before_agent_start", async (event, ctx) => {
    const found = await load(ctx);
    // Edited in place: the options the prompt is rendered from are this object.
    event.systemPromptOptions.skills.push(
      ...found.map(({ name, description, filePath }) => ({ name, description, filePath })),
    );
    return undefined;
  });

  knightcode.on("input", async (event, ctx): Promise<InputResult> => {
    const command = /^\/skill:(\S+)(?:\s+([\s\S]*))?$/.exec(event.text);
    if (!command || knightcode.getSettings().enableSkillCommands === false) return { action: "continue" };
    const name = command[1]!;
    const args = command[2]?.trim() ?? "";
    const skill = (await load(ctx)).find((s) => s.name === name);
    if (!skill) {
      ctx.ui.notify(`No skill named "${name}"; nothing was sent`, "error");
      return { action: "handled" };
    }
    let body: string;
    try {
      const parsed = await parseFrontmatter(await readFile(skill.filePath, "utf8"));
      if (!parsed.found) throw new Error("it no longer starts with a `---` frontmatter block");
      if (parsed.errors[0]) throw new Error(frontmatterProblem(parsed.errors[0]));
      body = parsed.body.trim();
    } catch (error) {
      ctx.ui.notify(`Skill "${name}" (${skill.filePath}) cannot be used: ${errorMessage(error)}`, "error");
      return { action: "handled" };
    }
    const text =
      `<skill name="${skill.name}" path="${skill.filePath}">\n` +
      `Paths in this skill are relative to ${skill.baseDir}.\n\n${body}\n</skill>` +
      (args ? `\n\n${args}` : "");
    return { action: "transform", text, ...(event.images ? { images: event.images } : {}) };
  });
}

/** Where skills are looked for, in precedence order (see the module comment). */
export function skillPlaces(ctx: ExtensionContext): string[] {
  const places = [join(ctx.agentDir, "skills"), join(homedir(), ".agents", "skills")];
  if (ctx.isProjectTrusted()) {
    places.push(join(ctx.cwd, ".knightcode", "skills"));
    for (let dir = resolve(ctx.cwd); ; dir = dirname(dir)) {
      places.push(join(dir, ".agents", "skills"));
      if (dirname(dir) === dir) break;
    }
  }
  places.push(...ctx.getDiscoveredResources().skillPaths);
  return places;
}

/** Whose settings patterns apply to a skill found in one of the skill folders; undefined for other paths. */
function folderScope(file: string, ctx: ExtensionContext): ResourceScope | undefined {
  const inside = (dir: string) => file.startsWith(`${dir}${sep}`);
  if (inside(join(ctx.agentDir, "skills")) || inside(join(homedir(), ".agents", "skills"))) return "user";
  if (!ctx.isProjectTrusted()) return undefined;
  if (inside(join(ctx.cwd, ".knightcode", "skills"))) return "project";
  return file.split(sep).includes(".agents") ? "project" : undefined;
}
