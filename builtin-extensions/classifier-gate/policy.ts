/**
 * The deterministic first step of the gate: which calls the rules decide, which a person must confirm, and which
 * go to the classifier. Pure and synchronous (file system reads aside, for symlinks), so a rule-only decision
 * costs microseconds (bench/gate.bench.ts).
 *
 * In order: a malformed tools.json confirms everything; deny rules; protected paths (never auto-approved, not even
 * by an allow rule or the classifier); ask rules; allow rules; tools that only reach other tools (their nested
 * calls come through here one by one); the annotation rule (read-only, or neither destructive nor open-world);
 * edits inside the project; everything else goes to the classifier.
 */
import type { ToolAnnotations } from "@knightcodeai/cli/kit";
import {
  commandMentionsProtected,
  insideOf,
  type ProtectedPaths,
  protectedReason,
  resolveCallPath,
} from "./paths.js";
import { matchRules, type Rule, type Subject } from "./rules.js";

export interface PendingCall {
  toolName: string;
  input: Record<string, unknown>;
  /** Undefined for a tool nobody registered (MCP defaults apply). */
  annotations: ToolAnnotations | undefined;
  /** The tool declares `reachesTools`: it acts only through nested calls, which are gated themselves. */
  reachesTools: boolean;
}

export interface PolicyConfig {
  cwd: string;
  rules: readonly Rule[];
  paths: ProtectedPaths;
  /** tools.json could not be used (the warning): every call needs a person. */
  malformed?: string;
}

export type Route =
  | { kind: "allow"; by: "rule" | "policy"; reason: string; rule?: string }
  | { kind: "deny"; by: "rule"; reason: string; rule: string }
  | { kind: "ask"; by: "rule" | "policy"; reason: string; rule?: string }
  | { kind: "classify"; reason: string };

/** Tools whose only effect is writing the file at `path`. */
const FILE_EDITORS = new Set(["edit", "write"]);

/** The annotation rule of docs/extensions.md (Codex's): missing hints take the MCP defaults. */
export function needsApproval(hints: ToolAnnotations | undefined): boolean {
  return (
    hints?.destructiveHint === true ||
    (!hints?.readOnlyHint && ((hints?.destructiveHint ?? true) || (hints?.openWorldHint ?? true)))
  );
}

export function subjectOf(call: PendingCall, cwd: string, project: string): Subject {
  const { input } = call;
  if (call.toolName === "bash" && typeof input.command === "string")
    return { kind: "command", text: input.command };
  if (typeof input.path === "string") {
    const path = resolveCallPath(cwd, input.path);
    return { kind: "path", text: insideOf(project, path) ?? path };
  }
  return { kind: "arguments", text: JSON.stringify(input) };
}

export function route(call: PendingCall, config: PolicyConfig): Route {
  if (config.malformed) {
    return { kind: "ask", by: "policy", reason: `tools.json cannot be used (${config.malformed})` };
  }
  const { paths } = config;
  // Resolving a path touches the file system, so it happens only when a rule or a check needs the subject.
  let resolved: Subject | undefined;
  const subject = () => {
    resolved ??= subjectOf(call, config.cwd, paths.project);
    return resolved;
  };
  const match = config.rules.some((r) => r.tool.test(call.toolName))
    ? matchRules(config.rules, call.toolName, subject())
    : undefined;
  if (match?.action === "deny") {
    return { kind: "deny", by: "rule", rule: match.rule, reason: `the rule ${match.rule} denies it` };
  }
  if (!call.annotations?.readOnlyHint) {
    const { kind, text } = subject();
    const touched =
      kind === "command"
        ? commandMentionsProtected(text, paths)
        : kind === "path"
          ? protectedReason(text.startsWith("/") ? text : `${paths.project}/${text}`, paths)
          : undefined;
    if (touched) return { kind: "ask", by: "policy", reason: `it may change ${touched}` };
  }
  if (match?.action === "ask")
    return { kind: "ask", by: "rule", rule: match.rule, reason: `the rule ${match.rule} asks for it` };
  if (match?.action === "allow")
    return { kind: "allow", by: "rule", rule: match.rule, reason: `the rule ${match.rule} allows it` };
  if (call.reachesTools)
    return { kind: "allow", by: "policy", reason: "it acts only through nested calls, which are gated" };
  if (!needsApproval(call.annotations))
    return { kind: "allow", by: "policy", reason: "its annotations mark it read-only or harmless" };
  if (FILE_EDITORS.has(call.toolName) && subject().kind === "path" && !subject().text.startsWith("/")) {
    return { kind: "allow", by: "policy", reason: "it edits a file inside the project" };
  }
  return { kind: "classify", reason: "it may have effects the rules cannot judge" };
}
