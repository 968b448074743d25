/**
 * The per-extension ExtensionAPI facade. Each extension gets its own object in each session, bound to its owner
 * id and to that session's scope, so an action taken through one session's API can never reach another.
 * Each method is one line that resolves the typed service behind its token and calls it, passing the owner only
 * where the service uses it. Every registration becomes a disposable in the extension's store (reload and
 * shutdown dispose the store) and is handed back as an unsubscribe function.
 */

import { eventCatalog } from "../api/event-catalog.js";
import type {
  ExtensionAPI,
  ExtensionEventBus,
  ExtensionInfo,
  ExtensionServices,
  LogLevel,
  OnOptions,
  RoutedModelDefinition,
  Unsubscribe,
  VirtualModelConfig,
} from "../api/extension-api.js";
import type { SessionScope } from "../container/container.js";
import { coreTokens as t } from "../container/core-tokens.js";
import type { Token } from "../container/tokens.js";
import { KernelError, MissingServiceError, StaleContextError } from "../errors.js";
import type { AnyHandler, HandlerErrorReport, HookBus } from "../events/hook-bus.js";
import { type Disposable, type DisposableStore, toDisposable } from "../lifecycle/disposable.js";
import type { EventDialect } from "./loader.js";
import type { ServiceDirectory } from "./services.js";

/** The lifetime an API object belongs to: one factory run of one session runtime. */
export interface Generation {
  readonly active: boolean;
  readonly loading: boolean;
}

export interface FacadeDeps {
  info: ExtensionInfo;
  store: DisposableStore;
  generation: Generation;
  scope: SessionScope;
  bus: HookBus;
  events: SharedEventChannels;
  services: ServiceDirectory;
  log(owner: ExtensionInfo, level: LogLevel, message: string): void;
  /** How the extension's event names read, when it was written against another agent's (LoadedExtension.dialect). */
  dialect?: EventDialect;
}

