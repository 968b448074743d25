/**
 * Opening a session: the settings (personal first, the project's once trusted), the packages and resource folders,
 * the extension sources (built-in, personal and package, command line and SDK, then the project's), project trust,
 * the kernel session with its config and log, then the model, thinking level and tools, and resource discovery.
 * Every service is reached through its token, so a host that swaps the settings, the trust service or the packages
 * changes what a session opens with.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import type {
  ExtensionSource,
  ExtensionUIContext,
  HostMode,
  Kernel,
  ModelInfo,
  SessionRuntime,
  SessionStartEvent,
  ThinkingLevel,
} from "../../kernel/index.js";
import type { SessionReplacer } from "../../plugins/agent-loop/context-factory.js";
import { headlessUI } from "../../plugins/kit/headless-ui.js";
import type { ResolvedResources } from "../../plugins/packages/package-manager.js";
import { discoverContextFiles } from "../../plugins/resources/context-files.js";
import { loadSystemPromptFiles } from "../../plugins/resources/system-prompt.js";
import type { SessionManager } from "../../plugins/session-store/session-manager.js";
import type { Settings } from "../../plugins/settings/settings.js";
import { projectTrustGateOptions } from "../../plugins/settings/trust.js";
import { serviceTokens } from "../../plugins/tokens.js";
import type { ToolRegistry } from "../../plugins/tool-registry/tool-registry.js";
import { builtinSources } from "./builtin-extensions.js";
import { PI_COMPAT_SET } from "./package-modules.js";
import { packageSources, resourceSeed, TEMPORARY_PACKAGE } from "./package-resources.js";
import type { CreateAgentSessionOptions } from "./session-options.js";
import type { DiscoveredResources, SessionConfig } from "./session-plugins.js";
import { sdkTokens } from "./session-plugins.js";
import { availableThinkingLevels } from "./session-stats.js";

/** What opening a session needs from the handle that owns it. */
export interface SessionOpening {
  readonly kernel: Kernel;
  readonly options: CreateAgentSessionOptions;
  readonly cwd: string;
  readonly agentDir: string;
  readonly mode: HostMode;
  warn(message: string): void;
  /** The UI a mode bound with `setUI`, if any. */
  boundUI(): { ui: ExtensionUIContext; hasUI: boolean } | undefined;
  /** The host's UI with the prompt events around its dialogs. */
  withPromptEvents(ui: ExtensionUIContext): ExtensionUIContext;
  /** The trust decision, kept by the handle for the sessions it opens later. */
  trustDecision: boolean | undefined;
  replacer: SessionReplacer;
  /** After the project phase, before `session_start`: the handle's `beforeStart` for its first session. */
  beforeStart(session: OpenSession): Promise<void>;
}

/** An open session as its handle keeps it. */
export interface OpenSession {
  runtime: SessionRuntime;
  log: SessionManager;
  config: SessionConfig;
  /** What the packages resolved to: the project's (once trusted) first. */
  resources: ResolvedResources[];
  /** Sets the project's part (settings, prompt files, packages, extension sources) for a trust decision. */
  settleProject(trusted: boolean): Promise<void>;
}

/** The model and thinking level a replaced session hands to the next (`newSession({ preserveModel })`). */
export interface CarriedSelection {
  model: ModelInfo | undefined;
  thinkingLevel: ThinkingLevel;
}

