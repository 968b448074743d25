/**
 * `knightcode --help`. The built-in extensions' modes and flags come from their manifest, so help for a plain
 * installation loads no extension and opens no session. Extensions beyond the built-ins (`-e`, the personal
 * folder, settings) can only tell their flags and modes by running, so then the caller opens a session and passes
 * what it registered.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
// The manifest is data (also exported as BUILTIN_MANIFEST by @knightcodeai/cli); importing it by path keeps the
// SDK that the package entry would load out of --help.
import { BUILTIN_MANIFEST } from "../sdk/builtin-manifest.js";
import { cliAgentDir } from "./agent-dir.js";
import type { CliArgs } from "./args.js";

export interface HelpFlag {
  name: string;
  type: "boolean" | "string";
  description?: string;
  owner: string;
}

export interface HelpMode {
  name: string;
  description?: string;
  owner: string;
}

const COMMANDS: [string, string][] = [
  [
    "install <source> [-l]",
    "Install a package (npm:<name>[@version], git:<host>/<path>[@ref], a git URL, a path)",
  ],
  ["remove <source> [-l]", "Remove a package and its files (also: uninstall)"],
  ["list", "List the installed packages of the user and the project"],
  ["update [source]", "Update unpinned packages (all, or one)"],
  ["config", "Enable or disable each extension, skill, prompt template and theme"],
  [
    "login [provider] [--method <id>]",
    "Sign in to a provider: a subscription (Claude, ChatGPT) or an API key, kept in auth.json",
  ],
  ["login --list", "The stored credentials, keys masked"],
  ["logout [provider]", "Remove a provider's stored credential from auth.json"],
  [
    "import pi [--dry-run] [--force]",
    "Bring pi's setup over: keys, sign-ins, settings, models, MCP servers, bindings, sessions (--project: .pi/)",
  ],
  ["mcp list [--json]", "List the MCP servers of mcp.json (agent dir and project)"],
  ["mcp add <name> <url>", "Add an HTTP MCP server (--project for the project's file)"],
  ["mcp add <name> -- <cmd> [args]", "Add a stdio MCP server (--env KEY=VALUE, --exposure, --timeout ...)"],
  ["mcp remove <name>", "Remove an MCP server from mcp.json"],
  [
    "app-server [--listen ws://127.0.0.1:PORT]",
    "Serve JSON-RPC to desktop and editor clients (docs/app-server.md)",
  ],
  ["app-server schema --out <dir>", "Write the app-server protocol as JSON Schema and TypeScript"],
  [
    "acp [options]",
    "Be an Agent Client Protocol agent on stdio, for Zed and other ACP editors (docs/acp.md)",
  ],
];

const OPTIONS: [string, string][] = [
  ["--mode <name>", "How to run: print, json, or a mode an extension adds"],
  ["-p, --print", "Print mode: run the prompts and print the final answer"],
  ["-e, --extension <path>", "Load an extension, or a package source for this run only (repeatable)"],
  ["--provider <name>", "Model provider"],
  ["--model <id>", "Model id, or provider/model"],
  ["--api-key <key>", "API key of the --provider (or --model provider/id) for this run only"],
  ["--thinking <level>", "off, minimal, low, medium, high, xhigh or max (the model's highest)"],
  ["-t, --tools <a,b,...>", "Exactly these active tools"],
  ["-nt, --no-tools", "No active tools"],
  ["-xt, --exclude-tools <a,b,...>", "Leave these tools (names or * patterns) inactive"],
  [
    "-nbt, --no-builtin-tools",
    "Leave the built-in tools (read, bash, edit, write, ...) inactive; others stay",
  ],
  ["--models <a,b,...>", "Models to cycle through: provider/id, id, part of a name, or * patterns"],
  ["--session <path|id>", "Open a session file, or a session id (or unique prefix)"],
  ["-c, --continue", "Continue the most recent session of this folder"],
  ["-r, --resume", "Pick an earlier session of this folder to resume (interactive mode)"],
  ["--no-session", "Keep the session in memory only"],
  ["--session-dir <dir>", "Where session files go"],
  ["--session-id <id>", "This folder's session with that id, created with the id when there is none"],
  ["--fork <path|id>", "Start a new session of this folder with a copy of that session (file, id or prefix)"],
  ["-n, --name <name>", "The session's display name"],
  ["--system-prompt <text>", "Replace the system prompt's base (as SYSTEM.md does)"],
  [
    "--append-system-prompt <text|file>",
    "Append text, or a file's contents, to the system prompt (repeatable)",
  ],
  [
    "-ne, --no-extensions",
    "Load no found extensions (folders, settings, packages); built-ins and -e still load",
  ],
  ["-ns, --no-skills", "No skills (leaves out builtin:skills)"],
  ["-np, --no-prompt-templates", "No prompt templates (leaves out builtin:prompt-templates)"],
  ["--no-themes", "No theme files (leaves out builtin:themes)"],
  ["--no-mcp", "No MCP servers or tools (leaves out builtin:mcp)"],
  ["-nc, --no-context-files", "No AGENTS.md or CLAUDE.md in the system prompt"],
  ["--skill <path>", "Load a skill file or folder besides the ones found (repeatable)"],
  ["--prompt-template <path>", "Load a prompt template file or folder besides the ones found (repeatable)"],
  ["--theme <path>", "Load a theme file or folder besides the ones found (repeatable)"],
  ["--use-theme <name>", "The theme of this run (the theme setting)"],
  ["--offline", "Install no missing package at start-up"],
  ["--verbose, --tui-mode <mode>", "Accepted for pi's command lines; they change nothing here"],
  ["--max-turns <n>", "Print and JSON runs: stop with an error after n turns"],
  [
    "--trust-project, --no-trust-project",
    "Trust, or do not trust, this project's own resources (also -a, --approve, -na, --no-approve)",
  ],
  ["--list-models [search]", "List the models that can be used, as a table"],
  ["--export <file> [output]", "Write a session file as HTML (as /export does) and exit"],
  ["--list-extensions", "List loaded extensions and the flags they add"],
  ["-v, --version", "Print the version"],
  ["-h, --help", "Show this help"],
];

/** The built-ins' flags and modes as their manifest declares them, in load order. */
export function builtinHelp(): { flags: HelpFlag[]; modes: HelpMode[] } {
  return {
    flags: BUILTIN_MANIFEST.flatMap((b) => b.flags.map((f) => ({ ...f, owner: `builtin:${b.name}` }))),
    modes: BUILTIN_MANIFEST.flatMap((b) => b.modes.map((m) => ({ ...m, owner: `builtin:${b.name}` }))),
  };
}