export function createExtensionAPI({
  info,
  store,
  generation,
  scope,
  bus,
  events,
  services,
  log,
  dialect,
}: FacadeDeps): ExtensionAPI {
  const assertLive = (what: string) => {
    if (!generation.active) throw new StaleContextError(`knightcode.${what}() of ${info.id}`);
  };
  /** The service behind `knightcode.<method>()`, for a live API object. */
  const use = <T>(token: Token<T>, method: string): T => {
    assertLive(method);
    if (!scope.has(token)) {
      throw new MissingServiceError(`knightcode.${method}() needs ${token}, which no plugin provides`);
    }
    return scope.resolve(token);
  };
  const own = (registration: Disposable): Unsubscribe => {
    store.add(registration);
    return () => {
      store.delete(registration);
      void registration.dispose();
    };
  };
  const duringLoad = (method: string) => {
    if (!generation.loading) {
      throw new KernelError(
        "KC_ERR_REGISTER_AFTER_START",
        `${info.id}: knightcode.${method}() is only allowed while the extension factory runs`,
      );
    }
  };

  return {
    extension: info,
    events: {
      emit: (channel, data) => {
        assertLive("events.emit");
        events.emit(channel, data);
      },
      on: (channel, handler) => {
        assertLive("events.on");
        return own(toDisposable(events.on(channel, handler, info), `${info.id} events.on(${channel})`));
      },
    } satisfies ExtensionEventBus,
    services: {
      provide: (ref, create, options) => {
        assertLive("services.provide");
        return own(services.provide(info, ref, create, options));
      },
      get: (ref) => {
        assertLive("services.get");
        return services.get(ref);
      },
      require: (ref) => {
        assertLive("services.require");
        return services.require(ref, info);
      },
      watch: (ref, listener) => {
        assertLive("services.watch");
        return own(services.watch(info, ref, listener));
      },
    } satisfies ExtensionServices,
    // Logging stays possible after a reload: a timer of the old generation may still have something to say.
    log: {
      info: (message) => log(info, "info", String(message)),
      warn: (message) => log(info, "warn", String(message)),
      error: (message) => log(info, "error", String(message)),
    },
    on: (event, handler, options?: OnOptions) => {
      assertLive("on");
      let name: string = event;
      let listener = handler as AnyHandler;
      if (dialect && !Object.hasOwn(eventCatalog, event)) {
        const read = dialect.translateEvent(event);
        if ("never" in read) {
          log(info, "warn", read.never);
          return () => {};
        }
        name = read.event;
        const adapt = read.adapt;
        if (adapt && typeof handler === "function") {
          listener = (payload, ctx) => {
            const adapted = adapt(payload);
            return adapted === undefined ? undefined : (handler as AnyHandler)(adapted, ctx);
          };
        }
      }
      return own(toDisposable(bus.on(name, listener, info, options), `${info.id} on(${event})`));
    },
    registerTool: (tool, options) => own(use(t.tools, "registerTool").registerTool(info, tool, options)),
    registerToolRenderer: (r) => own(use(t.tools, "registerToolRenderer").registerToolRenderer(info, r)),
    getActiveTools: () => use(t.tools, "getActiveTools").getActiveTools(),
    getAllTools: () => use(t.tools, "getAllTools").getAllTools(),
    setActiveTools: (names) => use(t.tools, "setActiveTools").setActiveTools(names),
    registerCommand: (name, c) => own(use(t.commands, "registerCommand").registerCommand(info, name, c)),
    registerShortcut: (key, s) => own(use(t.commands, "registerShortcut").registerShortcut(info, key, s)),
    getCommands: () => use(t.commands, "getCommands").getCommands(),
    registerFlag: (name, flag) => {
      duringLoad("registerFlag");
      return own(use(t.flags, "registerFlag").registerFlag(info, name, flag));
    },
    getFlag: (name) => use(t.flags, "getFlag").getFlag(info, name),
    registerMessageRenderer: (type, r) =>
      own(use(t.renderers, "registerMessageRenderer").registerMessageRenderer(info, type, r)),
    registerEntryRenderer: (type, r) =>
      own(use(t.renderers, "registerEntryRenderer").registerEntryRenderer(info, type, r)),
    getToolRenderers: (name) => use(t.tools, "getToolRenderers").getToolRenderers(name),
    getMessageRenderer: (type) => use(t.renderers, "getMessageRenderer").getMessageRenderer(type),
    getEntryRenderer: (type) => use(t.renderers, "getEntryRenderer").getEntryRenderer(type),
    registerProvider: (name, c, options) =>
      own(
        use(t.models, "registerProvider").registerProvider(
          info,
          name,
          dialect?.adaptProvider ? dialect.adaptProvider(c) : c,
          options,
        ),
      ),
    registerToolSettings: (name, definition) =>
      own(use(t.toolSettings, "registerToolSettings").registerToolSettings(info, name, definition)),
    unregisterProvider: (name) => use(t.models, "unregisterProvider").unregisterProvider(name),
    registerVirtualModel: (name: string | RoutedModelDefinition<any>, c?: VirtualModelConfig) =>
      own(use(t.models, "registerVirtualModel").registerVirtualModel(info, name, c)),
    unregisterVirtualModel: (name: string, id?: string) =>
      use(t.models, "unregisterVirtualModel").unregisterVirtualModel(name, id),
    registerMcpServer: (name, c) =>
      own(use(t.mcpServers, "registerMcpServer").registerMcpServer(info, name, c)),
    unregisterMcpServer: (name) => use(t.mcpServers, "unregisterMcpServer").unregisterMcpServer(info, name),
    getMcpServers: () => use(t.mcpServers, "getMcpServers").getMcpServers(),
    sendMessage: (message, options) => use(t.agent, "sendMessage").sendMessage(info, message, options),
    sendUserMessage: (content, options) => use(t.agent, "sendUserMessage").sendUserMessage(content, options),
    appendEntry: (customType, data) => use(t.agent, "appendEntry").appendEntry(customType, data, info),
    setSessionName: (name) => use(t.agent, "setSessionName").setSessionName(name),
    getSessionName: () => use(t.agent, "getSessionName").getSessionName(),
    setLabel: (entryId, label) => use(t.agent, "setLabel").setLabel(entryId, label),
    setModel: (model) => use(t.agent, "setModel").setModel(info, model),
    getThinkingLevel: () => use(t.agent, "getThinkingLevel").getThinkingLevel(),
    setThinkingLevel: (level) => use(t.agent, "setThinkingLevel").setThinkingLevel(level),
    exec: (command, args, options) => use(t.process, "exec").exec(command, args, options),
    getSettings: () => use(t.settings, "getSettings").getSettings(),
    registerMode: (name, mode) => own(use(t.modes, "registerMode").registerMode(info, name, mode)),
  };
}

/** `knightcode.events`: free-form channels between the extensions of one session, with handler isolation. */
export class SharedEventChannels {
  private readonly channels = new Map<
    string,
    readonly { owner: ExtensionInfo; handler: (data: unknown) => unknown }[]
  >();

  constructor(private readonly report: (report: HandlerErrorReport) => void) {}

  on(channel: string, handler: (data: unknown) => unknown, owner: ExtensionInfo): () => void {
    const entry = { owner, handler };
    this.channels.set(channel, [...(this.channels.get(channel) ?? []), entry]);
    return () => {
      this.channels.set(
        channel,
        (this.channels.get(channel) ?? []).filter((e) => e !== entry),
      );
    };
  }

  emit(channel: string, data: unknown): void {
    for (const { owner, handler } of this.channels.get(channel) ?? []) {
      const fail = (error: unknown) => this.report({ owner, event: `events:${channel}`, error });
      try {
        const result = handler(data);
        if (result instanceof Promise) result.catch(fail);
      } catch (error) {
        fail(error);
      }
    }
  }
}
