/**
 * `planModeService`: plan mode's state (planning, carrying out an approved plan, or off) and the plan's steps with
 * their progress, for hosts and extensions that show them (the ACP mode sends them as `plan` updates and offers
 * plan mode as a session mode). `builtin:plan-mode` provides it; a replacement provides the same reference.
 * docs/plan-mode.md describes the behaviour.
 */
import { defineService } from "../../../kernel/index.js";

/** One step of a plan. The statuses are ACP's plan-entry statuses (and Codex's `turn/plan/updated` ones). */
export interface PlanStep {
  step: string;
  status: "pending" | "in_progress" | "completed";
}

/**
 * Plan mode as it stands. `planning`: read-only tools and planning instructions, until the person approves a plan.
 * `executing`: the working tools are back and the approved plan's steps are tracked as the agent reports them done.
 * `off`: neither (the steps of the last plan stay, all completed when it finished).
 */
export interface PlanModeState {
  phase: "off" | "planning" | "executing";
  /** The latest plan's steps: proposed (all pending) while planning, tracked while executing. */
  steps: PlanStep[];
  /** The latest plan as text: the proposal while planning, the approved (maybe edited) plan afterwards. */
  plan?: string;
}

export interface PlanMode {
  /** A copy of the state now. */
  state(): PlanModeState;
  /** Calls `listener` with each new state from now on; returns the unsubscribe function. */
  onChange(listener: (state: PlanModeState) => void): () => void;
  /** Enters plan mode (read-only tools); nothing happens when it is already planning. */
  enter(): void;
  /** Leaves plan mode or stops tracking a plan: the tools from before plan mode come back. */
  leave(): void;
}

export const planModeService = defineService<PlanMode>("knightcode.planMode", {
  description: "plan mode's state and the steps of its plan",
  providedBy: "builtin:plan-mode",
});