/** Starts a kernel session over a session log. A failure closes the log and leaves nothing behind. */
export async function openSession(
  host: SessionOpening,
  log: SessionManager,
  start: SessionStartEvent,
): Promise<OpenSession> {
  // Torn or malformed lines the store skipped (and kept in the file): every mode hears of them.
  for (const warning of log.warnings) host.warn(warning);
  log.onWriteWarning = (message) => host.warn(message);
  const { kernel, options, cwd, agentDir } = host;
  const settingsLoader = kernel.container.resolve(serviceTokens.settings);
  const packages = kernel.container.resolve(serviceTokens.packages);
  const overrides = options.settings ?? {};
  const globalSettings = settingsLoader.load({ agentDir, cwd, projectTrusted: false, overrides });
  for (const warning of globalSettings.warnings) host.warn(warning);
  // Project trust is settled with the UI known when the session opens; a UI the host binds in beforeStart
  // arrives later, for session_start.
  const bound = host.boundUI();
  const ui = bound?.ui ?? (options.ui ? host.withPromptEvents(options.ui) : headlessUI);
  const hasUI = bound?.hasUI ?? options.hasUI ?? false;
  const config: SessionConfig = {
    cwd,
    agentDir,
    mode: host.mode,
    ui,
    hasUI,
    projectTrusted: false,
    settings: globalSettings,
    flagValues: options.flags ?? {},
    ...(options.apiKeys ? { apiKeys: options.apiKeys } : {}),
    ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
    // Read once trust is settled and the project's resources loaded (how-knightcode-works.md), in beforeReady.
    contextFiles: [],
    promptFiles: {},
    warn: (message) => host.warn(message),
    shutdown: () => options.onShutdownRequest?.(),
    replacer: host.replacer,
  };
  const disabled = new Set([
    ...(globalSettings.get("extensions") as string[]).filter((e) => e.startsWith("-")).map((e) => e.slice(1)),
    ...(options.withoutBuiltins ?? []).map((name) => `builtin:${name}`),
  ]);
  const discover = options.discoverExtensions !== false;
  // Packages, the resource settings and the resource folders: the user's now, the project's once it is trusted.
  const userResources = await packages.resolve({
    agentDir,
    cwd,
    scopes: ["user"],
    projectTrusted: false,
    temporary: temporaryPackages(options, cwd),
    installMissing: options.offline !== true,
  });
  for (const warning of userResources.warnings) host.warn(warning);
  const baseSources: ExtensionSource[] = [
    ...builtinSources(disabled),
    ...(options.noExtensions ? [] : packageSources(discover ? userResources : onlyTemporary(userResources))),
    ...extraSources(options, cwd),
  ];
  let projectSources: ExtensionSource[] = [];
  const moduleSet = disabled.has("builtin:pi-compat") ? "default" : PI_COMPAT_SET;
  const opened: Omit<OpenSession, "runtime"> & { runtime?: SessionRuntime } = {
    log,
    config,
    resources: [userResources],
    settleProject: async (trusted) => {
      config.projectTrusted = trusted;
      config.promptFiles = withCliPrompts(
        await loadSystemPromptFiles({ cwd, agentDir, projectTrusted: trusted }),
        options,
        cwd,
      );
      if (!trusted) {
        const untrusted = (
          await packages.resolve({ agentDir, cwd, scopes: ["project"], projectTrusted: false })
        ).untrustedPackages;
        if (untrusted.length > 0)
          host.warn(
            `project packages not installed or loaded until the project is trusted: ${untrusted.join(", ")}`,
          );
        opened.resources = [userResources];
        config.settings = globalSettings;
        projectSources = [];
        return;
      }
      const projectResources = await packages.resolve({
        agentDir,
        cwd,
        scopes: ["project"],
        projectTrusted: true,
        installMissing: options.offline !== true,
      });
      for (const warning of projectResources.warnings) host.warn(warning);
      opened.resources = [projectResources, userResources];
      const full = settingsLoader.load({ agentDir, cwd, projectTrusted: true, overrides });
      for (const warning of full.warnings) if (!globalSettings.warnings.includes(warning)) host.warn(warning);
      config.settings = full;
      projectSources = options.noExtensions || !discover ? [] : packageSources(projectResources);
    },
  };

  let runtime: SessionRuntime;
  try {
    ({ runtime } = await kernel.createSession({
      sources: baseSources,
      reloadSources: () => [...baseSources, ...projectSources],
      cwd,
      mode: host.mode,
      moduleSet,
      start,
      factoryTimeoutMs: () => config.settings.get("extensionLoad").timeoutMs,
      values: [
        [sdkTokens.config, config],
        [sdkTokens.sessionLog, log],
      ],
      onExtensionError: (report) => host.warn(`${report.extension} (${report.event}): ${report.message}`),
      onExtensionLog: (entry) => {
        if (options.log) options.log(entry);
        else if (entry.level !== "info") host.warn(`${entry.extension}: ${entry.message}`);
      },
      beforeReady: async (starting) => {
        opened.runtime = starting;
        const trusted = await resolveTrust(host, starting, globalSettings, ui, hasUI);
        await opened.settleProject(trusted);
        if (trusted) {
          const loaded = await kernel.loader.load(projectSources, { moduleSet });
          await starting.addExtensions(
            loaded.extensions,
            loaded.failures.map((f) => f.error),
          );
        }
        if (options.contextFiles !== false)
          config.contextFiles = await discoverContextFiles({ cwd, agentDir });
        await host.beforeStart(opened as OpenSession);
      },
    }));
  } catch (error) {
    log.close();
    throw error;
  }
  opened.runtime = runtime;
  return opened as OpenSession;
}

/**
 * What the session starts with once it is open: the model, thinking level and active tools, then resource
 * discovery. A failure shuts the session down and closes its log.
 */
export async function startSelection(
  host: Pick<SessionOpening, "options" | "cwd" | "warn">,
  session: OpenSession,
  carried?: CarriedSelection,
): Promise<void> {
  try {
    await applySelection(host, session, carried);
    await discoverResources(host, session, "startup");
  } catch (error) {
    await session.runtime.shutdown({ reason: "quit" });
    session.log.close();
    throw error;
  }
}

