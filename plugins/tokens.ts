/**
 * The tokens of the standard services, with the interface each one's consumers rely on. The `core.*` tokens of
 * the kernel are the narrow faces these services show to the ExtensionAPI; the tokens here are what the agent
 * loop, the SDK and hosts use. A host swaps a service by providing one of these tokens again before the first
 * session (`kernel.provide(definePlugin({ provides: serviceTokens.sessionStore, ... }))`): everything that needs
 * the service resolves it through its token, so the replacement is used everywhere.
 */
import { rootToken as root, sessionToken as session } from "../kernel/index.js";
import type { AgentSession } from "./agent-loop/agent-session.js";
import type { CommandRegistry } from "./command-registry/command-registry.js";
import type { FlagRegistry } from "./flag-registry/flag-registry.js";
import type { ModeRegistry } from "./mode-registry/mode-registry.js";
import type { ModelService } from "./model-registry/model-service.js";
import type { ProviderStore } from "./model-registry/provider-store.js";
import type {
  CreateSessionOptions,
  OpenSessionOptions,
  SessionInfo,
  SessionLocation,
  SessionManager,
} from "./session-store/session-manager.js";
import type { LoadSettingsOptions, Settings } from "./settings/settings.js";
import type { ProjectTrustDecision, ResolveProjectTrustOptions } from "./settings/trust.js";
import type { ToolRegistry } from "./tool-registry/tool-registry.js";

/** Opens session logs. The standard store keeps JSONL files; `SessionManager.inMemory` serves `--no-session`. */
export interface SessionStore {
  create(options: CreateSessionOptions): SessionManager;
  open(path: string, options?: OpenSessionOptions): SessionManager;
  /** The most recent session of `cwd`, or a new one. */
  continueRecent(options: CreateSessionOptions): SessionManager;
  inMemory(cwd: string): SessionManager;
  list(options: SessionLocation & { cwd: string }): SessionInfo[];
  /** The path of the session whose id starts with `idOrPrefix`. */
  findById(idOrPrefix: string, options: SessionLocation): string;
}

/** Reads and merges the settings files (global, then the project's once it is trusted) with the host's overrides. */
export interface SettingsLoader {
  load(options: LoadSettingsOptions): Settings;
}

/** Decides whether a project's resources may load: flag, handlers, saved decision, dialog, default. */
export interface TrustResolver {
  resolve(options: ResolveProjectTrustOptions): Promise<ProjectTrustDecision>;
}

export const serviceTokens = Object.freeze({
  sessionStore: root<SessionStore>("services.sessionStore", "opens and lists session logs"),
  settings: root<SettingsLoader>("services.settings", "loads the merged settings"),
  trust: root<TrustResolver>("services.trust", "decides project trust"),
  providers: root<ProviderStore>("models.providers", "process-wide provider registrations"),
  toolRegistry: session<ToolRegistry>("services.toolRegistry", "the session's tools"),
  models: session<ModelService>("services.models", "models, providers and requests of the session"),
  commandRegistry: session<CommandRegistry>("services.commandRegistry", "commands and shortcuts"),
  flagRegistry: session<FlagRegistry>("services.flagRegistry", "flags extensions registered"),
  modeRegistry: session<ModeRegistry>("services.modeRegistry", "host modes"),
  agent: session<AgentSession>("agent.session", "the agent loop"),
});
