/**
 * The services the ExtensionAPI delegates to, one interface per container token (`coreTokens` in
 * kernel/container/core-tokens.ts). A plugin that replaces a service implements its interface; the facade calls
 * exactly these methods, passing the calling extension (`owner`) only where the service uses it.
 * Every registration returns a Disposable that undoes exactly that registration.
 */
import type { TSchema } from "@sinclair/typebox";
import type { ModelInfo } from "./context.js";
import type {
  CommandDefinition,
  CommandInfo,
  EntryRenderer,
  ExecOptions,
  ExecResult,
  ExtensionInfo,
  FlagDefinition,
  McpServerConfig,
  MessageRenderer,
  ProviderConfig,
  RegistrationOptions,
  RoutedModelDefinition,
  SendMessageInput,
  SendMessageOptions,
  ShortcutDefinition,
  VirtualModelConfig,
} from "./extension-api.js";
import type { ToolSettingsDefinition } from "./host.js";
import type { ImageContent, TextContent, ThinkingLevel } from "./messages.js";
import type { ModeDefinition } from "./modes.js";
import type { ToolDefinition, ToolInfo, ToolRendererResolver, ToolRenderers } from "./tools.js";

/** Undoes one registration. Idempotent. */
export interface Disposable {
  dispose(): void | Promise<void>;
}

/** `core.tools`: the session's tools and tool renderers. */
export interface ToolService {
  registerTool(
    owner: ExtensionInfo,
    tool: ToolDefinition<TSchema, unknown>,
    options?: RegistrationOptions,
  ): Disposable;
  registerToolRenderer(owner: ExtensionInfo, resolver: ToolRendererResolver): Disposable;
  getToolRenderers(toolName: string): ToolRenderers | undefined;
  getActiveTools(): string[];
  getAllTools(): ToolInfo[];
  setActiveTools(names: string[]): void;
}

/** `core.commands`: `/` commands and shortcuts. */
export interface CommandService {
  registerCommand(owner: ExtensionInfo, name: string, command: CommandDefinition): Disposable;
  registerShortcut(owner: ExtensionInfo, key: string, shortcut: ShortcutDefinition): Disposable;
  getCommands(): CommandInfo[];
}

/** `core.flags`: command-line flags extensions register (only while their factory runs). */
export interface FlagService {
  registerFlag(owner: ExtensionInfo, name: string, flag: FlagDefinition): Disposable;
  /** An extension reads only its own flags. */
  getFlag(owner: ExtensionInfo, name: string): boolean | string | undefined;
}

/** `core.renderers`: renderers for custom messages and entries. */
export interface RendererService {
  registerMessageRenderer(owner: ExtensionInfo, customType: string, renderer: MessageRenderer): Disposable;
  registerEntryRenderer(owner: ExtensionInfo, customType: string, renderer: EntryRenderer): Disposable;
  getMessageRenderer(customType: string): MessageRenderer | undefined;
  getEntryRenderer(customType: string): EntryRenderer | undefined;
}

/** `core.models`: providers (process-wide) and virtual models (per session). */
export interface ModelApiService {
  registerProvider(
    owner: ExtensionInfo,
    name: string,
    config: ProviderConfig,
    options?: RegistrationOptions,
  ): Disposable;
  unregisterProvider(name: string): void;
  /** `(owner, name, config)` lists `virtual/<name>`; `(owner, definition)` pi's routed `provider/id`. */
  registerVirtualModel(
    owner: ExtensionInfo,
    name: string | RoutedModelDefinition,
    config?: VirtualModelConfig,
  ): Disposable;
  /** `(name)` removes `virtual/<name>`; `(provider, id)` a routed model. */
  unregisterVirtualModel(nameOrProvider: string, id?: string): void;
}

/** `core.mcpServers`: MCP server registrations. */
export interface McpServerService {
  registerMcpServer(owner: ExtensionInfo, name: string, config: McpServerConfig): Disposable;
  unregisterMcpServer(owner: ExtensionInfo, name: string): void;
  getMcpServers(): { name: string; config: McpServerConfig; owner: string }[];
}

/** `core.agent`: the session's messages, entries, name, model and thinking level. */
export interface AgentApiService {
  sendMessage(owner: ExtensionInfo, message: SendMessageInput, options?: SendMessageOptions): void;
  sendUserMessage(
    content: string | (TextContent | ImageContent)[],
    options?: { deliverAs?: "steer" | "followUp" },
  ): void;
  /** `owner`: the extension that appends, blamed when its data cannot be written as JSON. */
  appendEntry(customType: string, data?: unknown, owner?: ExtensionInfo): void;
  setSessionName(name: string | undefined): void;
  getSessionName(): string | undefined;
  setLabel(entryId: string, label: string | undefined): void;
  setModel(owner: ExtensionInfo, model: ModelInfo): Promise<boolean>;
  getThinkingLevel(): ThinkingLevel;
  setThinkingLevel(level: ThinkingLevel): void;
}

/** `core.process`: `exec()`. */
export interface ProcessApiService {
  exec(command: string, args: string[], options?: ExecOptions): Promise<ExecResult>;
}

/** `core.settings`: the merged settings, as an extension sees them. */
export interface SettingsApiService {
  getSettings(): Record<string, unknown>;
}

/** `core.toolSettings`: the `tools.json` entries extensions declare (`registerToolSettings`). */
export interface ToolSettingsService {
  registerToolSettings(owner: ExtensionInfo, name: string, definition: ToolSettingsDefinition): Disposable;
}

/** `core.modes`: host modes. */
export interface ModeService {
  registerMode(owner: ExtensionInfo, name: string, mode: ModeDefinition): Disposable;
}