async function resolveTrust(
  host: SessionOpening,
  runtime: SessionRuntime,
  settings: Settings,
  ui: ExtensionUIContext,
  hasUI: boolean,
): Promise<boolean> {
  if (host.trustDecision !== undefined) return host.trustDecision;
  const decision = await host.kernel.container.resolve(serviceTokens.trust).resolve({
    cwd: host.cwd,
    agentDir: host.agentDir,
    ...(host.options.approve !== undefined ? { approve: host.options.approve } : {}),
    settings,
    handlers: (event) =>
      runtime.bus.gate(
        "project_trust",
        event,
        { cwd: host.cwd, mode: host.mode, hasUI, ui },
        projectTrustGateOptions,
      ),
    ...(hasUI ? { ui } : {}),
    hasUI,
    warn: (message) => host.warn(message),
  });
  host.trustDecision = decision.trusted;
  return decision.trusted;
}

/** `-e npm:x`, `-e git:...`: packages installed into a cache for this run. */
/** Only the packages given for this run (`-e npm:...`): what `discoverExtensions: false` still loads. */
function onlyTemporary(resolved: ResolvedResources): ResolvedResources {
  return { ...resolved, resources: resolved.resources.filter((r) => r.scope === "temporary") };
}

/** `--system-prompt` replaces SYSTEM.md's text; `--append-system-prompt` values (text or a file) follow APPEND_SYSTEM.md's. */
function withCliPrompts(
  files: { customPrompt?: string; appendPrompt?: string },
  options: CreateAgentSessionOptions,
  cwd: string,
): { customPrompt?: string; appendPrompt?: string } {
  const appended = (options.appendSystemPrompt ?? []).map((value) => {
    const path = resolve(cwd, value);
    return existsSync(path) && statSync(path).isFile() ? readFileSync(path, "utf8") : value;
  });
  const append = [files.appendPrompt, ...appended].filter((t): t is string => t !== undefined);
  return {
    ...(options.systemPrompt !== undefined
      ? { customPrompt: options.systemPrompt }
      : files.customPrompt !== undefined
        ? { customPrompt: files.customPrompt }
        : {}),
    ...(append.length > 0 ? { appendPrompt: append.join("\n\n") } : {}),
  };
}

/**
 * A folder named as an extension that is a package written for pi: its `package.json` has a `pi` manifest and no
 * `knightcode` one. pi loads such a folder by its package rules (the manifest's extensions, skills, prompt templates
 * and themes), so it goes to the package manager as a package used in place, as `npm:` and `git:` sources do.
 */
function isPiPackageFolder(entry: string, cwd: string): boolean {
  const manifest = resolve(cwd, entry, "package.json");
  try {
    if (!statSync(resolve(cwd, entry)).isDirectory() || !existsSync(manifest)) return false;
    const json = JSON.parse(readFileSync(manifest, "utf8")) as Record<string, unknown>;
    return json.knightcode === undefined && typeof json.pi === "object" && json.pi !== null;
  } catch {
    return false;
  }
}

function asPackage(entry: unknown, cwd: string): entry is string {
  return typeof entry === "string" && (TEMPORARY_PACKAGE.test(entry) || isPiPackageFolder(entry, cwd));
}

function temporaryPackages(options: CreateAgentSessionOptions, cwd: string): string[] {
  return (options.extensions ?? []).filter((e): e is string => asPackage(e, cwd));
}

function extraSources(options: CreateAgentSessionOptions, cwd: string): ExtensionSource[] {
  return (options.extensions ?? [])
    .filter((e) => !asPackage(e, cwd))
    .map((e, i) =>
      typeof e === "string"
        ? { origin: "cli" as const, path: resolve(cwd, e) }
        : typeof e === "function"
          ? { origin: "sdk" as const, name: e.name || `extension-${i + 1}`, factory: e }
          : e,
    );
}

/**
 * Model, thinking level and active tools: what a replaced session carried over, then explicit options, then the
 * session's own record, then settings.
 */
