/** Which service each ExtensionAPI method delegates to. The type makes the table cover every method. */
import type { ExtensionAPI } from "../api/extension-api.js";
import type { ApiService } from "../container/core-tokens.js";
import { coreTokens } from "../container/core-tokens.js";
import type { Token } from "../container/tokens.js";

export type RoutedMethod = Exclude<keyof ExtensionAPI, "extension" | "events" | "on">;

export interface ApiRoute {
  token: Token<ApiService>;
  /** Only legal while the factory runs (e.g. flags are parsed at startup). */
  loadOnly?: boolean;
}

const t = coreTokens;

export const apiRoutes: Readonly<Record<RoutedMethod, ApiRoute>> = Object.freeze({
  registerTool: { token: t.tools },
  registerToolRenderer: { token: t.tools },
  getActiveTools: { token: t.tools },
  getAllTools: { token: t.tools },
  setActiveTools: { token: t.tools },
  registerCommand: { token: t.commands },
  registerShortcut: { token: t.commands },
  getCommands: { token: t.commands },
  registerFlag: { token: t.flags, loadOnly: true },
  getFlag: { token: t.flags },
  registerMessageRenderer: { token: t.renderers },
  registerEntryRenderer: { token: t.renderers },
  registerProvider: { token: t.models },
  unregisterProvider: { token: t.models },
  registerVirtualModel: { token: t.models },
  unregisterVirtualModel: { token: t.models },
  registerMcpServer: { token: t.mcpServers },
  unregisterMcpServer: { token: t.mcpServers },
  getMcpServers: { token: t.mcpServers },
  sendMessage: { token: t.agent },
  sendUserMessage: { token: t.agent },
  appendEntry: { token: t.agent },
  setSessionName: { token: t.agent },
  getSessionName: { token: t.agent },
  setLabel: { token: t.agent },
  setModel: { token: t.agent },
  getThinkingLevel: { token: t.agent },
  setThinkingLevel: { token: t.agent },
  exec: { token: t.process },
  getSettings: { token: t.settings },
  registerMode: { token: t.modes },
});
