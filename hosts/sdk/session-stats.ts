/** What a host reads about a session: its state (`get_state`) and its figures (`get_session_stats`, `/session`). */
import type {
  ModelInfo,
  SessionState,
  SessionStats,
  SessionSummary,
  ThinkingLevel,
} from "../../kernel/index.js";
import { contextUsage } from "../../plugins/agent-loop/context-factory.js";
import type { SessionInfo } from "../../plugins/session-store/session-manager.js";
import { serviceTokens } from "../../plugins/tokens.js";
import type { OpenSession } from "./session-open.js";

const THINKING_LEVELS: readonly ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh"];

/** A model without reasoning takes only `off`; any other model (or none chosen yet) every level. */
export function availableThinkingLevels(model: ModelInfo | undefined): ThinkingLevel[] {
  return model && !model.reasoning ? ["off"] : [...THINKING_LEVELS];
}

export function sessionState({ runtime, log, config }: OpenSession): SessionState {
  const agent = runtime.scope.resolve(serviceTokens.agent);
  const queue = agent.getQueue();
  return {
    model: agent.model,
    thinkingLevel: agent.thinkingLevel,
    isStreaming: !agent.isIdle(),
    isCompacting: agent.isCompacting,
    steeringMode: config.settings.get("steeringMode"),
    followUpMode: config.settings.get("followUpMode"),
    autoCompactionEnabled: config.settings.get("compaction").enabled,
    sessionFile: log.getSessionFile(),
    sessionId: log.getSessionId(),
    sessionName: log.getSessionName(),
    messageCount: log.buildContext().messages.length,
    pendingMessageCount: queue.steering.length + queue.followUp.length,
  };
}

export function sessionStats({ runtime, log }: OpenSession): SessionStats {
  const stats: SessionStats = {
    sessionFile: log.getSessionFile(),
    sessionId: log.getSessionId(),
    userMessages: 0,
    assistantMessages: 0,
    toolCalls: 0,
    toolResults: 0,
    totalMessages: 0,
    tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
    cost: 0,
    contextUsage: contextUsage(runtime.scope.resolve(serviceTokens.agent), log),
  };
  // One entry at a time: a long session's messages are read back from its file, never all held at once.
  log.forEachEntry((entry) => {
    if (entry.type !== "message") return;
    const message = entry.message;
    stats.totalMessages++;
    if (message.role === "user") stats.userMessages++;
    if (message.role === "toolResult") stats.toolResults++;
    if (message.role === "assistant") {
      stats.assistantMessages++;
      stats.toolCalls += message.content.filter((c) => c.type === "toolCall").length;
    }
    // A tool result's usage is what the tool and the gates deciding on it spent on model calls of their own.
    const usage = message.role === "assistant" || message.role === "toolResult" ? message.usage : undefined;
    if (usage) {
      for (const key of ["input", "output", "cacheRead", "cacheWrite", "totalTokens"] as const) {
        stats.tokens[key] += usage[key];
      }
      stats.cost += usage.cost.total;
    }
  });
  return stats;
}

/** A stored session as a resume picker lists it. */
export function sessionSummary(info: SessionInfo): SessionSummary {
  return {
    path: info.path,
    id: info.id,
    ...(info.name ? { name: info.name } : {}),
    ...(info.labels ? { labels: info.labels } : {}),
    modified: info.modified,
    messageCount: info.messageCount,
    firstMessage: info.firstMessage,
  };
}
