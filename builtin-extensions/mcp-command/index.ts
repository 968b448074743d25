/**
 * builtin:mcp-command — `/mcp`, a view of the session's MCP client: whatever provides `mcpClientService`
 * (`builtin:mcp`, or an extension that replaces it). So a replacement client's servers, tools, prompts and resources
 * show here without a command of its own, and the actions work as far as the client offers them (its optional
 * `reconnect`, `setEnabled`, `signIn`, `signOut`). See docs/mcp.md.
 *
 *   /mcp                                        every server: state, transport, tools, where it comes from
 *   /mcp <name>                                 one server with its tools, prompts and resources
 *   /mcp enable|disable|reconnect|login|logout <name>
 */
import {
  type ExtensionAPI,
  type ExtensionCommandContext,
  errorMessage,
  type McpClient,
  type McpServerSummary,
  mcpClientService,
} from "@knightcodeai/cli/kit";

export const MCP_ACTIONS = ["enable", "disable", "reconnect", "login", "logout"] as const;
type Action = (typeof MCP_ACTIONS)[number];

const NO_CLIENT =
  "No MCP client in this session: builtin:mcp is switched off and no extension provides knightcode.mcpClient.";

export default function mcpCommand(knightcode: ExtensionAPI): void {
  knightcode.registerCommand("mcp", {
    description:
      "MCP servers: /mcp lists them, /mcp <name> shows one, /mcp enable|disable|reconnect|login|logout <name>",
    getArgumentCompletions(prefix) {
      const names =
        knightcode.services
          .get(mcpClientService)
          ?.servers()
          .map((s) => s.name) ?? [];
      return [...MCP_ACTIONS, ...names].filter((w) => w.startsWith(prefix)).map((value) => ({ value }));
    },
    handler: async (args, ctx) => {
      const client = knightcode.services.get(mcpClientService);
      if (!client) return fail(ctx, NO_CLIENT);
      const [action, name] = args.trim().split(/\s+/).filter(Boolean);
      const servers = client.servers();
      if (!action) {
        ctx.ui.notify(formatList(servers), "info");
        return { servers };
      }
      if (!name && servers.some((s) => s.name === action)) {
        ctx.ui.notify(await details(knightcode, client, action), "info");
        return { servers: servers.filter((s) => s.name === action) };
      }
      if (!isAction(action)) {
        return fail(
          ctx,
          `Unknown /mcp action "${action}": use ${MCP_ACTIONS.join(", ")} followed by a server name.`,
        );
      }
      const server = servers.find((s) => s.name === name);
      if (!server) {
        return fail(
          ctx,
          `No MCP server named "${name ?? ""}". Servers: ${servers.map((s) => s.name).join(", ") || "none"}.`,
        );
      }
      const problem = await act(knightcode, client, action, server, ctx);
      if (problem) return fail(ctx, problem);
      const summary = client.servers().find((s) => s.name === server.name);
      if (!summary) return { servers: [] };
      ctx.ui.notify(formatList([summary]), summary.error ? "warning" : "info");
      return { servers: [summary] };
    },
  });
}

function isAction(word: string): word is Action {
  return (MCP_ACTIONS as readonly string[]).includes(word);
}

function fail(ctx: ExtensionCommandContext, message: string): { error: string } {
  ctx.ui.notify(message, "error");
  return { error: message };
}

