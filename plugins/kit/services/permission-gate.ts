/**
 * `permissionGateService`: what a permission gate decided about each tool call, for hosts and extensions that show
 * or record it. `builtin:classifier-gate` provides it; a replacement gate provides the same reference (and declares
 * its `tools.json` row with `registerToolSettings`, so `/tools` and the app-server list it).
 */
import { defineService } from "../../../kernel/index.js";

/** What a gate decided about one call (also a blocked call's `details.classifierGate`). */
export interface GateDecision {
  toolCallId: string;
  toolName: string;
  parentToolCallId?: string;
  /** `unavailable`: blocked because the classifier could not answer and no person could be asked. */
  outcome: "allowed" | "denied" | "unavailable";
  /** Who decided: a rule, the built-in policy, the classifier, a person now, or a person's earlier approval. */
  by: "rule" | "policy" | "classifier" | "user" | "remembered" | "breaker";
  reason: string;
  rule?: string;
  classifier?: {
    verdict: "safe" | "risky" | "unavailable";
    label?: string;
    error?: string;
    attempts: number;
  };
}

export interface PermissionGate {
  /** Calls `listener` with each decision from now on; returns the unsubscribe function. */
  onDecision(listener: (decision: GateDecision) => void): () => void;
}

export const permissionGateService = defineService<PermissionGate>("knightcode.permissionGate", {
  description: "the permission gate's decisions about tool calls",
  providedBy: "builtin:classifier-gate",
});
