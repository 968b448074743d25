/**
 * pi's helper functions in pi's shapes, over KnightCode's own parts: the frontmatter reader, skill files, the session
 * context, the clipboard tools, thinking levels. Loaded with the `@…/pi-coding-agent` module, when an extension
 * first imports it. exports.ts lists them as "mapped" and says what each maps to.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import type { SessionEntry, ThinkingLevel } from "../../../kernel/index.js";
import { estimateTokens as estimateMessageTokens } from "../../../plugins/agent-loop/compaction.js";
import type { YamlBlock } from "../../../plugins/kit/frontmatter-yaml.js";
import { buildSessionContext as branchContext } from "../../../plugins/session-store/context.js";

// ---- frontmatter ----------------------------------------------------------------------------------------------

/**
 * KnightCode's YAML reader, handed in by whoever loads this module (package-modules.ts): the `knightcode` command
 * keeps the YAML parser in a side bundle of its own, loaded by `import()`, which a synchronous `parseFrontmatter`
 * cannot wait for.
 */
let readYamlBlock: ((source: string) => YamlBlock) | undefined;

export function useYamlReader(reader: (source: string) => YamlBlock): void {
  readYamlBlock = reader;
}

function splitFrontmatter(content: string): { yaml: string | undefined; body: string } {
  const text = content.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  if (!text.startsWith("---")) return { yaml: undefined, body: text };
  const end = text.indexOf("\n---", 3);
  if (end === -1) return { yaml: undefined, body: text };
  return { yaml: text.slice(4, end), body: text.slice(end + 4).trim() };
}

/** pi's `parseFrontmatter`: `{ frontmatter, body }` at once; YAML that does not parse throws, as pi's does. */
export function parseFrontmatter<T extends Record<string, unknown> = Record<string, unknown>>(
  content: string,
): { frontmatter: T; body: string } {
  const { yaml, body } = splitFrontmatter(content);
  if (!yaml) return { frontmatter: {} as T, body };
  if (!readYamlBlock)
    throw new Error("parseFrontmatter: the YAML reader was not loaded (use the package entry)");
  const block = readYamlBlock(yaml);
  if (!block.data) {
    throw new Error(`invalid frontmatter: ${block.errors.map((e) => e.message).join("; ")}`);
  }
  return { frontmatter: block.data as T, body };
}

export function stripFrontmatter(content: string): string {
  return parseFrontmatter(content).body;
}

// ---- event bus ------------------------------------------------------------------------------------------------

/** A standalone channel bus like `pi.events`: a throwing handler is reported on stderr and the others still run. */
export function createEventBus(): {
  emit(channel: string, data: unknown): void;
  on(channel: string, handler: (data: unknown) => unknown): () => void;
  clear(): void;
} {
  const channels = new Map<string, Set<(data: unknown) => unknown>>();
  return {
    emit(channel, data) {
      for (const handler of [...(channels.get(channel) ?? [])]) {
        void (async () => handler(data))().catch((error: unknown) =>
          process.stderr.write(`Event handler error (${channel}): ${String(error)}\n`),
        );
      }
    },
    on(channel, handler) {
      const set = channels.get(channel) ?? new Set();
      channels.set(channel, set);
      set.add(handler);
      return () => set.delete(handler);
    },
    clear() {
      channels.clear();
    },
  };
}

// ---- session context ------------------------------------------------------------------------------------------

/**
 * pi's `buildSessionContext(entries, leafId?, byId?)`: the branch ending at `leafId` (the last entry by default;
 * `null`: none), read as KnightCode reads a branch.
 */
export function buildSessionContext(
  entries: readonly SessionEntry[],
  leafId?: string | null,
  byId?: Map<string, SessionEntry>,
): {
  messages: unknown[];
  thinkingLevel: ThinkingLevel | string;
  model: { provider: string; modelId: string } | null;
} {
  const index = byId ?? new Map(entries.map((entry) => [entry.id, entry]));
  const branch: SessionEntry[] = [];
  let at = leafId === undefined ? entries.at(-1) : leafId === null ? undefined : index.get(leafId);
  const seen = new Set<string>();
  while (at && !seen.has(at.id)) {
    seen.add(at.id);
    branch.push(at);
    at = at.parentId ? index.get(at.parentId) : undefined;
  }
  const context = branchContext(branch.reverse());
  return {
    messages: context.messages,
    thinkingLevel: context.thinkingLevel ?? "off",
    model: context.model ?? null,
  };
}