export async function applySelection(
  host: Pick<SessionOpening, "options" | "warn">,
  session: OpenSession,
  carried?: CarriedSelection,
): Promise<void> {
  const { log, config, runtime } = session;
  const { options } = host;
  const agent = runtime.scope.resolve(serviceTokens.agent);
  const models = runtime.scope.resolve(serviceTokens.models);
  const restored = log.buildContext();
  const settings = config.settings;
  const explicit = options.provider || options.model;
  // The replaced session's model wins; setModel below records it in the new session.
  let model = carried?.model ? models.find(carried.model.provider, carried.model.id) : undefined;
  if (!model && explicit) {
    model = models.resolveModel({
      ...(options.provider ? { provider: options.provider } : {}),
      ...(options.model ? { model: options.model } : {}),
    });
  } else if (!model && restored.model) {
    model = models.find(restored.model.provider, restored.model.modelId);
  }
  if (!model) {
    const provider = settings.get("defaultProvider") as string | undefined;
    const id = settings.get("defaultModel") as string | undefined;
    if (provider || id) {
      try {
        model = models.resolveModel({ ...(provider ? { provider } : {}), ...(id ? { model: id } : {}) });
      } catch (error) {
        host.warn(`settings: ${(error as Error).message}`);
      }
    }
  }
  if (model && (agent.model?.provider !== model.provider || agent.model?.id !== model.id)) {
    const recorded = restored.model?.provider === model.provider && restored.model.modelId === model.id;
    if (recorded) agent.model = model;
    else await agent.setModel(undefined, model, "restore");
  }
  const requested =
    carried?.thinkingLevel ??
    options.thinkingLevel ??
    restored.thinkingLevel ??
    (settings.get("defaultThinkingLevel") as ThinkingLevel | "max" | undefined);
  const thinking = requested === "max" ? highestLevel(models, agent.model) : requested;
  if (thinking) {
    if (restored.thinkingLevel === thinking) agent.thinkingLevel = thinking;
    else agent.setThinkingLevel(undefined, thinking);
  }
  const tools = runtime.scope.resolve(serviceTokens.toolRegistry);
  if (options.tools) tools.setActiveTools(options.tools);
  else applyDefaultTools(tools, settings.get("defaultTools") as string[]);
  if (options.excludeTools?.length || options.withoutCoreTools) {
    const patterns = (options.excludeTools ?? []).map(toolPattern);
    const core = new Set(
      tools
        .getAllTools()
        .filter((t) => t.owner === "builtin:core-tools")
        .map((t) => t.name),
    );
    tools.setActiveTools(
      tools
        .getActiveTools()
        .filter(
          (name) => !patterns.some((p) => p.test(name)) && !(options.withoutCoreTools && core.has(name)),
        ),
    );
  }
}

/** A tool name, or a pattern with `*` wildcards, as a whole-name match. */
function toolPattern(pattern: string): RegExp {
  const source = pattern
    .split("*")
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${source}$`);
}

/** `defaultTools`: plain names set the list, `+name` adds, `-name` removes. */
function applyDefaultTools(tools: ToolRegistry, spec: readonly string[]): void {
  if (spec.length === 0) return;
  const plain = spec.filter((s) => !s.startsWith("+") && !s.startsWith("-"));
  const active = new Set(plain.length > 0 ? plain : tools.getActiveTools());
  for (const item of spec) {
    if (item.startsWith("+")) active.add(item.slice(1));
    else if (item.startsWith("-")) active.delete(item.slice(1));
  }
  tools.setActiveTools([...active]);
}

/**
 * `resources_discover` once the session's extensions are in (startup and reload): every handler may contribute
 * paths, which are concatenated. A path that is not a string is dropped with a warning naming the extension.
 */
export async function discoverResources(
  host: Pick<SessionOpening, "cwd" | "warn" | "options">,
  session: OpenSession,
  reason: "startup" | "reload",
): Promise<void> {
  const { runtime, config } = session;
  if (runtime.startupFailure) return;
  const kinds = ["skillPaths", "promptPaths", "themePaths"] as const;
  // Kept up to date handler by handler, so a fallback handler (builtin:prompt-templates) reads the whole list.
  const seed = resourceSeed(session.resources);
  for (const kind of kinds) seed[kind].push(...(host.options.resourcePaths?.[kind] ?? []));
  config.discoveredResources = structuredClone(seed);
  config.discoveredResources = await runtime.bus.transform(
    "resources_discover",
    structuredClone(seed),
    runtime.context(),
    {
      toEvent: () => ({ cwd: host.cwd, reason }),
      fold: (found, result) => {
        const next: DiscoveredResources = structuredClone(found);
        for (const kind of kinds) {
          const paths = (result as Record<string, unknown>)[kind];
          if (paths === undefined) continue;
          const list = Array.isArray(paths) ? paths : [paths];
          for (const path of list) {
            if (typeof path === "string" && path.trim() !== "") next[kind].push(resolve(host.cwd, path));
            else
              host.warn(
                `resources_discover: ${kind} entries must be non-empty strings; ignored ${JSON.stringify(path)}`,
              );
          }
        }
        config.discoveredResources = next;
        return next;
      },
    },
  );
}

/** pi's `max` at start-up: the model's highest level (`max` itself only for a routed model that offers it). */
function highestLevel(
  models: { routedThinkingLevels(model: ModelInfo): readonly (ThinkingLevel | "max")[] | undefined },
  model: ModelInfo | undefined,
): ThinkingLevel {
  const levels = (model && models.routedThinkingLevels(model)) ?? availableThinkingLevels(model);
  return (levels.at(-1) ?? "off") as ThinkingLevel;
}
