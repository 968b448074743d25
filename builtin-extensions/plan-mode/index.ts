/**
 * builtin:plan-mode — plan first, then work. While planning the agent has read-only tools (and `bash` for read-only
 * commands only, bash-guard.ts) and instructions to investigate and end its reply with a numbered plan under a
 * "Plan:" heading. When a reply holds a plan, the person reviews it through the public dialog API (a `select`:
 * approve, edit, keep planning), which every host maps: the terminal's dialog, RPC's `extension_ui_request`, the
 * app-server's `ui/dialog`, ACP's `session/request_permission`. Approval brings the working tools back and sends the
 * plan as a user message that carries the same run on; the agent marks steps done with `[DONE:n]`.
 *
 * `/plan` toggles it, `/plan <goal>` enters it and asks, ctrl+alt+p toggles it, `--plan` starts a session in it, and
 * `"plan-mode": {"startInPlanMode": "true"}` in tools.json starts every session in it. The state is recorded as
 * `plan-mode` custom entries (JSON and RPC clients see them as `entry_appended`) and offered to other extensions as
 * `planModeService`. docs/plan-mode.md describes it.
 */
import {
  type ExtensionAPI,
  type ExtensionContext,
  type PlanModeState,
  type PlanStep,
  planModeService,
  type TextContent,
  type Unsubscribe,
} from "@knightcodeai/cli/kit";
import { refuseCommand } from "./bash-guard.js";
import { doneMarkers, extractPlan, stepsOf } from "./plan-text.js";

export { refuseCommand } from "./bash-guard.js";
export { doneMarkers, extractPlan, stepsOf } from "./plan-text.js";

/** The `tools.json` row, the custom entry type and the status/widget key. */
export const PLAN_MODE = "plan-mode";
export const PLAN_FLAG = "plan";
export const PLAN_SHORTCUT = "ctrl+alt+p";

/** The review dialog: its title and its options, approval first. */
export const REVIEW_TITLE = "Plan ready. Start working on it?";
export const REVIEW_CHOICES = Object.freeze({
  approve: "Approve and start",
  edit: "Edit the plan, then start",
  keep: "Keep planning",
});
export const EDIT_TITLE = "Edit the plan (one numbered step a line)";

/** Read-only tools offered while planning even when they were not active before. */
const READERS = ["read", "grep", "find", "ls"];

const PLANNING_PROMPT = (tools: string[], bash: boolean) =>
  [
    "## Plan mode",
    "Plan mode is on: investigate and plan, and change nothing.",
    `You have read-only tools only (${tools.join(", ") || "none"}).${
      bash
        ? " bash runs read-only commands only (cat, head, ls, grep, rg, find, wc, git status/log/diff/show, ...); anything that writes, redirects or runs other programs is refused."
        : ""
    }`,
    'When you have a plan, end your reply with it: a line "Plan:" followed by numbered steps, one short line each (1. ..., 2. ...).',
    "The user reviews the plan. Once they approve it, the working tools come back and you carry it out.",
  ].join("\n");

const executingPrompt = (steps: PlanStep[]) =>
  [
    "## Approved plan",
    "You are carrying out this approved plan:",
    ...steps.map((s, i) => `${i + 1}. [${s.status === "completed" ? "x" : " "}] ${s.step}`),
    "Work through the steps in order. When you finish a step, write [DONE:n] with its number in your reply (for example [DONE:1]).",
  ].join("\n");

const approvedMessage = (plan: string) =>
  `Carry out this approved plan:\n\n${plan}\n\nWork through the steps in order, and write [DONE:n] when you finish step n.`;

/** What a `plan-mode` entry records: the state and the active tools to restore when planning ends. */
interface PlanEntryData extends PlanModeState {
  savedTools?: string[];
}

