/**
 * The default system prompt, as named sections that extensions edit through `before_agent_start`
 * (`event.systemPromptOptions`), then rendered to one string.
 *
 * Sections, in order (ids are stable, so extensions can find, replace or remove them):
 *
 * | id            | text                                                                                   |
 * | ------------- | -------------------------------------------------------------------------------------- |
 * | `base`        | who KnightCode is and how it works; SYSTEM.md instead when there is one                |
 * | `tools`       | `- name: snippet` for each active tool that has a prompt snippet (not with SYSTEM.md)   |
 * | `guidelines`  | the active tools' prompt guidelines, de-duplicated, then general ones (not with SYSTEM.md) |
 * | `context`     | each context file (AGENTS.md / CLAUDE.md) under a heading with its path                 |
 * | `skills`      | each skill's name, description and SKILL.md path (`skills`, filled by builtin:skills)   |
 * | `environment` | the cwd and the current date                                                            |
 * | `append`      | APPEND_SYSTEM.md, only when there is one                                                |
 *
 * A section may have empty text (no tool has a snippet, no context file); it stays in the list so it can be
 * addressed, and rendering leaves it out.
 */
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { PromptSkill, SystemPromptOptions } from "../../kernel/api/events.js";
import { PROJECT_CONFIG_DIR } from "../settings/agent-dir.js";
import type { ContextFile } from "./context-files.js";

/** What the prompt needs to know about a tool. */
export interface PromptTool {
  name: string;
  promptSnippet?: string;
  promptGuidelines?: string[];
}

export interface DefaultSystemPromptInput {
  cwd: string;
  /** The active tools, in the order they should be listed. */
  tools: readonly PromptTool[];
  contextFiles: readonly ContextFile[];
  /** Defaults to now. */
  date?: Date;
  /** SYSTEM.md: becomes the `base` section, and the `tools` and `guidelines` sections are left out (as in pi). */
  customPrompt?: string;
  /** APPEND_SYSTEM.md: added as the last section, `append`. */
  appendPrompt?: string;
}

export const BASE_PROMPT = `You are KnightCode, an expert coding agent. You work in the user's project folder and help with software \
engineering tasks: you read and search code, run commands, and edit or create files with the tools available to you.

How to work:
- Read the relevant code before you change it, and follow the conventions the project already uses.
- Keep changes focused on what was asked; do not refactor, rename or reformat beyond the task.
- Verify your work by running the project's tests, type checker, linter or build, and fix what you broke.
- Report clearly: what you changed, how you verified it, and anything left undone or uncertain.`;

export const GENERAL_GUIDELINES: readonly string[] = Object.freeze([
  "Ask before destructive or irreversible steps (deleting data, force-pushing, rewriting history) unless the user asked for them.",
  "When a request is ambiguous, say which interpretation you chose, or ask.",
  "Mention files by their path so the user can find them.",
  "Be concise.",
]);

/** The sections KnightCode builds for a run, before extensions see them. */
export function defaultSystemPromptOptions(input: DefaultSystemPromptInput): SystemPromptOptions {
  const custom = input.customPrompt?.trim() ? input.customPrompt : undefined;
  const guidelines = dedupe([...toolGuidelines(input.tools), ...GENERAL_GUIDELINES]);
  const sections = custom
    ? [{ id: "base", text: custom }]
    : [
        { id: "base", text: BASE_PROMPT },
        { id: "tools", text: renderToolsSection(input.tools) },
        { id: "guidelines", text: renderGuidelinesSection(guidelines) },
      ];
  sections.push(
    { id: "context", text: renderContextSection(input.contextFiles) },
    { id: "skills", text: "" },
    { id: "environment", text: renderEnvironmentSection(input.cwd, input.date ?? new Date()) },
  );
  const append = input.appendPrompt?.trim() ? input.appendPrompt : undefined;
  if (append) sections.push({ id: "append", text: append });
  const names = input.tools.map((t) => t.name);
  return {
    sections,
    tools: names,
    guidelines,
    cwd: input.cwd,
    ...(custom ? { customPrompt: custom } : {}),
    // One array under both names, so an in-place edit through either is seen by both.
    selectedTools: names,
    toolSnippets: Object.fromEntries(
      input.tools.filter((t) => t.promptSnippet?.trim()).map((t) => [t.name, t.promptSnippet!]),
    ),
    promptGuidelines: toolGuidelines(input.tools),
    ...(append ? { appendSystemPrompt: append } : {}),
    contextFiles: input.contextFiles.map((f) => ({ path: f.path, content: f.content })),
    skills: [],
  };
}

/** Joins the sections with non-blank text, in order, with a blank line between them. */
export function renderSystemPrompt(options: Pick<SystemPromptOptions, "sections">): string {
  return options.sections
    .map((section) => section.text.trim())
    .filter((text) => text !== "")
    .join("\n\n");
}

