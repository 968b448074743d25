/**
 * `knightcode mcp list|add|remove`: edits mcp.json from the shell, through the same file functions as `/mcp` and
 * the app-server's `mcp/*` methods (`@knightcodeai/cli/plugin`'s mcp-files: unlike the host face, it reads and
 * writes a project's file without asking for trust, since the person at the shell owns it). It never starts a
 * session or a server.
 *
 *   knightcode mcp list [--json]
 *   knightcode mcp add <name> [options] <url>
 *   knightcode mcp add <name> [options] -- <command> [args...]
 *   knightcode mcp add <name> [--project] --config '<json entry>'
 *   knightcode mcp remove <name> [--project]
 *
 * Options of `add`: `--project`/`-l` (the cwd's `.knightcode/mcp.json` instead of the agent dir's), `--env KEY=VALUE`,
 * `--header 'Name: value'`, `--exposure <exposure>`, `--timeout <ms>`, `--description <text>`, `--disabled`.
 */
import {
  addMcpServer,
  listMcpServers,
  mcpFilePaths,
  removeMcpServer,
  resolveAgentDir,
} from "@knightcodeai/cli/plugin";

export const MCP_USAGE = `Usage:
  knightcode mcp list [--json]
  knightcode mcp add <name> [options] <url>
  knightcode mcp add <name> [options] -- <command> [args...]
  knightcode mcp add <name> [--project] --config '<json entry>'
  knightcode mcp remove <name> [--project]

Options of add: --project (-l), --env KEY=VALUE, --header 'Name: value', --exposure <exposure>,
--timeout <ms>, --description <text>, --disabled. See docs/mcp.md.
`;

interface Output {
  out(text: string): void;
  err(text: string): void;
}

/** Runs the subcommand; returns the exit code. */
export function mcpCommand(argv: string[], io: Output, cwd = process.cwd()): number {
  const [action, ...rest] = argv;
  const agentDir = resolveAgentDir();
  try {
    switch (action) {
      case "list":
        return list(rest, agentDir, cwd, io);
      case "add":
        return add(rest, agentDir, cwd, io);
      case "remove":
        return remove(rest, agentDir, cwd, io);
      case undefined:
      case "help":
      case "--help":
      case "-h":
        io.out(MCP_USAGE);
        return action === undefined ? 2 : 0;
      default:
        io.err(`knightcode mcp: unknown action "${action}"\n${MCP_USAGE}`);
        return 2;
    }
  } catch (error) {
    io.err(`knightcode mcp ${action}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

function list(args: string[], agentDir: string, cwd: string, io: Output): number {
  const unknown = args.filter((a) => a !== "--json");
  if (unknown.length > 0) return usage(io, `unexpected ${unknown.join(" ")}`);
  // The person at the shell may see the project's file; loading it in a session still needs trust.
  const listing = listMcpServers(agentDir, cwd, true);
  if (args.includes("--json")) {
    io.out(`${JSON.stringify(listing, null, 2)}\n`);
    return listing.errors.length > 0 ? 1 : 0;
  }
  for (const error of listing.errors) io.err(`warning: ${error}\n`);
  if (listing.servers.length === 0) {
    io.out(
      `No MCP servers in ${listing.paths.global}${listing.paths.project ? ` or ${listing.paths.project}` : ""}.\n`,
    );
    return 0;
  }
  for (const s of listing.servers) {
    const flags = [
      s.scope,
      s.transport,
      s.enabled ? undefined : "disabled",
      s.exposure,
      s.override ? "overridden by the project" : undefined,
    ]
      .filter(Boolean)
      .join(", ");
    io.out(`${s.name}  ${s.target}  (${flags})\n`);
    if (s.scope === "project") io.out("  loads only in a trusted project\n");
  }
  return listing.errors.length > 0 ? 1 : 0;
}

function add(args: string[], agentDir: string, cwd: string, io: Output): number {
  const [name, ...rest] = args;
  if (!name || name.startsWith("-")) return usage(io, "add needs a server name");
  let project = false;
  let json: string | undefined;
  const entry: Record<string, unknown> = {};
  const env: Record<string, string> = {};
  const headers: Record<string, string> = {};
  const positional: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const value = () => {
      const v = rest[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === "--") {
      positional.push(...rest.slice(i + 1));
      break;
    } else if (arg === "--project" || arg === "-l") project = true;
    else if (arg === "--config") json = value();
    else if (arg === "--env") {
      const [key, ...v] = value().split("=");
      if (!key || v.length === 0) throw new Error("--env takes KEY=VALUE");
      env[key] = v.join("=");
    } else if (arg === "--header") {
      const text = value();
      const colon = text.indexOf(":");
      if (colon <= 0) throw new Error("--header takes 'Name: value'");
      headers[text.slice(0, colon).trim()] = text.slice(colon + 1).trim();
    } else if (arg === "--exposure") entry.exposure = value();
    else if (arg === "--timeout") entry.timeout = Number(value());
    else if (arg === "--description") entry.description = value();
    else if (arg === "--disabled") entry.enabled = false;
    else if (arg.startsWith("-")) return usage(io, `unknown option ${arg}`);
    else positional.push(arg);
  }
  let config: unknown;
  if (json !== undefined) {
    if (positional.length > 0 || Object.keys(entry).length > 0) {
      return usage(io, "--config takes the whole entry; give no other options or command");
    }
    try {
      config = JSON.parse(json);
    } catch (error) {
      throw new Error(`--config is not valid JSON: ${(error as Error).message}`);
    }
  } else {
    const [first, ...more] = positional;
    if (!first) return usage(io, "add needs a URL or -- followed by a command");
    if (/^https?:\/\//i.test(first) && more.length === 0) entry.url = first;
    else {
      entry.command = first;
      if (more.length > 0) entry.args = more;
    }
    if (Object.keys(env).length > 0) entry.env = env;
    if (Object.keys(headers).length > 0) entry.headers = headers;
    config = entry;
  }
  const paths = mcpFilePaths(agentDir, cwd);
  const file = project ? paths.project : paths.global;
  const { replaced } = addMcpServer(file, project ? "project" : "global", name, config);
  io.out(`${replaced ? "Replaced" : "Added"} MCP server "${name}" in ${file}.\n`);
  if (project) io.out("It loads in sessions of this project once the project is trusted.\n");
  return 0;
}

function remove(args: string[], agentDir: string, cwd: string, io: Output): number {
  const name = args.find((a) => !a.startsWith("-"));
  const unknown = args.filter((a) => a.startsWith("-") && a !== "--project" && a !== "-l");
  if (!name || unknown.length > 0)
    return usage(io, unknown.length ? `unknown option ${unknown[0]}` : "remove needs a server name");
  const paths = mcpFilePaths(agentDir, cwd);
  const file = args.includes("--project") || args.includes("-l") ? paths.project : paths.global;
  const { removed } = removeMcpServer(file, name);
  if (!removed) {
    io.err(`knightcode mcp remove: no server "${name}" in ${file}\n`);
    return 1;
  }
  io.out(`Removed MCP server "${name}" from ${file}.\n`);
  return 0;
}

function usage(io: Output, problem: string): number {
  io.err(`knightcode mcp: ${problem}\n${MCP_USAGE}`);
  return 2;
}
