/**
 * The host face: the configuration and stores a mode or an extension may read and change, without reaching the
 * services' modules. Ordinary extensions get the narrow parts on `ctx` (`ctx.settings`, `ctx.trust`,
 * `ctx.toolSettings`, `ctx.mcpConfig`); a mode that serves many sessions (the app-server, an editor protocol) gets
 * all of it for any folder on `ModeContext.host`. The SDK implements both once, over the service tokens
 * (`serviceTokens` of `@knightcodeai/cli/plugin`), so a host that swaps the session store, the settings or the trust
 * service changes what every built-in sees.
 *
 * Failures of a write are `KernelError`s whose `data.reason` says what was wrong (see each method).
 */
import type { McpServerConfig } from "./extension-api.js";
import type { SessionEntry, SessionHeader } from "./session.js";

// ---- settings --------------------------------------------------------------------------------------

/** The two settings files: the personal one in the agent folder (`global`) and the project's. */
export type SettingsFileScope = "global" | "project";

/** Where the value in force comes from. */
export type SettingsOrigin = "default" | "global" | "project" | "override";

/** The merged settings of a folder, as a session there reads them. */
export interface SettingsSnapshot {
  /** The value in force at a dotted key path (`"retry.maxRetries"`), frozen when it is an object. */
  get(keyPath: string): unknown;
  /** Every merged setting as a deep-frozen object. */
  all(): Readonly<Record<string, unknown>>;
  /** The highest scope that contributes to the key, or undefined when it is not set. */
  origin(keyPath: string): SettingsOrigin | undefined;
  /** SHA-256 hex of each file as read; absent when the file does not exist or was not read. */
  readonly versions: Readonly<{ global?: string; project?: string }>;
  readonly paths: Readonly<{ global: string; project: string }>;
  /** Problems with the files, each naming the file (and line and column where it applies). */
  readonly warnings: readonly string[];
  /** Whether the project file was read (the folder is trusted). */
  readonly projectTrusted: boolean;
}

/** One change of a settings file. */
export interface SettingsChange {
  scope: SettingsFileScope;
  /** A dotted key path, e.g. `"retry.maxRetries"`. */
  key: string;
  /** The new value; `undefined` or `null` removes the key. */
  value: unknown;
  /** The file's version as last read (`SettingsSnapshot.versions`); a file changed since is not overwritten. */
  expectedVersion?: string;
}

/**
 * `ctx.settings`: the session's merged settings, and changes a person asked for. A change reads the file again,
 * sets the one key, checks the result against the settings schema and replaces the file atomically (its mode
 * kept); it applies to sessions that start or reload afterwards. Failures are `KC_ERR_SETTINGS_WRITE` with
 * `data.reason`: `key` (not a dotted key), `value` (wrong type for a known key), `parse` (the file is not valid JSON:
 * it is left alone), `untrusted` (a project change in a folder that is not trusted), `version` (changed since read).
 */
export interface SettingsAccess {
  read(): SettingsSnapshot;
  write(change: SettingsChange): { path: string; version: string };
}

/** `ModeContext.host.settings`: the same, for any folder. */
export interface HostSettings {
  /** What a session in `cwd` would read (the project's file only when the folder is trusted); no cwd: personal only. */
  read(cwd?: string): SettingsSnapshot;
  /** The built-in defaults of every known setting. */
  defaults(): Readonly<Record<string, unknown>>;
  /** As `SettingsAccess.write`; a `project` change needs `cwd`. */
  write(change: SettingsChange & { cwd?: string }): { path: string; version: string };
}

// ---- project trust ---------------------------------------------------------------------------------

/** A decision saved in `trust.json` for a folder or its closest ancestor. */
export interface SavedTrust {
  trusted: boolean;
  /** The folder the decision was saved for. */
  path: string;
  /** ISO time of the decision. */
  at: string;
}

/** `ctx.trust`: the project trust of the session's folder. */
export interface TrustAccess {
  /** The decision saved for this folder or its closest ancestor, if any. */
  saved(): SavedTrust | undefined;
  /** The protected inputs present here (`.knightcode/settings.json`, `.knightcode/extensions/`, ...), relative. */
  protectedInputs(): Promise<string[]>;
  /** Saves a decision for this folder (atomic, private file); it takes effect at the next reload. */
  save(trusted: boolean): void;
}

/** `ModeContext.host.trust`: the same, for any folder. */
export interface HostTrust {
  saved(cwd: string): SavedTrust | undefined;
  /**
   * Whether a session in `cwd` reads the project's own resources: the saved decision, else the personal
   * `defaultProjectTrust` (`always` → true, `never` → false); `null` when a session would ask.
   */
  trusted(cwd: string): boolean | null;
  protectedInputs(cwd: string): Promise<string[]>;
  save(cwd: string, trusted: boolean): void;
}

// ---- tool settings (tools.json) --------------------------------------------------------------------

/** A value as `tools.json` may hold it. */
export type ToolSettingValue = string | number | boolean | string[];