export function estimateTokens(message: Parameters<typeof estimateMessageTokens>[0]): number {
  return estimateMessageTokens(message);
}

// ---- skills ---------------------------------------------------------------------------------------------------

export interface PiSkill {
  name: string;
  description: string;
  filePath: string;
  baseDir: string;
  sourceInfo: { path: string; source: string; scope: string; origin: string; baseDir: string };
  disableModelInvocation: boolean;
}
interface Diagnostic {
  type: "warning";
  message: string;
  path: string;
}

function skillFromFile(file: string, source: string): { skill?: PiSkill; diagnostics: Diagnostic[] } {
  const declared = basename(file) === "SKILL.md";
  let frontmatter: Record<string, unknown>;
  try {
    ({ frontmatter } = parseFrontmatter(readFileSync(file, "utf8")));
  } catch (error) {
    return { diagnostics: declared ? [{ type: "warning", message: String(error), path: file }] : [] };
  }
  const description = frontmatter.description;
  if (typeof description !== "string" || description.trim() === "") {
    return {
      diagnostics: declared ? [{ type: "warning", message: "description is required", path: file }] : [],
    };
  }
  const baseDir = dirname(file);
  const name =
    typeof frontmatter.name === "string" && frontmatter.name ? frontmatter.name : basename(baseDir);
  return {
    skill: {
      name,
      description,
      filePath: file,
      baseDir,
      sourceInfo: { path: file, source, scope: "temporary", origin: "top-level", baseDir },
      disableModelInvocation: frontmatter["disable-model-invocation"] === true,
    },
    diagnostics: [],
  };
}

