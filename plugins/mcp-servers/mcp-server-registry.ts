/**
 * MCP servers registered by extensions for the current session. Connecting them is the MCP built-in's job (or
 * a replacement's); this registry only keeps the registrations and announces changes with `mcp_servers_change`.
 * When no extension handles that event (builtin:mcp turned off and nothing in its place), a registration would
 * silently do nothing, so each is reported as an extension error of the extension that made it: at session start
 * for registrations made while loading, at once for later ones.
 */
import {
  type Disposable,
  type ExtensionContext,
  type ExtensionInfo,
  type HookBus,
  KernelError,
  type McpServerConfig,
  type McpServerService,
  toDisposable,
} from "../../kernel/index.js";
import { validateMcpEntry } from "../settings/mcp-config.js";

const SERVER_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$/;

export class McpServerRegistry implements McpServerService {
  private readonly servers = new Map<
    string,
    { config: McpServerConfig; owner: string; info: ExtensionInfo }
  >();
  private started = false;

  constructor(
    private readonly bus: HookBus,
    private readonly context: () => ExtensionContext,
    private readonly reportError: (owner: ExtensionInfo, event: string, error: Error) => void = () => {},
  ) {
    bus.on(
      "session_start",
      () => {
        this.started = true;
        for (const [name, entry] of this.servers) this.checkConnected(name, entry.info);
      },
      { id: "core:mcp-servers", order: Number.MAX_SAFE_INTEGER },
    );
  }

  private checkConnected(name: string, owner: ExtensionInfo): void {
    if (this.bus.has("mcp_servers_change")) return;
    this.reportError(
      owner,
      "registerMcpServer",
      new Error(`MCP server "${name}" is registered but no MCP extension is loaded to connect it`),
    );
  }

  registerMcpServer(owner: ExtensionInfo, name: string, config: McpServerConfig): Disposable {
    if (typeof name !== "string" || !SERVER_NAME.test(name)) {
      throw new KernelError(
        "KC_ERR_INVALID_MCP_SERVER",
        `${owner.id}: MCP server name ${JSON.stringify(name)} is invalid`,
      );
    }
    if (!config || typeof config !== "object" || (!config.command && !config.url)) {
      throw new KernelError(
        "KC_ERR_INVALID_MCP_SERVER",
        `${owner.id}: MCP server "${name}" needs a command (stdio) or a url (HTTP)`,
      );
    }
    // The rest of an mcp.json entry's rules (extensions.md: invalid configs throw).
    const problem = validateMcpEntry(name, config, "extension");
    if (problem) {
      throw new KernelError("KC_ERR_INVALID_MCP_SERVER", `${owner.id}: MCP server "${name}": ${problem}`);
    }
    const existing = this.servers.get(name);
    if (existing && existing.owner !== owner.id) {
      throw new KernelError(
        "KC_ERR_MCP_SERVER_CONFLICT",
        `${owner.id}: MCP server "${name}" is already registered by ${existing.owner}`,
      );
    }
    const entry = { config, owner: owner.id, info: owner };
    this.servers.set(name, entry);
    this.changed();
    if (this.started) this.checkConnected(name, owner);
    return toDisposable(() => {
      if (this.servers.get(name) === entry) {
        this.servers.delete(name);
        this.changed();
      }
    }, `${owner.id} MCP server ${name}`);
  }

  unregisterMcpServer(owner: ExtensionInfo, name: string): void {
    const existing = this.servers.get(name);
    if (!existing) return;
    if (existing.owner !== owner.id) {
      throw new KernelError(
        "KC_ERR_MCP_SERVER_CONFLICT",
        `${owner.id} cannot unregister "${name}" of ${existing.owner}`,
      );
    }
    this.servers.delete(name);
    this.changed();
  }

  getMcpServers(): { name: string; config: McpServerConfig; owner: string }[] {
    return [...this.servers].map(([name, { config, owner }]) => ({ name, config, owner }));
  }

  private changed(): void {
    if (!this.bus.has("mcp_servers_change")) return;
    void this.bus.emit("mcp_servers_change", { servers: [...this.servers.keys()] }, this.context());
  }
}