/** Runs one action; returns what went wrong, or undefined. */
async function act(
  knightcode: ExtensionAPI,
  client: McpClient,
  action: Action,
  server: McpServerSummary,
  ctx: ExtensionCommandContext,
): Promise<string | undefined> {
  const name = server.name;
  const cannot = (what: string) => `The MCP client of this session cannot ${what}.`;
  try {
    switch (action) {
      case "reconnect":
        if (!client.reconnect) return cannot("reconnect a server");
        await client.reconnect(name);
        return undefined;
      case "enable":
      case "disable": {
        if (!client.setEnabled) return cannot(`${action} a server`);
        const enabled = action === "enable";
        let saved: { savedIn?: string };
        try {
          saved = await client.setEnabled(name, enabled);
        } catch (error) {
          return `Could not save the change: ${errorMessage(error)}`;
        }
        ctx.ui.notify(
          `MCP server "${name}" ${enabled ? "enabled" : "disabled"}${saved.savedIn ? ` (saved in ${saved.savedIn})` : " for this session (registered by an extension, nothing to save)"}.`,
          "info",
        );
        return undefined;
      }
      case "logout": {
        if (server.transport === "stdio") return notHttp(name);
        if (!client.signOut) return cannot("sign out of a server");
        const had = await client.signOut(name);
        ctx.ui.notify(had ? `Signed out of "${name}".` : `No stored sign-in for "${name}".`, "info");
        return undefined;
      }
      case "login": {
        if (server.transport === "stdio") return notHttp(name);
        if (!client.signIn) return cannot("sign in to a server");
        if (!ctx.hasUI) return `Signing in to "${name}" needs a browser and an interactive session.`;
        try {
          await client.signIn(name, {
            ...(ctx.signal ? { signal: ctx.signal } : {}),
            show: (url) => {
              ctx.ui.notify(`Open this address in a browser to sign in to "${name}": ${url.href}`, "info");
              if (openBrowserSetting(knightcode.getSettings())) void openBrowser(url.href);
            },
          });
        } catch (error) {
          return `Sign-in to "${name}" failed: ${errorMessage(error)}`;
        }
        return undefined;
      }
    }
  } catch (error) {
    return errorMessage(error);
  }
}

function notHttp(name: string): string {
  return `MCP server "${name}" is not an HTTP server; there is nothing to sign in to.`;
}

/** `/mcp <name>`: the server's tools, prompts and resources, each asked of the client. */
async function details(knightcode: ExtensionAPI, client: McpClient, name: string): Promise<string> {
  const summary = client.servers().find((s) => s.name === name)!;
  const lines = [formatList([summary])];
  if (summary.state !== "connected") return lines.join("\n");
  const [tools, prompts, resources] = await Promise.all([
    client.listTools(name).catch((e: unknown) => errorMessage(e)),
    client.listPrompts(name).catch((e: unknown) => errorMessage(e)),
    client.listResources(name).catch((e: unknown) => errorMessage(e)),
  ]);
  const commands = new Set(knightcode.getCommands().map((c) => c.name));
  const prompt = (p: string) => {
    const command = `mcp__${clean(name)}__${clean(p)}`;
    return commands.has(command) ? `/${command}` : p;
  };
  const list = <T>(items: T[] | string, show: (item: T) => string) =>
    typeof items === "string" ? `(failed: ${items})` : items.map(show).join(", ") || "none";
  lines.push(`  tools: ${list(tools, (t) => t.name)}`);
  lines.push(`  prompts: ${list(prompts, (p) => prompt(p.name))}`);
  lines.push(`  resources: ${list(resources, (r) => r.uri)}`);
  return lines.join("\n");
}

/** How MCP clients name a prompt's command (`mcp__<server>__<prompt>`), characters model APIs refuse as `_`. */
function clean(name: string): string {
  return name.replace(/[^A-Za-z0-9_-]/g, "_") || "_";
}

export function formatList(list: McpServerSummary[]): string {
  if (list.length === 0) return "No MCP servers. Add them to mcp.json (see docs/mcp.md).";
  return list
    .map((s) => {
      const from = s.source.kind === "file" ? s.source.path : `registered by ${s.source.owner}`;
      const lines = [`${s.name}: ${s.state}, ${s.transport ?? "?"}, ${s.tools} tools (${from})`];
      if (s.overrides.length > 0) lines.push(`  overrides the registration of ${s.overrides.join(", ")}`);
      if (s.error) lines.push(`  error: ${s.error}`);
      if (s.error && s.stderr.length > 0) lines.push(...s.stderr.slice(-5).map((l) => `  stderr: ${l}`));
      return lines.join("\n");
    })
    .join("\n");
}

function openBrowserSetting(settings: Record<string, unknown>): boolean {
  return (settings.mcp as { openBrowser?: unknown } | undefined)?.openBrowser !== false;
}

/** Best effort: the address is also shown, so a failure to open a browser loses nothing. */
async function openBrowser(url: string): Promise<void> {
  const command =
    process.platform === "darwin" ? "open" : process.platform === "win32" ? "explorer" : "xdg-open";
  try {
    const { spawn } = await import("node:child_process");
    const child = spawn(command, [url], { detached: true, stdio: "ignore" });
    child.on("error", () => {});
    child.unref();
  } catch {
    // No opener on this machine: the person uses the address shown.
  }
}
