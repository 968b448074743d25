/**
 * The tokens of the standard services, with the interface each one's consumers rely on. The `core.*` tokens of
 * the kernel are the narrow faces these services show to the ExtensionAPI; the tokens here are what the agent
 * loop, the SDK and hosts use. A host swaps a service by providing one of these tokens again before the first
 * session (`kernel.provide(definePlugin({ provides: serviceTokens.sessionStore, ... }))`): everything that needs
 * the service resolves it through its token, so the replacement is used everywhere.
 */

import type {
  BranchTail,
  McpConfigAccess,
  PackageResource,
  SavedTrust,
  SessionEntry,
  SessionHeader,
} from "../kernel/index.js";
import { rootToken as root, sessionToken as session } from "../kernel/index.js";
import type { AgentSession } from "./agent-loop/agent-session.js";
import type { CommandRegistry } from "./command-registry/command-registry.js";
import type { FlagRegistry } from "./flag-registry/flag-registry.js";
import type { ModeRegistry } from "./mode-registry/mode-registry.js";
import type { ModelService } from "./model-registry/model-service.js";
import type { ProviderStore } from "./model-registry/provider-store.js";
import type { ResolvedResources, ResolveOptions } from "./packages/package-manager.js";
import type { SessionCatalog } from "./session-store/catalog.js";
import type {
  CreateSessionOptions,
  OpenSessionOptions,
  SessionInfo,
  SessionLocation,
  SessionManager,
} from "./session-store/session-manager.js";
import type { LoadSettingsOptions, Settings } from "./settings/settings.js";
import type { SettingsWrite } from "./settings/settings-write.js";
import type { ToolSettingValue, ToolsConfigRead } from "./settings/tools-config.js";
import type { ProjectTrustDecision, ResolveProjectTrustOptions } from "./settings/trust.js";
import type { ToolRegistry } from "./tool-registry/tool-registry.js";
import type { ToolSettingsRegistry } from "./tool-settings/tool-settings-registry.js";

/** Opens session logs. The standard store keeps JSONL files; `SessionManager.inMemory` serves `--no-session`. */
export interface SessionStore {
  create(options: CreateSessionOptions): SessionManager;
  open(path: string, options?: OpenSessionOptions): SessionManager;
  /** The most recent session of `cwd`, or a new one. */
  continueRecent(options: CreateSessionOptions): SessionManager;
  /** `id`: the session's id instead of a random one (`--session-id` with `--no-session`). */
  inMemory(cwd: string, id?: string): SessionManager;
  /** pi's `--fork`: a new session of `options.cwd` holding every entry of the session file `source`. */
  forkFrom?(source: string, options: CreateSessionOptions): SessionManager;
  list(options: SessionLocation & { cwd: string }): SessionInfo[];
  /** Sessions of every cwd, most recently active first. */
  listAll(options: SessionLocation): SessionInfo[];
  /** The path of the session whose id starts with `idOrPrefix`. */
  findById(idOrPrefix: string, options: SessionLocation): string;
  /** One session file's summary; undefined when it is not a readable session. */
  info(path: string): SessionInfo | undefined;
  /** Where the archived sessions of a location are kept (a location of their own: list and find them there). */
  archiveLocation(options: SessionLocation): SessionLocation;
  /** Moves a session into the archive; returns its new path. */
  archive(path: string, options: SessionLocation): string;
  /** Moves an archived session back; returns its path. */
  unarchive(path: string, options: SessionLocation): string;
  /** Deletes an archived session. */
  remove(path: string, options: SessionLocation): void;
  /**
   * The listing of a location kept in memory (file names and modification times, watched for changes) and read
   * only as far as a page needs: for hosts that list thousands of sessions often. A new one per call; the caller
   * closes it.
   */
  catalog(options: SessionLocation): SessionCatalog;
  /** A session file's header; undefined when it is not a readable session. */
  header(path: string): SessionHeader | undefined;
  /** The header and the active branch of a stored session, read without opening it (no lock taken). */
  readBranch(path: string): { header: SessionHeader; entries: SessionEntry[] };
  /** The last `count` entries of the active branch, without parsing the rest of the file (no lock taken). */
  readBranchTail(path: string, count: number): BranchTail;
  /** Writes a new session next to `path` holding `entries` (default: its active branch), `path` as its parent. */
  fork(path: string, entries?: readonly SessionEntry[]): { path: string; id: string };
  /** Points a session nobody has open at another working folder (its header's `cwd`). */
  setCwd(path: string, cwd: string): void;
}

/** Reads and merges the settings files (global, then the project's once it is trusted) with the host's overrides. */
export interface SettingsLoader {
  load(options: LoadSettingsOptions): Settings;
  /** Sets one dotted key of the personal or a trusted project's file (`KC_ERR_SETTINGS_WRITE` when it cannot). */
  write(change: SettingsWrite): { path: string; version: string };
}

/** Decides whether a project's resources may load: flag, handlers, saved decision, dialog, default. */
export interface TrustResolver {
  resolve(options: ResolveProjectTrustOptions): Promise<ProjectTrustDecision>;
  /** The decision saved for `cwd` or its closest ancestor. */
  saved(agentDir: string, cwd: string, warn?: (message: string) => void): SavedTrust | undefined;
  save(agentDir: string, cwd: string, trusted: boolean): void;
  /** The protected inputs present in `cwd` (what trust would load). */
  protectedInputs(cwd: string): Promise<string[]>;
}

/** `tools.json`: the raw file; which names are known comes from the extensions that declared them. */
export interface ToolConfigStore {
  read(agentDir: string): ToolsConfigRead;
  /** Sets one key (`null` removes it) and replaces the file atomically; a malformed file is left alone. */
  write(agentDir: string, name: string, key: string, value: ToolSettingValue | null): void;
}

/** The `mcp.json` files of a folder: the personal one, and the project's when `projectTrusted`. */
export interface McpConfigStore {
  files(options: { agentDir: string; cwd: string; projectTrusted: boolean }): McpConfigAccess;
}

/** Packages and resource folders (the `packages` and resource settings). */
export interface PackageService {
  resolve(options: { agentDir: string; cwd: string } & ResolveOptions): Promise<ResolvedResources>;
  setEnabled(options: { agentDir: string; cwd: string }, resource: PackageResource, enabled: boolean): void;
}

export const serviceTokens = Object.freeze({
  sessionStore: root<SessionStore>("services.sessionStore", "opens and lists session logs"),
  settings: root<SettingsLoader>("services.settings", "loads the merged settings"),
  trust: root<TrustResolver>("services.trust", "decides project trust"),
  toolConfig: root<ToolConfigStore>("services.toolConfig", "reads and writes tools.json"),
  mcpConfig: root<McpConfigStore>("services.mcpConfig", "reads and writes the mcp.json files"),
  packages: root<PackageService>("services.packages", "resolves packages and resource folders"),
  providers: root<ProviderStore>("models.providers", "process-wide provider registrations"),
  toolRegistry: session<ToolRegistry>("services.toolRegistry", "the session's tools"),
  models: session<ModelService>("services.models", "models, providers and requests of the session"),
  commandRegistry: session<CommandRegistry>("services.commandRegistry", "commands and shortcuts"),
  flagRegistry: session<FlagRegistry>("services.flagRegistry", "flags extensions registered"),
  modeRegistry: session<ModeRegistry>("services.modeRegistry", "host modes"),
  agent: session<AgentSession>("agent.session", "the agent loop"),
  toolSettings: session<ToolSettingsRegistry>(
    "services.toolSettings",
    "the tools.json entries the session's extensions declared",
  ),
});