/**
 * Whether a session would load more than the built-ins, or fewer: `-e`, `--approve` (project extensions), a
 * personal extension folder with anything in it, or an `extensions` or `packages` list in the personal settings
 * (paths, packages, or `-builtin:<name>` entries that disable built-ins). A settings file that cannot be read counts too, so the
 * session reports it.
 */
export function helpNeedsSession(args: CliArgs, env: NodeJS.ProcessEnv = process.env): boolean {
  if (args.extensions.length > 0 || args.approve === true) return true;
  const agentDir = cliAgentDir(env);
  const folder = join(agentDir, "extensions");
  if (existsSync(folder) && readdirSync(folder).some((name) => !name.startsWith("."))) return true;
  const settings = join(agentDir, "settings.json");
  if (!existsSync(settings)) return false;
  try {
    const { extensions, packages } = JSON.parse(readFileSync(settings, "utf8")) as Record<string, unknown>;
    const listed = (value: unknown) => (Array.isArray(value) ? value.length > 0 : value !== undefined);
    return listed(extensions) || listed(packages);
  } catch {
    return true;
  }
}

export function helpText(version: string, flags: readonly HelpFlag[], modes: readonly HelpMode[]): string {
  const rows = (list: [string, string][]) => {
    const width = Math.max(...list.map(([left]) => left.length)) + 2;
    return list.map(([left, right]) => `  ${left.padEnd(width)}${right}`).join("\n");
  };
  const sections = [
    `knightcode ${version}: an extensible AI coding agent for the terminal`,
    "Usage:\n  knightcode [options] [@file ...] [prompt ...]\n  knightcode <command> [args]  (-l: the project's settings)",
    `Commands:\n${rows(COMMANDS)}`,
    `Options:\n${rows(OPTIONS)}`,
  ];
  if (modes.length > 0) {
    sections.push(`Modes:\n${rows(modes.map((m) => [m.name, `${m.description ?? ""} (${m.owner})`]))}`);
  }
  if (flags.length > 0) {
    sections.push(
      `Extension flags:\n${rows(
        flags.map((f) => [
          `--${f.name}${f.type === "string" ? " <value>" : ""}`,
          `${f.description ?? ""} (${f.owner})`,
        ]),
      )}`,
    );
  }
  sections.push(
    "Environment:\n  KNIGHTCODE_AGENT_DIR     Agent directory (default ~/.knightcode/agent)\n" +
      "  ANTHROPIC_API_KEY, OPENAI_API_KEY   Keys of the built-in providers",
  );
  sections.push(
    'Offline quick start:\n  knightcode --provider scripted --script examples/scripts/hello.json -p "Say hello"',
  );
  return `${sections.join("\n\n")}\n`;
}
