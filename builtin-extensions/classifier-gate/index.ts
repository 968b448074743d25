/**
 * builtin:classifier-gate — a `tool_call` handler that lets safe calls through, asks a classifier model about the
 * rest, and asks a person (or blocks) when the answer is risky or unavailable. Written only against the public
 * API, so a user can turn it off (`-builtin:classifier-gate`) or replace it with a handler of their own.
 *
 * Off on a fresh install; `"classifier-gate": {"enabled": true}` in tools.json (or `/tools classifier-gate on`)
 * turns it on, and from then on it never fails open. It subscribes as a fallback, so it runs after every other
 * `tool_call` handler and judges the arguments they may have changed. Its decisions reach the listeners of
 * `permissionGateService`, which it provides as a default a replacement gate takes over. See docs/permissions.md.
 */
import {
  addUsage,
  type ExtensionAPI,
  type ExtensionContext,
  emptyUsage,
  errorMessage,
  type GateDecision,
  permissionGateService,
  type ToolCallEvent,
  type ToolCallResult,
  type ToolInfo,
} from "@knightcodeai/cli/kit";
import { askClassifier, type CallForClassifier } from "./classifier.js";
import { GATE, GATE_SETTINGS, type GateSettings, GateSettingsCache } from "./config.js";
import { realPath } from "./paths.js";
import { type PendingCall, type Route, route } from "./policy.js";

export type { GateDecision } from "@knightcodeai/cli/kit";

/**
 * The answers of the gate's dialog, the safe one first (preselected). "Always" is offered when the classifier (or
 * the breaker) asked: it remembers the identical call for the rest of the session. Rules and protected paths ask
 * every time, so they offer only "once".
 */
export const GATE_CHOICES = Object.freeze({
  block: "No, block it",
  once: "Yes, this once",
  always: "Yes, and always allow this same call in this session",
});

/** The command-line flag that turns the gate on for one run. */
export const GATE_FLAG = "gate";

/** Denials in a row, and in one run, after which the gate stops deciding by itself. */
export const BREAKER = Object.freeze({ inARow: 3, perRun: 20 });

const SAFER_WAY =
  "Find a safer way to reach the goal (reading, or editing files inside the project), or stop and ask the user.";