/**
 * What an extension declares with `knightcode.registerToolSettings(name, ...)`: a tool (or a feature such as the
 * permission gate) whose state and settings live in `tools.json`, listed by `/tools` and the app-server's
 * `tool/settings/read`. The extension reads them with `ctx.toolSettings.read(name)`.
 */
export interface ToolSettingsDefinition {
  description: string;
  /** The state when `tools.json` says nothing. */
  enabledByDefault: boolean;
  /** Known keys and what each means; other keys are kept and shown. Keys ending in `Key` are secrets. */
  settings?: Readonly<Record<string, string>>;
}

/** One declared tool as a listing shows it: settings masked (keys ending in `Key` show their last four characters). */
export interface ToolSettingsEntry {
  name: string;
  description: string;
  enabled: boolean;
  settings: Record<string, string>;
  /** The known keys and their meaning. */
  known: Readonly<Record<string, string>>;
  /** The extension that declared it. */
  owner: string;
}

export interface ToolSettingsListing {
  path: string;
  tools: ToolSettingsEntry[];
  /** `tools.json` exists but cannot be used (it names the file and the problem). */
  warning?: string;
}

/** One tool's settings as the file holds them (not masked): for the extension that uses them. */
export interface ToolSettingsRead {
  path: string;
  enabled: boolean;
  values: Readonly<Record<string, ToolSettingValue>>;
  /** The file is malformed: `values` is empty and `enabled` the default; a permission feature should fail closed. */
  warning?: string;
}

/**
 * `ctx.toolSettings` and `ModeContext.host.tools`: `tools.json`. `write` sets one key (`null` removes it) and
 * replaces the file atomically; it fails with `KC_ERR_TOOL_SETTINGS` whose `data.reason` is `unknown` (no extension
 * declared that tool), `key` (malformed key), `value` (`enabled` takes a boolean, other keys a string) or `config`
 * (the file is malformed and is left alone).
 */
export interface ToolSettingsAccess {
  list(): ToolSettingsListing;
  /** Read again only when the file changed, so it is cheap to call on every tool call. */
  read(name: string): ToolSettingsRead;
  write(name: string, key: string, value: string | boolean | null): void;
}

// ---- MCP configuration (mcp.json) ------------------------------------------------------------------

export type McpConfigScope = "global" | "project";

/** A server entry of an `mcp.json` file, as a client connects it (`${VAR}` expanded). */
export interface McpConfigServer {
  name: string;
  config: McpServerConfig;
  /** The file the entry came from. */
  path: string;
  scope: McpConfigScope;
}

/** One server as a listing describes it (`${VAR}` left as written, so no secret from the environment shows). */
export interface McpServerListing {
  name: string;
  scope: McpConfigScope;
  /** The file that defines it. */
  source: string;
  /** The project file that overrides this global entry, if any. */
  override?: string;
  transport: "stdio" | "http";
  /** The command line or the URL. */
  target: string;
  description?: string;
  enabled: boolean;
  exposure?: string;
}

export interface McpListing {
  servers: McpServerListing[];
  /** Problems with the files or entries, each naming the file. */
  errors: string[];
  paths: { global: string; project?: string };
}

/**
 * `ctx.mcpConfig` (the session's folder) and `ModeContext.host.mcp` (any folder): the `mcp.json` files. Every change
 * reads the file again, changes one entry and replaces the file atomically; a file that cannot be parsed is never
 * overwritten (the change fails with its error). The project file is read and written only in a trusted folder.
 */
export interface McpConfigAccess {
  /** The servers to connect: the personal file, then a trusted project's, which overrides entries of the same name. */
  servers(): { servers: McpConfigServer[]; warnings: string[] };
  list(): McpListing;
  paths(): { global: string; project: string };
  /** Checks an entry as the files take it; the problem, or undefined when it is valid. */
  validate(name: string, config: unknown, scope: McpConfigScope | "extension"): string | undefined;
  add(scope: McpConfigScope, name: string, config: McpServerConfig): { replaced: boolean };
  remove(scope: McpConfigScope, name: string): { removed: boolean };
  update(scope: McpConfigScope, name: string, change: Pick<McpServerConfig, "enabled" | "exposure">): void;
}

// ---- packages ---------------------------------------------------------------------------------------

export type PackageResourceKind = "extensions" | "skills" | "prompts" | "themes";

/** One resource a package or a resource folder offers, and whether it is on (`knightcode config`, `resource/list`). */
export interface PackageResource {
  type: PackageResourceKind;
  path: string;
  name: string;
  enabled: boolean;
  scope: "user" | "project" | "temporary";
  origin: "top-level" | "package";
  /** `auto` (a resource folder), `settings` (an entry of the kind's setting) or the package's source. */
  source: string;
}

/** `ModeContext.host.packages`: the packages and resource folders a session in a folder would load. */
export interface HostPackages {
  /**
   * The resources a session in `cwd` would find (no cwd: the personal ones), the project's only when the folder
   * is trusted; `untrusted` is the folder when its own were left out.
   */
  resources(cwd?: string): Promise<{ resources: PackageResource[]; warnings: string[]; untrusted?: string }>;
  /** Turns one resource on or off in the settings of its scope (`KC_ERR_PACKAGE` when it cannot). */
  setEnabled(resource: PackageResource, enabled: boolean, cwd?: string): void;
}

