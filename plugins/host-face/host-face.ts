/**
 * The host face (kernel/api/host.ts), implemented once over the services behind the tokens: the session store, the
 * settings loader, the trust service, `tools.json`, the `mcp.json` files and the packages. `createHostServices` is
 * what a mode gets as `ModeContext.host` (any folder); `createSessionFaces` is what an extension gets on `ctx`
 * (the session's folder). A host that provides one of those tokens again changes what both show.
 */
import { statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type {
  HostPackages,
  HostServices,
  HostSessions,
  HostSettings,
  HostTrust,
  ListedSession,
  McpConfigAccess,
  SettingsAccess,
  SettingsSnapshot,
  StoredSession,
  ToolSettingsAccess,
  ToolSettingsRead,
  TrustAccess,
} from "../../kernel/index.js";
import type { CatalogSession, SessionCatalog } from "../session-store/catalog.js";
import type { SessionInfo, SessionLocation } from "../session-store/session-manager.js";
import { DEFAULT_SETTINGS } from "../settings/settings.js";
import {
  checkToolSetting,
  displaySetting,
  isToolEnabled,
  type ManagedTool,
} from "../settings/tools-config.js";
import type {
  McpConfigStore,
  PackageService,
  SessionStore,
  SettingsLoader,
  ToolConfigStore,
  TrustResolver,
} from "../tokens.js";
import type { DeclaredToolSettings } from "../tool-settings/tool-settings-registry.js";

export interface HostFaceDeps {
  agentDir: string;
  /** Where sessions are stored (`sessionDir` overrides `<agentDir>/sessions`). */
  sessionDir?: string;
  store: SessionStore;
  settings: SettingsLoader;
  trust: TrustResolver;
  toolConfig: ToolConfigStore;
  mcpConfig: McpConfigStore;
  packages: PackageService;
  /** The tools.json entries the extensions in force declared (none for a host without a session). */
  declaredTools(): readonly DeclaredToolSettings[];
  warn?(message: string): void;
}

/** The host face and what its owner ends with it (the watchers of the session listing). */
export type HostFace = HostServices & { dispose(): void };

/** `ModeContext.host`: every face, for any folder. */
export function createHostServices(deps: HostFaceDeps): HostFace {
  const agentDir = resolve(deps.agentDir);
  const trust = hostTrust(deps, agentDir);
  const sessions = hostSessions(deps, agentDir);
  return {
    agentDir,
    sessions,
    dispose: () => sessions.dispose(),
    settings: hostSettings(deps, agentDir, trust),
    trust,
    packages: hostPackages(deps, agentDir, trust),
    mcp: (cwd) =>
      deps.mcpConfig.files({
        agentDir,
        cwd: cwd !== undefined ? resolve(cwd) : agentDir,
        // The app-server's rule: a project's file only for an explicit, saved decision.
        projectTrusted: cwd !== undefined && trust.saved(resolve(cwd))?.trusted === true,
      }),
    tools: toolSettingsAccess(deps, agentDir),
  };
}

/** What an extension gets on `ctx` for its session's folder. */
export function createSessionFaces(
  deps: HostFaceDeps & {
    cwd: string;
    /** Whether the session trusts its folder (decided when it opened). */
    projectTrusted(): boolean;
    /** The session's merged settings as loaded. */
    settingsNow(): SettingsSnapshot;
  },
): {
  settings: SettingsAccess;
  trust: TrustAccess;
  toolSettings: ToolSettingsAccess;
  mcpConfig: McpConfigAccess;
} {
  const agentDir = resolve(deps.agentDir);
  const cwd = resolve(deps.cwd);
  let mcp: { trusted: boolean; access: McpConfigAccess } | undefined;
  return {
    settings: {
      read: () => deps.settings.load({ agentDir, cwd, projectTrusted: deps.projectTrusted() }),
      write: (change) =>
        deps.settings.write({ ...change, agentDir, cwd, projectTrusted: deps.projectTrusted() }),
    },
    trust: {
      saved: () => deps.trust.saved(agentDir, cwd, deps.warn),
      protectedInputs: () => deps.trust.protectedInputs(cwd),
      save: (trusted) => deps.trust.save(agentDir, cwd, trusted),
    },
    toolSettings: toolSettingsAccess(deps, agentDir),
    get mcpConfig(): McpConfigAccess {
      const trusted = deps.projectTrusted();
      if (mcp?.trusted !== trusted)
        mcp = { trusted, access: deps.mcpConfig.files({ agentDir, cwd, projectTrusted: trusted }) };
      return mcp.access;
    },
  };
}

function managed(entry: DeclaredToolSettings): ManagedTool & { owner: string } {
  return {
    name: entry.name,
    description: entry.definition.description,
    enabledByDefault: entry.definition.enabledByDefault,
    settings: entry.definition.settings ?? {},
    owner: entry.owner.id,
  };
}

function toolSettingsAccess(deps: HostFaceDeps, agentDir: string): ToolSettingsAccess {
  const declared = () => deps.declaredTools().map(managed);
  // The same read for an unchanged file, so a caller can tell "nothing changed" by identity (the gate does).
  const reads = new WeakMap<object, Map<string, ToolSettingsRead>>();
  return {
    list: () => {
      const config = deps.toolConfig.read(agentDir);
      return {
        path: config.path,
        tools: declared().map((tool) => ({
          name: tool.name,
          description: tool.description,
          enabled: isToolEnabled(config, tool.name, tool.enabledByDefault),
          settings: Object.fromEntries(
            Object.entries(config.tools[tool.name] ?? {})
              .filter(([key]) => key !== "enabled")
              .map(([key, value]) => [key, displaySetting(key, value)]),
          ),
          known: tool.settings,
          owner: tool.owner,
        })),
        ...(config.warning ? { warning: config.warning } : {}),
      };
    },
    read: (name): ToolSettingsRead => {
      const config = deps.toolConfig.read(agentDir);
      const byDefault =
        deps.declaredTools().find((t) => t.name === name)?.definition.enabledByDefault ?? false;
      let known = reads.get(config);
      if (!known) {
        known = new Map();
        reads.set(config, known);
      }
      const key = `${byDefault}\0${name}`;
      const cached = known.get(key);
      if (cached) return cached;
      const values = { ...(config.tools[name] ?? {}) };
      delete values.enabled;
      const read: ToolSettingsRead = Object.freeze({
        path: config.path,
        enabled: isToolEnabled(config, name, byDefault),
        values: Object.freeze(values),
        ...(config.warning ? { warning: config.warning } : {}),
      });
      known.set(key, read);
      return read;
    },
    write: (name, key, value) => {
      checkToolSetting(declared(), name, key, value);
      deps.toolConfig.write(agentDir, name, key, value);
    },
  };
}

function hostTrust(deps: HostFaceDeps, agentDir: string): HostTrust {
  return {
    saved: (cwd) => deps.trust.saved(agentDir, resolve(cwd), deps.warn),
    trusted: (cwd) => {
      const saved = deps.trust.saved(agentDir, resolve(cwd), deps.warn);
      if (saved) return saved.trusted;
      const personal = deps.settings.load({ agentDir, cwd: agentDir, projectTrusted: false });
      const fallback = personal.get("defaultProjectTrust");
      return fallback === "always" ? true : fallback === "never" ? false : null;
    },
    protectedInputs: (cwd) => deps.trust.protectedInputs(resolve(cwd)),
    save: (cwd, trusted) => deps.trust.save(agentDir, resolve(cwd), trusted),
  };
}

function hostSettings(deps: HostFaceDeps, agentDir: string, trust: HostTrust): HostSettings {
  return {
    read: (cwd) => {
      const dir = cwd !== undefined ? resolve(cwd) : undefined;
      return deps.settings.load({
        agentDir,
        cwd: dir ?? agentDir,
        projectTrusted: dir !== undefined && trust.trusted(dir) === true,
      });
    },
    defaults: () => DEFAULT_SETTINGS as unknown as Readonly<Record<string, unknown>>,
    write: (change) => {
      const cwd = change.cwd !== undefined ? resolve(change.cwd) : undefined;
      return deps.settings.write({
        ...change,
        agentDir,
        ...(cwd !== undefined ? { cwd, projectTrusted: trust.trusted(cwd) === true } : {}),
      });
    },
  };
}

function hostPackages(deps: HostFaceDeps, agentDir: string, trust: HostTrust): HostPackages {
  return {
    resources: async (cwd) => {
      const dir = cwd !== undefined ? resolve(cwd) : undefined;
      const trusted = dir !== undefined && trust.trusted(dir) === true;
      const resolved = await deps.packages.resolve({
        agentDir,
        cwd: dir ?? agentDir,
        scopes: dir !== undefined ? ["user", "project"] : ["user"],
        projectTrusted: trusted,
      });
      return {
        resources: resolved.resources,
        warnings: resolved.warnings,
        ...(dir !== undefined && !trusted ? { untrusted: dir } : {}),
      };
    },
    setEnabled: (resource, enabled, cwd) =>
      deps.packages.setEnabled(
        { agentDir, cwd: cwd !== undefined ? resolve(cwd) : agentDir },
        resource,
        enabled,
      ),
  };
}

function stored(info: SessionInfo): StoredSession {
  return {
    path: info.path,
    id: info.id,
    cwd: info.cwd,
    ...(info.name !== undefined ? { name: info.name } : {}),
    ...(info.parentSession !== undefined ? { parentSession: info.parentSession } : {}),
    created: info.created,
    modified: info.modified,
    messageCount: info.messageCount,
    firstMessage: info.firstMessage,
    ...(info.labels ? { labels: info.labels } : {}),
  };
}

const DEFAULT_PAGE = 50;

function listed({ info, mtimeMs }: CatalogSession): ListedSession {
  return { ...stored(info), fileModified: new Date(mtimeMs) };
}

function hostSessions(deps: HostFaceDeps, agentDir: string): HostSessions & { dispose(): void } {
  const active: SessionLocation = { agentDir, ...(deps.sessionDir ? { sessionDir: deps.sessionDir } : {}) };
  const where = (archived?: boolean) => (archived ? deps.store.archiveLocation(active) : active);
  // The listings page() keeps, made on first use: one for the sessions in use, one for the archive.
  const catalogs = new Map<boolean, SessionCatalog>();
  const catalog = (archived: boolean): SessionCatalog => {
    let made = catalogs.get(archived);
    if (!made) {
      made = deps.store.catalog(where(archived));
      catalogs.set(archived, made);
    }
    return made;
  };
  const busy = (writing: readonly string[] | undefined) => (writing ?? []).map((p) => dirname(resolve(p)));
  /** Files this face moved, wrote or removed: every listing looks at their folders again. */
  const touched = (...paths: string[]) => {
    for (const made of catalogs.values()) for (const path of paths) made.touched(path);
  };
  const byId = (idOrPrefix: string, archived: boolean): StoredSession | undefined => {
    let path: string;
    try {
      path = deps.store.findById(idOrPrefix, where(archived));
    } catch (error) {
      if ((error as { code?: string }).code === "KC_ERR_SESSION_NOT_FOUND") return undefined;
      throw error;
    }
    const info = deps.store.info(path);
    return info ? stored(info) : undefined;
  };
  return {
    list: (options = {}) => {
      const location = where(options.archived);
      const infos =
        options.cwd !== undefined
          ? deps.store.list({ ...location, cwd: resolve(options.cwd) })
          : deps.store.listAll(location);
      return infos.map(stored);
    },
    page: (options = {}) => {
      const archived = options.archived === true;
      const page = catalog(archived).page({
        ...(options.cwd !== undefined ? { cwd: resolve(options.cwd) } : {}),
        ...(options.cursor !== undefined ? { cursor: options.cursor } : {}),
        limit: options.limit ?? DEFAULT_PAGE,
        busy: archived ? [] : busy(options.writing),
      });
      return {
        sessions: page.sessions.map(listed),
        ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {}),
      };
    },
    warm: () => catalog(false).warm(),
    find: (idOrPrefix, options = {}) => {
      const archived = options.archived === true;
      const found = catalog(archived).find(idOrPrefix, archived ? [] : busy(options.writing));
      if (found) return listed(found);
      // A prefix (not a whole id) is the store's to resolve; its file's time is read then.
      if (UUID.test(idOrPrefix)) return undefined;
      const session = byId(idOrPrefix, archived);
      if (!session) return undefined;
      let fileModified = session.modified;
      try {
        fileModified = statSync(session.path).mtime;
      } catch {
        // Listed a moment ago: its last activity stands in.
      }
      return { ...session, fileModified };
    },
    info: (path) => {
      const info = deps.store.info(resolve(path));
      return info ? stored(info) : undefined;
    },
    header: (path) => deps.store.header(resolve(path)),
    readBranch: (path) => deps.store.readBranch(resolve(path)),
    readBranchTail: (path, count) => deps.store.readBranchTail(resolve(path), count),
    fork: (path, entries) => {
      const fork = deps.store.fork(resolve(path), entries);
      touched(fork.path);
      return fork;
    },
    setCwd: (path, cwd) => {
      deps.store.setCwd(resolve(path), resolve(cwd));
      touched(resolve(path));
    },
    archive: (path) => {
      const moved = deps.store.archive(resolve(path), active);
      touched(resolve(path), moved);
      return moved;
    },
    unarchive: (path) => {
      const moved = deps.store.unarchive(resolve(path), active);
      touched(resolve(path), moved);
      return moved;
    },
    remove: (path) => {
      deps.store.remove(resolve(path), active);
      touched(resolve(path));
    },
    dispose: () => {
      for (const made of catalogs.values()) made.close();
      catalogs.clear();
    },
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
