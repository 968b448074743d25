/**
 * builtin:skills — skills: folders with a `SKILL.md` that give the model instructions for particular tasks.
 *
 * The system prompt lists each skill's name, description and SKILL.md path (this extension fills
 * `systemPromptOptions.skills` in `before_agent_start`, and the prompt builder renders the `skills` section); the
 * model reads the full file when a task matches; a skill whose frontmatter has `disable-model-invocation: true` is
 * left out of that list. Each skill is also the command `skill:<name>` (listed by `getCommands()` with `source:
 * "skill"`, so RPC `get_commands` and the `/` menu show it): `/skill:<name> [args]` sends the skill's instructions
 * (and the arguments) as the user's message; the setting `enableSkillCommands: false` turns the commands off.
 *
 * Places, in order (the first skill of a name wins, later ones are reported): `<agentDir>/skills/`,
 * `~/.agents/skills/`, then only in a trusted project `<cwd>/.knightcode/skills/` and `.agents/skills/` in the cwd
 * and each folder above it, then the `skillPaths` that `resources_discover` handlers contributed. The `skills` settings patterns (`!glob`, `+path`, `-path`) of the user's and the trusted
 * project's settings apply to the skills of that scope's folders; package skills and settings entries arrive in
 * the discovered paths already filtered by the package manager. The skills are read in a `{ fallback: true }`
 * `resources_discover` handler, which runs after every other extension's, so the contributed paths are all there;
 * the event comes at startup and on reload.
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
  type Unsubscribe,
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

  // Each skill is a `skill:<name>` command, so every host lists it (RPC `get_commands`, the `/` menu) and runs it.
  // Registered once every extension has contributed its paths: this `fallback` handler runs after theirs.
  let registered: Unsubscribe[] = [];
  knightcode.on(
    "resources_discover",
    async (_event, ctx) => {
      for (const unregister of registered) unregister();
      registered = [];
      loaded = undefined;
      const found = await load(ctx);
      if (knightcode.getSettings().enableSkillCommands === false) return;
      for (const skill of found) {
        try {
          registered.push(
            knightcode.registerCommand(`skill:${skill.name}`, {
              description: skill.description,
              source: "skill",
              sourceInfo: {
                path: skill.filePath,
                source: "local",
                scope: folderScope(skill.filePath, ctx) ?? "temporary",
                baseDir: skill.baseDir,
              },
              handler: async (args, commandCtx) => {
                const text = await expandSkill(skill, args.trim(), commandCtx);
                if (text !== undefined) await commandCtx.sendUserMessage(text);
              },
            }),
          );
        } catch (error) {
          knightcode.log.warn(`skill ${skill.filePath}: ${errorMessage(error)}`);
        }
      }
    },
    { fallback: true },
  );

  knightcode.on("before_agent_start", async (event, ctx) => {
    const found = await load(ctx);
    // Edited in place: the options the prompt is rendered from are this object. A skill whose frontmatter says
    // `disable-model-invocation: true` stays out of the model's list; only `/skill:<name>` brings it in.
    event.systemPromptOptions.skills.push(
      ...found
        .filter((skill) => skill.frontmatter["disable-model-invocation"] !== true)
        .map(({ name, description, filePath }) => ({ name, description, filePath })),
    );
    return undefined;
  });

  // A registered `skill:<name>` command runs before input handlers see the text, so what reaches this handler is a
  // name no skill has (or skill commands are turned off, when the text goes to the model as typed).
  knightcode.on("input", async (event, ctx): Promise<InputResult> => {
    const command = /^\/skill:(\S+)(?:\s+([\s\S]*))?$/.exec(event.text);
    if (!command || knightcode.getSettings().enableSkillCommands === false) return { action: "continue" };
    const name = command[1]!;
    const skill = (await load(ctx)).find((s) => s.name === name);
    if (!skill) {
      ctx.ui.notify(`No skill named "${name}"; nothing was sent`, "error");
      return { action: "handled" };
    }
    const text = await expandSkill(skill, command[2]?.trim() ?? "", ctx);
    if (text === undefined) return { action: "handled" };
    return { action: "transform", text, ...(event.images ? { images: event.images } : {}) };
  });
}

/** The user message `/skill:<name> args` sends: the skill's instructions, then the arguments; undefined (and a
 * notice) when the file can no longer be used. */
async function expandSkill(skill: Skill, args: string, ctx: ExtensionContext): Promise<string | undefined> {
  let body: string;
  try {
    const parsed = await parseFrontmatter(await readFile(skill.filePath, "utf8"));
    if (!parsed.found) throw new Error("it no longer starts with a `---` frontmatter block");
    if (parsed.errors[0]) throw new Error(frontmatterProblem(parsed.errors[0]));
    body = parsed.body.trim();
  } catch (error) {
    ctx.ui.notify(
      `Skill "${skill.name}" (${skill.filePath}) cannot be used: ${errorMessage(error)}`,
      "error",
    );
    return undefined;
  }
  return (
    `<skill name="${skill.name}" path="${skill.filePath}">\n` +
    `Paths in this skill are relative to ${skill.baseDir}.\n\n${body}\n</skill>` +
    (args ? `\n\n${args}` : "")
  );
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