// ---- sessions ---------------------------------------------------------------------------------------

/** A stored session as a list shows it. */
export interface StoredSession {
  path: string;
  id: string;
  cwd: string;
  name?: string;
  /** The session this one continues or was forked from (its file). */
  parentSession?: string;
  created: Date;
  modified: Date;
  messageCount: number;
  firstMessage: string;
  /** Labels set on the session's entries (the latest ten). */
  labels?: string[];
}

/** A session as a page of a long listing shows it, with its file's modification time (the listing's order). */
export interface ListedSession extends StoredSession {
  fileModified: Date;
}

export interface SessionPageOptions {
  /** Only the sessions whose folder is `cwd`. */
  cwd?: string;
  /** The archive instead of the sessions in use. */
  archived?: boolean;
  /** The `nextCursor` of the page before (an unknown one is `KC_ERR_SESSION_CURSOR`). */
  cursor?: string;
  /** Sessions a page, 50 by default. */
  limit?: number;
  /**
   * Session files this process appends to now (its open sessions): their folders are looked at again on this call,
   * whatever the folder watchers reported so far.
   */
  writing?: readonly string[];
}

export interface SessionPage {
  sessions: ListedSession[];
  /** Pass back as `cursor` for the next page; absent on the last one. */
  nextCursor?: string;
}

/** The end of a stored session's active branch (`HostSessions.readBranchTail`). */
export interface BranchTail {
  header: SessionHeader;
  /** The last entries of the active branch (all of it when it is shorter), root side first. */
  entries: SessionEntry[];
  /** The position on the branch of `entries[0]` (0 is the root). */
  start: number;
  /** How many entries the whole branch has. */
  length: number;
}

/**
 * `ModeContext.host.sessions`: the session store, for any folder. Changes go through the store (a host that swaps
 * the session store changes what is listed and moved); moving or removing a session another process has open is
 * refused (`KC_ERR_SESSION_LOCKED`) and leaves it in place.
 */
export interface HostSessions {
  /** Sessions of one folder (or of every folder), newest first; `archived` lists the archive instead. */
  list(options?: { cwd?: string; archived?: boolean }): StoredSession[];
  /**
   * One page of the stored sessions, newest file modification first, for lists of thousands: the listing (names and
   * modification times) is kept in memory and watched, so a call where nothing changed reads one folder, and only
   * the sessions on the page are read. It lasts as long as the host.
   */
  page(options?: SessionPageOptions): SessionPage;
  /** Reads the listing `page()` uses ahead, without holding up the event loop (a host about to list calls it). */
  warm(): Promise<void>;
  /**
   * The stored session with this id, found through the listing `page()` keeps (a unique id prefix is looked up in
   * the store); undefined when there is none. `writing` as for `page()`.
   */
  find(
    idOrPrefix: string,
    options?: { archived?: boolean; writing?: readonly string[] },
  ): ListedSession | undefined;
  /** A session file's summary; undefined when it is not a readable session. */
  info(path: string): StoredSession | undefined;
  /** A session file's header; undefined when it is not a readable session. */
  header(path: string): SessionHeader | undefined;
  /** The header and the active branch of a stored session, read without opening it (no lock, no extensions). */
  readBranch(path: string): { header: SessionHeader; entries: SessionEntry[] };
  /**
   * The last `count` entries of a stored session's active branch, read without opening it and without parsing the
   * rest of the file: for showing the newest part of a long history.
   */
  readBranchTail(path: string, count: number): BranchTail;
  /**
   * Writes a new session next to `path` holding `entries` (by default `path`'s active branch), with `path` as its
   * parent; returns its file and id.
   */
  fork(path: string, entries?: readonly SessionEntry[]): { path: string; id: string };
  /** Points a session nobody has open at another working folder: its header's `cwd`, rewritten atomically. */
  setCwd(path: string, cwd: string): void;
  /** Moves a session out of the lists into the archive; returns its new path. */
  archive(path: string): string;
  /** Moves an archived session back; returns its path. */
  unarchive(path: string): string;
  /** Deletes an archived session's file. */
  remove(path: string): void;
}

/**
 * `ModeContext.host`: what a mode that serves many sessions reaches besides its own session, for any folder.
 * Present where the host runs the SDK (every mode the `knightcode` command runs).
 */
export interface HostServices {
  /** The agent folder (settings, sessions, `models.json`). */
  readonly agentDir: string;
  readonly sessions: HostSessions;
  readonly settings: HostSettings;
  readonly trust: HostTrust;
  readonly packages: HostPackages;
  /** The `mcp.json` files as a session in `cwd` would read them (no cwd: the personal file only). */
  mcp(cwd?: string): McpConfigAccess;
  /** `tools.json`, with the tools the host session's extensions declared. */
  readonly tools: ToolSettingsAccess;
}