export interface BuildSystemPromptContext {
  /** Every tool an extension might have selected (the registry), to find snippets and guidelines by name. */
  tools?: readonly PromptTool[];
  /** The options as they were before `before_agent_start` (a copy). */
  original?: SystemPromptOptions;
}

/**
 * Renders the options an extension handed back from `before_agent_start`. With `original` and `tools`, changes to
 * the `tools` and `guidelines` arrays are carried into their sections (see `syncSystemPromptSections`).
 */
export function buildSystemPrompt(
  options: SystemPromptOptions,
  context: BuildSystemPromptContext = {},
): string {
  return renderSystemPrompt(syncSystemPromptSections(options, context));
}

/**
 * Brings the `tools` and `guidelines` sections in line with the `tools` and `guidelines` arrays when an extension
 * changed the arrays but not the section text. An edited section text always wins; so does an edited
 * `guidelines` array over the guidelines a tool change would imply. When only `tools` changed, the guidelines that
 * came from the old tools are replaced by those of the new ones (extra guidelines stay). Edits of the peer's
 * fields come first: `selectedTools` stands for `tools` when only it changed, guidelines added to or removed from
 * `promptGuidelines` are added to or removed from `guidelines`, changed `toolSnippets` re-render the `tools`
 * section, and `appendSystemPrompt` and `customPrompt` set the `append` and `base` sections when their text was
 * not edited; a changed `skills` list re-renders the `skills` section the same way. Returns a new object.
 */
export function syncSystemPromptSections(
  options: SystemPromptOptions,
  context: BuildSystemPromptContext = {},
): SystemPromptOptions {
  // The peer's fields as an extension left them; one written for the peer may have deleted or replaced them.
  const selectedTools = options.selectedTools ?? options.tools;
  const toolSnippets = options.toolSnippets ?? {};
  const promptGuidelines = options.promptGuidelines ?? [];
  const tools = [...options.tools];
  const result: SystemPromptOptions = {
    ...options,
    sections: options.sections.map((s) => ({ ...s })),
    tools,
    guidelines: [...options.guidelines],
    selectedTools: tools,
    toolSnippets: { ...toolSnippets },
    promptGuidelines: [...promptGuidelines],
    contextFiles: (options.contextFiles ?? []).map((f) => ({ ...f })),
    skills: [...(options.skills ?? [])],
  };
  const { original } = context;
  if (!original) return result;
  if (!sameList(selectedTools, original.selectedTools) && sameList(options.tools, original.tools)) {
    result.tools = [...selectedTools];
    result.selectedTools = result.tools;
  }
  const snippetsChanged = !sameRecord(toolSnippets, original.toolSnippets);
  const snippetOf = (tool: PromptTool): PromptTool =>
    snippetsChanged ? withSnippet(tool, toolSnippets[tool.name]) : tool;
  const catalog = new Map((context.tools ?? []).map((t) => [t.name, snippetOf(t)]));
  const toolsOf = (names: readonly string[]) => names.map((name) => catalog.get(name) ?? snippetOf({ name }));
  if (
    !sameList(promptGuidelines, original.promptGuidelines) &&
    sameList(options.guidelines, original.guidelines)
  ) {
    const removed = new Set(original.promptGuidelines.filter((g) => !promptGuidelines.includes(g)));
    const added = promptGuidelines.filter((g) => !original.promptGuidelines.includes(g));
    result.guidelines = dedupe([...result.guidelines.filter((g) => !removed.has(g)), ...added]);
  }
  const toolsChanged = !sameList(result.tools, original.tools);
  if (!sameList(options.promptGuidelines, original.promptGuidelines)) {
    const removed = new Set(original.promptGuidelines.filter((g) => !options.promptGuidelines.includes(g)));
    const added = options.promptGuidelines.filter((g) => !original.promptGuidelines.includes(g));
    result.guidelines = dedupe([...result.guidelines.filter((g) => !removed.has(g)), ...added]);
  }
  if (toolsChanged && sameList(result.guidelines, original.guidelines)) {
    const before = new Set(toolGuidelines(toolsOf(original.tools)));
    result.guidelines = dedupe([
      ...toolGuidelines(toolsOf(result.tools)),
      ...original.guidelines.filter((g) => !before.has(g)),
    ]);
  }
  const guidelinesChanged = !sameList(result.guidelines, original.guidelines);
  const appendChanged = (options.appendSystemPrompt ?? "") !== (original.appendSystemPrompt ?? "");
  const customChanged = (options.customPrompt ?? "") !== (original.customPrompt ?? "");
  const skillsChanged = JSON.stringify(result.skills) !== JSON.stringify(original.skills ?? []);
  for (const section of result.sections) {
    const before = original.sections.find((s) => s.id === section.id);
    if (!before || before.text !== section.text) continue;
    if (section.id === "tools" && (toolsChanged || snippetsChanged)) {
      section.text = renderToolsSection(toolsOf(result.tools));
    } else if (section.id === "guidelines" && guidelinesChanged) {
      section.text = renderGuidelinesSection(result.guidelines);
    } else if (section.id === "append" && appendChanged) {
      section.text = options.appendSystemPrompt ?? "";
    } else if (section.id === "skills" && skillsChanged) {
      section.text = renderSkillsSection(result.skills);
    } else if (section.id === "base" && customChanged) {
      section.text = options.customPrompt?.trim() ? options.customPrompt : BASE_PROMPT;
    }
  }
  const hadAppend = original.sections.some((s) => s.id === "append");
  if (appendChanged && !hadAppend && options.appendSystemPrompt?.trim()) {
    result.sections.push({ id: "append", text: options.appendSystemPrompt });
  }
  return result;
}

