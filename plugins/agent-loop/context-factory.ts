/**
 * Builds the `ctx` that handlers, tools and commands receive, over the session's agent loop, models and store.
 * Command contexts add the operations that would deadlock from an event handler (waiting for idle, reload,
 * session replacement).
 */
import type {
  ContextFactory,
  ContextUsage,
  DiscoveredResources,
  ExtensionCommandContext,
  ExtensionContext,
  ExtensionUIContext,
  HostMode,
  McpConfigAccess,
  NavigateTreeOptions,
  NewSessionOptions,
  ReplacedSessionContext,
  SessionRuntime,
  SettingsAccess,
  ToolSettingsAccess,
  TrustAccess,
} from "../../kernel/index.js";
import { errorMessage, KernelError } from "../../kernel/index.js";
import type { ModelService } from "../model-registry/model-service.js";
import type { AgentSession } from "./agent-session.js";
import type { SessionLog } from "./session-log.js";
import { navigateTree, type TreeNavigationDeps } from "./tree-navigation.js";

/** Session replacement is the host's business: the SDK handle implements it. */
export interface SessionReplacer {
  newSession(options?: NewSessionOptions): Promise<{ cancelled: boolean }>;
  fork(
    entryId: string,
    options?: { position?: "before" | "at"; withSession?(ctx: ReplacedSessionContext): void | Promise<void> },
  ): Promise<{ cancelled: boolean }>;
  switchSession(
    path: string,
    options?: { withSession?(ctx: ReplacedSessionContext): void | Promise<void> },
  ): Promise<{ cancelled: boolean }>;
}

export interface ContextDeps {
  runtime: SessionRuntime;
  agent: () => AgentSession;
  models: ModelService;
  session: SessionLog;
  /** Read on every use: a mode installs its UI after the session started. */
  ui: () => ExtensionUIContext;
  hasUI: () => boolean;
  mode: HostMode;
  projectTrusted: boolean;
  agentDir: string;
  /** Read on every use: discovery runs after the session started, and again on reload. */
  discoveredResources: () => DiscoveredResources | undefined;
  shutdown: () => void;
  replacer?: SessionReplacer;
  /** The parts of the host face an extension gets (settings, trust, tools.json, mcp.json of the session's folder). */
  faces: {
    settings: SettingsAccess;
    trust: TrustAccess;
    toolSettings: ToolSettingsAccess;
    mcpConfig: McpConfigAccess;
  };
}

const NO_RESOURCES: DiscoveredResources = { skillPaths: [], promptPaths: [], themePaths: [] };

export function createContextFactory(deps: ContextDeps): ContextFactory {
  const base = (): ExtensionContext => {
    const agent = deps.agent();
    return {
      cwd: deps.runtime.cwd,
      agentDir: deps.agentDir,
      mode: deps.mode,
      get hasUI() {
        return deps.hasUI();
      },
      get ui() {
        return deps.ui();
      },
      sessionManager: deps.session,
      modelRegistry: deps.models.runtime(),
      get model() {
        return agent.model;
      },
      get thinkingLevel() {
        return agent.thinkingLevel;
      },
      get signal() {
        return agent.signal;
      },
      isIdle: () => agent.isIdle(),
      isProjectTrusted: () => deps.projectTrusted,
      settings: deps.faces.settings,
      trust: deps.faces.trust,
      toolSettings: deps.faces.toolSettings,
      get mcpConfig() {
        return deps.faces.mcpConfig;
      },
      getDiscoveredResources: () => structuredClone(deps.discoveredResources() ?? NO_RESOURCES),
      hasPendingMessages: () => agent.hasPendingMessages(),
      abort: () => {
        agent.abort();
      },
      shutdown: () => deps.shutdown(),
      getContextUsage: () => contextUsage(agent, deps.session),
      // Fire and forget, as the API says: the outcome reaches the callbacks (a run in progress settles first).
      compact: (options = {}) => {
        agent
          .compact(options.customInstructions ? { customInstructions: options.customInstructions } : {})
          .then(
            (result) => options.onComplete?.(result),
            (error: unknown) =>
              options.onError?.(error instanceof Error ? error : new Error(errorMessage(error))),
          );
      },
      getSystemPrompt: () => agent.systemPrompt,
    };
  };
  const noReplacer = () => {
    throw new KernelError("KC_ERR_NOT_AVAILABLE", "This host cannot replace the session");
  };
  return {
    create: base,
    createCommandContext: (): ExtensionCommandContext => {
      const ctx = base();
      return Object.assign(Object.create(ctx) as ExtensionContext, {
        waitForIdle: () => deps.agent().waitForIdle(),
        reload: () => deps.runtime.reload(),
        newSession: (options?: NewSessionOptions) =>
          deps.replacer ? deps.replacer.newSession(options) : noReplacer(),
        fork: (entryId: string, options?: Parameters<SessionReplacer["fork"]>[1]) =>
          deps.replacer ? deps.replacer.fork(entryId, options) : noReplacer(),
        switchSession: (path: string, options?: Parameters<SessionReplacer["switchSession"]>[1]) =>
          deps.replacer ? deps.replacer.switchSession(path, options) : noReplacer(),
        navigateTree: async (targetId: string, options?: NavigateTreeOptions) => {
          const { cancelled } = await navigateTree(treeDeps(deps), targetId, options);
          return { cancelled };
        },
        sendUserMessage: async (content: string, options?: { deliverAs?: "steer" | "followUp" }) => {
          const agent = deps.agent();
          // A template or skill expanded for a queued steer or follow-up: the text joins that queue.
          if (!options?.deliverAs && agent.queueExpansion(content)) return;
          // The prompt that ran this command hears this dispatch's acceptance (once), before the run settles.
          const accepted = agent.takeCommandAcceptance();
          if (!agent.isIdle()) {
            agent.sendUserMessage(undefined, content, { deliverAs: options?.deliverAs ?? "followUp" });
            accepted?.("queued");
            return;
          }
          await agent.prompt(content, { source: "extension", ...(accepted ? { onAccepted: accepted } : {}) });
        },
      }) as ExtensionCommandContext;
    },
  };
}

function treeDeps(deps: ContextDeps): TreeNavigationDeps {
  return {
    bus: deps.runtime.bus,
    context: () => deps.runtime.context(),
    session: deps.session,
    waitForIdle: () => deps.agent().waitForIdle(),
  };
}

/**
 * Tokens of the last assistant response's usage (input + cache + output), against the model's window. A failed
 * answer, and a stopped one that reported no usage, say nothing about the context: the answer before them counts.
 */
export function contextUsage(agent: AgentSession, session: SessionLog): ContextUsage | undefined {
  const model = agent.model;
  if (!model) return undefined;
  for (const entry of session.branchBackwards(["message"])) {
    if (entry.message.role === "assistant" && entry.message.stopReason !== "error") {
      const u = entry.message.usage;
      const tokens = u.input + u.cacheRead + u.cacheWrite + u.output;
      if (tokens === 0 && entry.message.stopReason === "aborted") continue;
      return {
        tokens,
        contextWindow: model.contextWindow,
        percent: model.contextWindow > 0 ? (tokens / model.contextWindow) * 100 : null,
      };
    }
  }
  return { tokens: null, contextWindow: model.contextWindow, percent: null };
}