function walkSkills(
  dir: string,
  source: string,
  rootFiles: boolean,
  out: { skills: PiSkill[]; diagnostics: Diagnostic[] },
) {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return;
  }
  // A folder with a SKILL.md is one skill; nothing below it is looked at.
  if (entries.includes("SKILL.md") && isFile(join(dir, "SKILL.md"))) {
    const found = skillFromFile(join(dir, "SKILL.md"), source);
    if (found.skill) out.skills.push(found.skill);
    out.diagnostics.push(...found.diagnostics);
    return;
  }
  for (const name of entries.sort()) {
    if (name.startsWith(".") || name === "node_modules") continue;
    const path = join(dir, name);
    let stat: ReturnType<typeof statSync>;
    try {
      stat = statSync(path);
    } catch {
      continue;
    }
    if (stat.isDirectory()) walkSkills(path, source, false, out);
    else if (rootFiles && stat.isFile() && name.endsWith(".md")) {
      const found = skillFromFile(path, source);
      if (found.skill) out.skills.push(found.skill);
      out.diagnostics.push(...found.diagnostics);
    }
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** pi's rules: a folder with `SKILL.md` is a skill; `.md` files with a description directly in `dir` are too. */
export function loadSkillsFromDir(options: { dir: string; source?: string }): {
  skills: PiSkill[];
  diagnostics: Diagnostic[];
} {
  const out = { skills: [] as PiSkill[], diagnostics: [] as Diagnostic[] };
  if (existsSync(options.dir)) walkSkills(resolve(options.dir), options.source ?? "path", true, out);
  return out;
}

/**
 * The skills of `skillPaths` and, with `includeDefaults` (the default), of KnightCode's skill folders
 * (`<agentDir>/skills`, `<cwd>/.knightcode/skills`). The first skill of a name wins; later ones are diagnostics.
 */
export function loadSkills(
  options: { cwd?: string; agentDir?: string; skillPaths?: string[]; includeDefaults?: boolean } = {},
  defaultAgentDir = "",
): { skills: PiSkill[]; diagnostics: Diagnostic[] } {
  const cwd = options.cwd ?? process.cwd();
  const agentDir = options.agentDir ?? defaultAgentDir;
  const places = [
    ...(options.includeDefaults === false
      ? []
      : [
          ...(agentDir ? [[join(agentDir, "skills"), "user"]] : []),
          [join(cwd, ".knightcode", "skills"), "project"],
        ]),
    ...(options.skillPaths ?? []).map((path) => [resolve(cwd, path), "path"]),
  ] as [string, string][];
  const skills = new Map<string, PiSkill>();
  const diagnostics: Diagnostic[] = [];
  for (const [dir, source] of places) {
    const found = existsSync(dir) && isFile(dir) ? skillFromFile(dir, source) : undefined;
    const result = found
      ? { skills: found.skill ? [found.skill] : [], diagnostics: found.diagnostics }
      : loadSkillsFromDir({ dir, source });
    diagnostics.push(...result.diagnostics);
    for (const skill of result.skills) {
      const first = skills.get(skill.name);
      if (first) {
        diagnostics.push({
          type: "warning",
          message: `skill "${skill.name}" is also defined in ${first.filePath}; that one is used`,
          path: skill.filePath,
        });
      } else skills.set(skill.name, skill);
    }
  }
  return { skills: [...skills.values()], diagnostics };
}

/** A prompt that starts with a `<skill name="…" location="…">` block, as pi writes an invoked skill. */
export function parseSkillBlock(
  text: string,
): { name: string; location: string; content: string; userMessage: string | undefined } | null {
  const match = /^<skill name="([^"]+)" location="([^"]+)">\n([\s\S]*?)\n<\/skill>(?:\n\n([\s\S]+))?$/.exec(
    text,
  );
  if (!match) return null;
  return {
    name: match[1]!,
    location: match[2]!,
    content: match[3]!,
    userMessage: match[4]?.trim() || undefined,
  };
}

const xml = (text: string) =>
  text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");

/** The skills section pi puts in the system prompt (skills with `disableModelInvocation` left out). */
export function formatSkillsForPrompt(
  skills: readonly PiSkill[],
  fileReadTool: "read" | "bash" | "indirect" = "read",
) {
  const visible = skills.filter((skill) => !skill.disableModelInvocation);
  if (visible.length === 0) return "";
  const how =
    fileReadTool === "read"
      ? "Use the read tool to load a skill's file when the task matches its description."
      : fileReadTool === "bash"
        ? "Use bash to load a skill's file when the task matches its description."
        : "Load a skill's file when the task matches its description.";
  return [
    "\n\nThe following skills provide specialized instructions for specific tasks.",
    how,
    "Resolve relative paths against the skill's directory (parent of SKILL.md). Use absolute paths in tool calls.",
    "",
    "<available_skills>",
    ...visible.flatMap((skill) => [
      "  <skill>",
      `    <name>${xml(skill.name)}</name>`,
      `    <description>${xml(skill.description)}</description>`,
      `    <location>${xml(skill.filePath)}</location>`,
      "  </skill>",
    ]),
    "</available_skills>",
  ].join("\n");
}

// ---- clipboard ------------------------------------------------------------------------------------------------

const CLIPBOARD_TIMEOUT_MS = 5_000;

function pipeTo(command: string, args: string[], input: string): Promise<"ok" | "absent" | "failed"> {
  return new Promise((done) => {
    const child = execFile(command, args, { timeout: CLIPBOARD_TIMEOUT_MS }, (error) =>
      done((error as NodeJS.ErrnoException | null)?.code === "ENOENT" ? "absent" : error ? "failed" : "ok"),
    );
    child.stdin?.on("error", () => {});
    child.stdin?.end(input);
  });
}

/**
 * Puts text on the clipboard with the tools the interactive mode reads images with: pbcopy (macOS), clip (Windows),
 * wl-copy (Wayland), xclip or xsel (X11), termux-clipboard-set. Rejects, naming what it tried, when none worked.
 */
export async function copyToClipboard(
  text: string,
  platform: NodeJS.Platform = process.platform,
): Promise<void> {
  const env = process.env;
  const tools: [string, string[]][] =
    platform === "darwin"
      ? [["pbcopy", []]]
      : platform === "win32"
        ? [["clip", []]]
        : [
            ...(env.TERMUX_VERSION ? [["termux-clipboard-set", []] as [string, string[]]] : []),
            ...(env.WAYLAND_DISPLAY ? [["wl-copy", []] as [string, string[]]] : []),
            ["xclip", ["-selection", "clipboard"]],
            ["xsel", ["--clipboard", "--input"]],
          ];
  const tried: string[] = [];
  for (const [command, args] of tools) {
    const result = await pipeTo(command, args, text);
    if (result === "ok") return;
    tried.push(`${command} ${result === "absent" ? "(not installed)" : "(failed)"}`);
  }
  throw new Error(`copyToClipboard: no clipboard tool worked: ${tried.join(", ")}`);
}

// ---- code and images ------------------------------------------------------------------------------------------

const LANGUAGES: Record<string, string> = {
  ts: "typescript",
  tsx: "typescript",
  mts: "typescript",
  cts: "typescript",
  js: "javascript",
  jsx: "javascript",
  mjs: "javascript",
  cjs: "javascript",
  py: "python",
  rb: "ruby",
  rs: "rust",
  go: "go",
  java: "java",
  kt: "kotlin",
  swift: "swift",
  dart: "dart",
  groovy: "groovy",
  gradle: "groovy",
  nix: "nix",
  c: "c",
  h: "c",
  cpp: "cpp",
  cc: "cpp",
  cxx: "cpp",
  hpp: "cpp",
  cs: "csharp",
  php: "php",
  sh: "bash",
  bash: "bash",
  zsh: "bash",
  fish: "fish",
  ps1: "powershell",
  sql: "sql",
  html: "html",
  htm: "html",
  css: "css",
  scss: "scss",
  sass: "scss",
  less: "less",
  json: "json",
  yaml: "yaml",
  yml: "yaml",
  toml: "toml",
  xml: "xml",
  md: "markdown",
  markdown: "markdown",
  dockerfile: "dockerfile",
  lua: "lua",
  r: "r",
  scala: "scala",
  ex: "elixir",
  exs: "elixir",
  erl: "erlang",
  hs: "haskell",
  ml: "ocaml",
  vim: "vim",
  graphql: "graphql",
  proto: "protobuf",
  tf: "hcl",
  hcl: "hcl",
  vue: "vue",
  svelte: "svelte",
  zig: "zig",
  clj: "clojure",
  pl: "perl",
};

/** The language of a file, by its extension (pi's names: `typescript`, `python`, ...). */
export function getLanguageFromPath(filePath: string): string | undefined {
  const name = basename(filePath).toLowerCase();
  if (name === "dockerfile") return "dockerfile";
  if (name === "makefile") return "makefile";
  const ext = name.includes(".") ? name.split(".").pop() : undefined;
  return ext ? LANGUAGES[ext] : undefined;
}

/**
 * The lines of `code` in the theme's code-block colour. KnightCode has no syntax highlighter: every language gets
 * the colour pi gives code in a language it does not know.
 */
export function highlightCode(
  code: string,
  _lang: string | undefined,
  colour: (line: string) => string,
): string[] {
  return code.split("\n").map((line) => colour(line));
}

const MAX_SIDE = 2000;
const MAX_BYTES = 4.5 * 1024 * 1024;

/**
 * pi's `resizeImage(bytes, mimeType, options)`. KnightCode has no image codec: an image already within the limits
 * comes back as it is (`wasResized: false`); a larger one, or one whose size cannot be read, is an error saying so.
 */
export async function resizeImage(
  inputBytes: Uint8Array,
  mimeType: string,
  options: { maxWidth?: number; maxHeight?: number; maxBytes?: number } = {},
  dimensions: (base64: string, mimeType: string) => { widthPx: number; heightPx: number } | null,
): Promise<{
  data: string;
  mimeType: string;
  originalWidth: number;
  originalHeight: number;
  width: number;
  height: number;
  wasResized: boolean;
}> {
  const data = Buffer.from(inputBytes).toString("base64");
  const size = dimensions(data, mimeType);
  if (!size) throw new Error(`resizeImage: cannot read the size of this ${mimeType} image`);
  const maxWidth = options.maxWidth ?? MAX_SIDE;
  const maxHeight = options.maxHeight ?? MAX_SIDE;
  const maxBytes = options.maxBytes ?? MAX_BYTES;
  if (size.widthPx > maxWidth || size.heightPx > maxHeight || inputBytes.byteLength > maxBytes) {
    throw new Error(
      `resizeImage: the ${size.widthPx}x${size.heightPx} image (${inputBytes.byteLength} bytes) is over ` +
        `${maxWidth}x${maxHeight} or ${maxBytes} bytes, and KnightCode has no image resizer`,
    );
  }
  return {
    data,
    mimeType,
    originalWidth: size.widthPx,
    originalHeight: size.heightPx,
    width: size.widthPx,
    height: size.heightPx,
    wasResized: false,
  };
}