function withSnippet(tool: PromptTool, snippet: string | undefined): PromptTool {
  const { promptSnippet: _old, ...rest } = tool;
  return snippet === undefined ? rest : { ...rest, promptSnippet: snippet };
}

function sameRecord(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

/**
 * SYSTEM.md and APPEND_SYSTEM.md: the project's (`.knightcode/`, only in a trusted project) or else the personal
 * one in the agent dir. Missing or unreadable files are left out.
 */
export async function loadSystemPromptFiles(options: {
  cwd: string;
  agentDir: string;
  projectTrusted: boolean;
}): Promise<{ customPrompt?: string; appendPrompt?: string }> {
  const dirs = [
    ...(options.projectTrusted ? [join(resolve(options.cwd), PROJECT_CONFIG_DIR)] : []),
    resolve(options.agentDir),
  ];
  const first = async (name: string) => {
    for (const dir of dirs) {
      try {
        return await readFile(join(dir, name), "utf8");
      } catch {
        // next place
      }
    }
    return undefined;
  };
  const [customPrompt, appendPrompt] = await Promise.all([first("SYSTEM.md"), first("APPEND_SYSTEM.md")]);
  return {
    ...(customPrompt === undefined ? {} : { customPrompt }),
    ...(appendPrompt === undefined ? {} : { appendPrompt }),
  };
}

// ---- sections ------------------------------------------------------------------------------------------

export function renderToolsSection(tools: readonly PromptTool[]): string {
  const lines = tools
    .filter((t) => t.promptSnippet?.trim())
    .map((t) => `- ${t.name}: ${t.promptSnippet!.trim().replace(/\s*\n\s*/g, " ")}`);
  return lines.length === 0 ? "" : ["Available tools:", ...lines].join("\n");
}

export function renderGuidelinesSection(guidelines: readonly string[]): string {
  const lines = guidelines.filter((g) => g.trim()).map((g) => `- ${g.trim()}`);
  return lines.length === 0 ? "" : ["Guidelines:", ...lines].join("\n");
}

export function renderContextSection(files: readonly ContextFile[]): string {
  if (files.length === 0) return "";
  return [
    "# Project context",
    "Instructions from context files; later files are more specific and take precedence.",
    ...files.map((file) => `## ${file.path}\n\n${file.content.trim()}`),
  ].join("\n\n");
}

/**
 * Only what the model needs to decide whether a skill applies; it reads the SKILL.md itself when one does, so the
 * full instructions cost context only when used.
 */
export function renderSkillsSection(skills: readonly PromptSkill[]): string {
  if (skills.length === 0) return "";
  return [
    "# Skills",
    "Skills are instructions for particular tasks. When a task matches a skill's description, read its SKILL.md " +
      "with your file tools before you start, and follow it. Paths a skill mentions are relative to the folder of " +
      "its SKILL.md.",
    "",
    "<skills>",
    ...skills.map(
      (skill) =>
        `<skill name="${xml(skill.name)}" path="${xml(skill.filePath)}">${xml(skill.description.trim())}</skill>`,
    ),
    "</skills>",
  ].join("\n");
}

function xml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

export function renderEnvironmentSection(cwd: string, date: Date): string {
  return `Current date: ${localDate(date)}\nCurrent working directory: ${cwd}`;
}

function localDate(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

function toolGuidelines(tools: readonly PromptTool[]): string[] {
  return dedupe(tools.flatMap((t) => t.promptGuidelines ?? []));
}

function dedupe(items: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const item of items) {
    const key = item.trim();
    if (key === "" || seen.has(key)) continue;
    seen.add(key);
    out.push(key);
  }
  return out;
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}