export default function classifierGate(knightcode: ExtensionAPI): void {
  knightcode.registerToolSettings(GATE, GATE_SETTINGS);
  // `--gate`: on for this run whatever tools.json says (the manifest in hosts/sdk declares it for --help too).
  knightcode.registerFlag(GATE_FLAG, {
    type: "boolean",
    description: "Turn the permission gate on for this run (tools.json keeps its setting)",
  });
  /** Who hears of each decision (`permissionGateService.onDecision`). */
  const listeners = new Set<(decision: GateDecision) => void>();
  knightcode.services.provide(
    permissionGateService,
    () => ({
      onDecision(listener) {
        listeners.add(listener);
        return () => {
          listeners.delete(listener);
        };
      },
    }),
    { fallback: true },
  );
  const settingsCache = new GateSettingsCache((message) => knightcode.log.warn(message));
  /** The person's approvals of this session, by tool and normalised arguments. */
  const approvals = new Set<string>();
  /** Calls that may be running nested calls: a nested call's classifier sees the call that made it. */
  const running = new Map<string, { toolName: string; input: Record<string, unknown> }>();
  let inARow = 0;
  let inRun = 0;
  let tripped = false;
  let projectFor: { cwd: string; project: string; agentDir: string } | undefined;

  knightcode.on("before_agent_start", () => {
    inARow = 0;
    inRun = 0;
    tripped = false;
  });
  knightcode.on("tool_execution_end", (event) => {
    running.delete(event.toolCallId);
  });

  const paths = (ctx: ExtensionContext) => {
    if (projectFor?.cwd !== ctx.cwd) {
      projectFor = { cwd: ctx.cwd, project: realPath(ctx.cwd), agentDir: realPath(ctx.agentDir) };
    }
    return projectFor;
  };

  const decide = (event: ToolCallEvent, decision: Omit<GateDecision, "toolCallId" | "toolName">) => {
    const full: GateDecision = {
      toolCallId: event.toolCallId,
      toolName: event.toolName,
      ...(event.parentToolCallId ? { parentToolCallId: event.parentToolCallId } : {}),
      ...decision,
    };
    if (full.outcome === "allowed") inARow = 0;
    else {
      inARow++;
      inRun++;
      if (inARow >= BREAKER.inARow || inRun >= BREAKER.perRun) tripped = true;
    }
    for (const listener of [...listeners]) {
      try {
        listener(full);
      } catch (error) {
        // A listener's fault must not change the decision, whichever way it went.
        knightcode.log.error(`a permission gate decision listener failed: ${errorMessage(error)}`);
      }
    }
    return full;
  };

  const block = (decision: GateDecision, ctx: ExtensionContext): ToolCallResult => {
    let reason = `classifier-gate: ${decision.reason}`;
    if (tripped && !ctx.hasUI) {
      reason += ` The gate ended the run after ${inARow >= BREAKER.inARow ? `${inARow} denials in a row` : `${inRun} denials`}; no one is here to decide.`;
      ctx.abort();
    }
    return { block: true, reason, details: { classifierGate: decision } };
  };

  /** A person decides; without one, the call is blocked with a reason for the model. */
  const askPerson = async (
    event: ToolCallEvent,
    ctx: ExtensionContext,
    why: string,
    base: Pick<GateDecision, "rule" | "classifier">,
    remember: boolean,
  ): Promise<ToolCallResult | undefined> => {
    const unavailable = base.classifier?.verdict === "unavailable";
    if (!ctx.hasUI) {
      const decision = decide(event, {
        ...base,
        outcome: unavailable ? "unavailable" : "denied",
        by: tripped ? "breaker" : base.classifier ? "classifier" : base.rule ? "rule" : "policy",
        reason: unavailable
          ? `unavailable: the call could not be checked (${base.classifier?.error}) and no one is here to confirm it, so it was not run. ${SAFER_WAY}`
          : `denied: ${why}, and no one is here to confirm it. ${SAFER_WAY}`,
      });
      return block(decision, ctx);
    }
    // The safe answer comes first, so Enter on a dialog shown unread blocks the call instead of running it.
    const choices = [GATE_CHOICES.block, GATE_CHOICES.once, ...(remember ? [GATE_CHOICES.always] : [])];
    const answer = await ctx.ui.select(
      `Allow ${event.toolName}?\n${confirmMessage(event, why, running.get(event.parentToolCallId ?? ""))}`,
      choices,
      {
        ...(ctx.signal ? { signal: ctx.signal } : {}),
        permission: {
          allowOnce: GATE_CHOICES.once,
          ...(remember ? { allowAlways: GATE_CHOICES.always } : {}),
          reject: GATE_CHOICES.block,
        },
      },
    );
    if (answer === GATE_CHOICES.once || answer === GATE_CHOICES.always) {
      const always = answer === GATE_CHOICES.always;
      if (always) approvals.add(callKey(event));
      decide(event, {
        ...base,
        outcome: "allowed",
        by: "user",
        reason: `the user approved it${always ? " for the rest of the session" : " once"} (${why})`,
      });
      return undefined;
    }
    const decision = decide(event, {
      ...base,
      outcome: "denied",
      by: "user",
      reason: `the user declined this call (${why}). Do not retry it; find another way or ask the user what they want.`,
    });
    return block(decision, ctx);
  };

  knightcode.on(
    "tool_call",
    async (event, ctx) => {
      const settings = settingsCache.get(ctx.toolSettings);
      if (!settings.enabled && knightcode.getFlag(GATE_FLAG) !== true) return undefined;
      running.set(event.toolCallId, { toolName: event.toolName, input: event.input });
      const info = knightcode.getAllTools().find((t) => t.name === event.toolName);
      const where = paths(ctx);
      const call: PendingCall = {
        toolName: event.toolName,
        input: event.input,
        annotations: info?.annotations,
        reachesTools: info?.reachesTools ?? false,
      };
      const routed: Route = route(call, {
        cwd: ctx.cwd,
        rules: settings.rules,
        paths: { project: where.project, agentDir: where.agentDir, extra: settings.protectedPaths },
        ...(settings.malformed ? { malformed: settings.malformed } : {}),
      });
      const rule = "rule" in routed && routed.rule ? { rule: routed.rule } : {};
      if (routed.kind === "allow") {
        decide(event, { outcome: "allowed", by: routed.by, reason: routed.reason, ...rule });
        return undefined;
      }
      if (routed.kind === "deny") {
        const decision = decide(event, {
          outcome: "denied",
          by: "rule",
          rule: routed.rule,
          reason: `denied: ${routed.reason}. Find another way the rules allow, or ask the user.`,
        });
        return block(decision, ctx);
      }
      if (routed.kind === "ask") return askPerson(event, ctx, routed.reason, rule, false);
      return classifyThenAsk(event, ctx, settings, info);
    },
    { fallback: true },
  );

  const classifyThenAsk = async (
    event: ToolCallEvent,
    ctx: ExtensionContext,
    settings: GateSettings,
    info: ToolInfo | undefined,
  ): Promise<ToolCallResult | undefined> => {
    if (approvals.has(callKey(event))) {
      decide(event, {
        outcome: "allowed",
        by: "remembered",
        reason: "the user approved the same call earlier in this session",
      });
      return undefined;
    }
    if (tripped) {
      return askPerson(
        event,
        ctx,
        `the gate stopped deciding by itself after ${inARow >= BREAKER.inARow ? `${inARow} denials in a row` : `${inRun} denials in this run`}`,
        {},
        true,
      );
    }
    const parent = event.parentToolCallId ? running.get(event.parentToolCallId) : undefined;
    const forClassifier: CallForClassifier = {
      toolName: event.toolName,
      input: event.input,
      ...(info?.namespace ? { namespace: info.namespace } : {}),
      ...(info?.annotations ? { annotations: info.annotations } : {}),
      ...(parent ? { parent } : {}),
    };
    const verdict = await askClassifier(ctx, forClassifier, {
      ...(settings.model ? { model: settings.model } : {}),
      timeoutMs: settings.timeoutMs,
    });
    if (verdict.usage.totalTokens > 0 || verdict.usage.cost.total > 0) {
      event.usage = addUsage(event.usage ?? emptyUsage(), verdict.usage);
    }
    const classifier = {
      verdict: verdict.verdict,
      attempts: verdict.attempts,
      ...("label" in verdict ? { label: verdict.label } : {}),
      ...("error" in verdict ? { error: verdict.error } : {}),
    };
    if (ctx.signal?.aborted) {
      // The run is over: there is nothing left to confirm, and the call would not run anyway.
      const decision = decide(event, {
        outcome: "unavailable",
        by: "classifier",
        reason: "unavailable: the run was aborted before the call could be checked.",
        classifier,
      });
      return block(decision, ctx);
    }
    if (verdict.verdict === "safe") {
      decide(event, {
        outcome: "allowed",
        by: "classifier",
        reason: "the classifier judged it safe",
        classifier,
      });
      return undefined;
    }
    const why =
      verdict.verdict === "risky"
        ? `the classifier judged it ${verdict.label}`
        : `the classifier is unavailable: ${verdict.error}`;
    return askPerson(event, ctx, why, { classifier }, true);
  };
}

/** The same tool with the same arguments, whatever the order of their keys. */
export function callKey(event: Pick<ToolCallEvent, "toolName" | "input">): string {
  return `${event.toolName}\0${stableJson(event.input)}`;
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

function confirmMessage(
  event: ToolCallEvent,
  why: string,
  parent: { toolName: string; input: Record<string, unknown> } | undefined,
): string {
  const command = event.toolName === "bash" ? event.input.command : undefined;
  const args = typeof command === "string" ? `$ ${command}` : JSON.stringify(event.input, null, 2);
  const shown = args.length > 2_000 ? `${args.slice(0, 2_000)}…` : args;
  return [
    typeof command === "string" ? shown : `${event.toolName} ${shown}`,
    ...(parent ? [`called from ${parent.toolName}`] : []),
    `Why you are asked: ${why}.`,
  ].join("\n");
}