export default function planMode(knightcode: ExtensionAPI): void {
  knightcode.registerToolSettings(PLAN_MODE, {
    description: "Plan mode: read-only tools until you approve the agent's plan (/plan)",
    enabledByDefault: true,
    settings: {
      startInPlanMode: '"true": every session starts in plan mode (as with --plan)',
      bash: '"off": no bash while planning; otherwise bash runs read-only commands only',
    },
  });
  knightcode.registerFlag(PLAN_FLAG, {
    type: "boolean",
    description: "Start in plan mode: read-only tools until you approve the agent's plan",
  });

  let state: PlanModeState = { phase: "off", steps: [] };
  /** The active tools before planning began, restored when it ends. */
  let savedTools: string[] | undefined;
  let bashWhilePlanning = true;
  /**
   * Whether the planning tools are set. Entering at session start waits for the first run: the session applies
   * `--tools` and `defaultTools` after `session_start`, and the tools to restore are the ones that selection chose.
   */
  let toolsApplied = false;
  let ctx: ExtensionContext | undefined;
  let contextHook: Unsubscribe | undefined;
  const listeners = new Set<(state: PlanModeState) => void>();

  const snapshot = (): PlanModeState => ({
    phase: state.phase,
    steps: state.steps.map((s) => ({ ...s })),
    ...(state.plan !== undefined ? { plan: state.plan } : {}),
  });

  /** Records the state, shows it, and tells the listeners. */
  function publish(): void {
    const data: PlanEntryData = { ...snapshot(), ...(savedTools ? { savedTools } : {}) };
    knightcode.appendEntry(PLAN_MODE, data);
    show();
    for (const listener of [...listeners]) {
      try {
        listener(snapshot());
      } catch (error) {
        knightcode.log.warn(`a plan mode listener failed: ${String(error)}`);
      }
    }
  }

  function show(): void {
    const ui = ctx?.ui;
    if (!ui) return;
    try {
      if (state.phase === "planning") {
        ui.setStatus(PLAN_MODE, "⏸ plan mode (read-only)");
        ui.setWidget(PLAN_MODE, undefined);
      } else if (state.phase === "executing") {
        const done = state.steps.filter((s) => s.status === "completed").length;
        ui.setStatus(PLAN_MODE, `plan ${done}/${state.steps.length}`);
        ui.setWidget(
          PLAN_MODE,
          state.steps.map(
            (s, i) =>
              `${s.status === "completed" ? "☑" : s.status === "in_progress" ? "▶" : "☐"} ${i + 1}. ${s.step}`,
          ),
        );
      } else {
        ui.setStatus(PLAN_MODE, undefined);
        ui.setWidget(PLAN_MODE, undefined);
      }
    } catch {
      // A context from before a reload: the new session shows the state itself.
    }
  }

  /** Whether the tool may be active while planning. */
  function isPlanTool(name: string): boolean {
    if (name === "bash") return bashWhilePlanning;
    return knightcode.getAllTools().find((t) => t.name === name)?.annotations?.readOnlyHint === true;
  }

  function planTools(): string[] {
    const active = new Set(knightcode.getActiveTools());
    return knightcode
      .getAllTools()
      .filter((t) => isPlanTool(t.name) && (active.has(t.name) || READERS.includes(t.name)))
      .map((t) => t.name);
  }

  function applyPlanTools(): void {
    savedTools ??= knightcode.getActiveTools();
    knightcode.setActiveTools(planTools());
    toolsApplied = true;
  }

  function restoreTools(): void {
    if (!savedTools) return;
    const known = new Set(knightcode.getAllTools().map((t) => t.name));
    knightcode.setActiveTools(savedTools.filter((name) => known.has(name)));
    savedTools = undefined;
  }

  /** The instructions of the phase, added to the system prompt of each request while plan mode is not off. */
  function hookContext(on: boolean): void {
    if (!on) {
      contextHook?.();
      contextHook = undefined;
      return;
    }
    if (contextHook) return;
    contextHook = knightcode.on("context_with_system", (event) => {
      if (state.phase === "off") return undefined;
      const [system, ...rest] = event.messages;
      if (system?.role !== "system") return undefined;
      const extra =
        state.phase === "planning"
          ? PLANNING_PROMPT(knightcode.getActiveTools(), knightcode.getActiveTools().includes("bash"))
          : executingPrompt(state.steps);
      return { messages: [{ ...system, content: `${system.content}\n\n${extra}` }, ...rest] };
    });
  }

  function enter(deferTools = false): void {
    if (state.phase === "planning") return;
    savedTools = undefined;
    state = { phase: "planning", steps: [] };
    if (deferTools) toolsApplied = false;
    else applyPlanTools();
    hookContext(true);
    publish();
  }

  function leave(): void {
    if (state.phase === "off") return;
    restoreTools();
    state = { ...snapshot(), phase: "off" };
    hookContext(false);
    publish();
  }

  function approve(plan: string, steps: string[]): void {
    restoreTools();
    state = {
      phase: "executing",
      plan,
      steps: steps.map((step, i) => ({ step, status: i === 0 ? "in_progress" : "pending" })),
    };
    hookContext(true);
    publish();
    // Queued while the run settles: the run goes on with it, under the working tools and the approved plan.
    knightcode.sendUserMessage(approvedMessage(plan), { deliverAs: "followUp" });
  }

  const unregister: Unsubscribe[] = [];
  unregister.push(
    knightcode.services.provide(
      planModeService,
      () => ({
        state: snapshot,
        onChange(listener) {
          listeners.add(listener);
          return () => {
            listeners.delete(listener);
          };
        },
        enter: () => enter(),
        leave,
      }),
      { fallback: true },
    ),
  );

  const toggle = (c: ExtensionContext) => {
    if (state.phase === "planning") {
      leave();
      c.ui.notify("Plan mode off: the working tools are back.", "info");
    } else {
      enter();
      c.ui.notify(
        "Plan mode on: read-only tools until you approve a plan. Ask for what you want planned.",
        "info",
      );
    }
  };

  unregister.push(
    knightcode.registerCommand("plan", {
      description: "Plan mode: toggle it, or /plan <goal> to plan that goal with read-only tools",
      async handler(args, c) {
        const goal = args.trim();
        if (!goal) return toggle(c);
        enter();
        await c.sendUserMessage(goal, c.isIdle() ? {} : { deliverAs: "followUp" });
      },
    }),
    knightcode.registerShortcut(PLAN_SHORTCUT, { description: "Toggle plan mode", handler: toggle }),
  );

  knightcode.on("session_start", (_event, c) => {
    ctx = c;
    const settings = c.toolSettings.read(PLAN_MODE);
    if (!settings.enabled) {
      for (const undo of unregister) undo();
      return;
    }
    bashWhilePlanning = settings.values.bash !== "off";
    const restored = lastEntry(c);
    if (restored && restored.phase !== "off") {
      state = {
        phase: restored.phase,
        steps: restored.steps,
        ...(restored.plan ? { plan: restored.plan } : {}),
      };
      if (restored.phase === "planning") {
        savedTools = restored.savedTools;
        toolsApplied = false;
      }
      hookContext(true);
      show();
    } else if (restored) {
      state = { phase: "off", steps: restored.steps, ...(restored.plan ? { plan: restored.plan } : {}) };
    }
    const start = knightcode.getFlag(PLAN_FLAG) === true || settings.values.startInPlanMode === "true";
    if (start && state.phase !== "planning") enter(true);
  });

  // Each run starts with the planning tools: set now when plan mode began with the session, and taken back when
  // something (the session's tool selection, a /reload) turned other tools on; those come back after planning.
  knightcode.on("before_agent_start", () => {
    if (state.phase !== "planning") return undefined;
    if (!toolsApplied) {
      applyPlanTools();
      return undefined;
    }
    const active = knightcode.getActiveTools();
    const others = active.filter((name) => !isPlanTool(name));
    if (others.length > 0) {
      savedTools = [...new Set([...(savedTools ?? []), ...others])];
      knightcode.setActiveTools(active.filter(isPlanTool));
    }
    return undefined;
  });

  // While planning, a call of a tool that is not read-only is refused, whoever offered the tool.
  knightcode.on("tool_call", (event) => {
    if (state.phase !== "planning") return undefined;
    if (event.toolName === "bash") {
      if (!bashWhilePlanning) return { block: true, reason: refusal("bash is off while planning") };
      const reason = refuseCommand(String(event.input.command ?? ""));
      return reason ? { block: true, reason: refusal(reason) } : undefined;
    }
    if (isPlanTool(event.toolName)) return undefined;
    return { block: true, reason: refusal(`${event.toolName} can change things`) };
  });

  // The review: a reply that ends the run with a plan is put to the person.
  knightcode.on("agent_before_settle", async (event, c) => {
    if (state.phase !== "planning") return undefined;
    const reply = lastAssistantText(event.messages);
    const found = reply ? extractPlan(reply) : undefined;
    if (!found) return undefined;
    state = {
      phase: "planning",
      plan: found.text,
      steps: found.steps.map((step) => ({ step, status: "pending" })),
    };
    publish();
    if (!c.hasUI) return undefined;
    const choice = await c.ui.select(
      REVIEW_TITLE,
      [REVIEW_CHOICES.approve, REVIEW_CHOICES.edit, REVIEW_CHOICES.keep],
      {
        ...(c.signal ? { signal: c.signal } : {}),
        // Where the host has its own permission prompt (an ACP client), approving is allowing.
        permission: { allowOnce: REVIEW_CHOICES.approve, reject: REVIEW_CHOICES.keep },
      },
    );
    if (choice === REVIEW_CHOICES.approve) {
      approve(found.text, found.steps);
      return undefined;
    }
    if (choice === REVIEW_CHOICES.edit) {
      const edited = (
        await c.ui.editor(EDIT_TITLE, found.text, c.signal ? { signal: c.signal } : {})
      )?.trim();
      const steps = edited ? stepsOf(edited) : [];
      if (edited && steps.length > 0) {
        approve(edited, steps);
        return undefined;
      }
    }
    c.ui.notify("Still planning: say what to change, or /plan to leave plan mode.", "info");
    return undefined;
  });

  // Progress: the agent marks finished steps with [DONE:n].
  knightcode.on("turn_end", (event, c) => {
    if (state.phase !== "executing") return undefined;
    const text = event.message.content
      .filter((p): p is TextContent => p.type === "text")
      .map((p) => p.text)
      .join("\n");
    const done = doneMarkers(text).filter((n) => n >= 1 && n <= state.steps.length);
    if (done.length === 0) return undefined;
    const steps = state.steps.map((s, i) =>
      done.includes(i + 1) ? { ...s, status: "completed" as const } : s,
    );
    const next = steps.find((s) => s.status !== "completed");
    if (next) {
      for (const s of steps) if (s.status === "in_progress" && s !== next) s.status = "pending";
      next.status = "in_progress";
      state = { ...state, steps };
    } else {
      state = { ...state, steps, phase: "off" };
      hookContext(false);
      c.ui.notify(`Plan complete: all ${steps.length} steps done.`, "info");
    }
    publish();
    return undefined;
  });
}

function refusal(why: string): string {
  return `Plan mode is on: ${why}. Only read-only tools run while planning. Finish the plan; once the user approves it, the working tools come back.`;
}

function lastAssistantText(messages: readonly { role: string; content?: unknown }[]): string | undefined {
  const last = [...messages].reverse().find((m) => m.role === "assistant");
  if (!last || !Array.isArray(last.content)) return undefined;
  return (last.content as { type: string; text?: string }[])
    .filter((p) => p.type === "text")
    .map((p) => p.text ?? "")
    .join("\n");
}

/** The latest `plan-mode` entry on the session's branch. */
function lastEntry(ctx: ExtensionContext): PlanEntryData | undefined {
  const branch = ctx.sessionManager.getBranch();
  for (let i = branch.length - 1; i >= 0; i--) {
    const entry = branch[i]!;
    if (entry.type === "custom" && entry.customType === PLAN_MODE) {
      const data = entry.data as PlanEntryData | undefined;
      if (data && ["off", "planning", "executing"].includes(data.phase) && Array.isArray(data.steps))
        return data;
    }
  }
  return undefined;
}
