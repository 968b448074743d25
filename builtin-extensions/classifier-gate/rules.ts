/**
 * Permission rules: `tool`, `tool(pattern)`, with `*` in the tool name (`mcp__github__*`). A rule's pattern is
 * matched against the call's subject: the command of `bash`, the path of a tool with a string `path` argument
 * (relative to the project when inside it), and the compact JSON of the arguments for any other tool.
 *
 * Shell commands are split at `;`, `&&`, `||`, `|`, `&` and newlines, so `bash(git status*)` cannot let
 * `git status; rm -rf ~` through: an allow rule must match every part, and a command with a substitution
 * (`$(...)`, backticks, `<(...)`) or a redirection is never allowed by a rule at all. A deny or ask rule matches
 * when any part (or the whole command) does. The split ignores quotes, which only ever makes allow rules match
 * less and deny rules match more.
 */

export type RuleAction = "allow" | "ask" | "deny";

export interface Rule {
  /** The rule as written. */
  source: string;
  action: RuleAction;
  tool: RegExp;
  /** Absent: the rule matches every call of the tool. */
  pattern?: string;
}

/** What a rule's pattern is matched against. */
export type Subject =
  | { kind: "command"; text: string }
  | { kind: "path"; text: string }
  | { kind: "arguments"; text: string };

export interface RuleMatch {
  action: RuleAction;
  rule: string;
}

const RULE = /^([A-Za-z0-9_.*-]+)(?:\((.*)\))?$/s;

/**
 * Parses rules given as one string (separated by commas outside parentheses, or by newlines) or as a list. Returns
 * the rules and a message per malformed one.
 */
export function parseRules(
  value: unknown,
  action: RuleAction,
  key: string = action,
): { rules: Rule[]; errors: string[] } {
  const rules: Rule[] = [];
  const errors: string[] = [];
  if (value === undefined) return { rules, errors };
  const texts =
    typeof value === "string"
      ? splitRuleList(value)
      : Array.isArray(value) && value.every((v) => typeof v === "string")
        ? value.map((v) => v.trim()).filter((v) => v !== "")
        : undefined;
  if (!texts) return { rules, errors: [`"${key}" must be a string or a list of strings`] };
  for (const source of texts) {
    const match = RULE.exec(source);
    if (!match) {
      errors.push(
        `"${key}": rule ${JSON.stringify(source)} is malformed; write tool or tool(pattern), e.g. bash(git status*)`,
      );
      continue;
    }
    const pattern = match[2];
    if (pattern !== undefined && pattern.trim() === "") {
      errors.push(`"${key}": rule ${JSON.stringify(source)} has an empty pattern; leave out the parentheses`);
      continue;
    }
    rules.push({
      source,
      action,
      tool: new RegExp(`^${match[1]!.split("*").map(escapeRegExp).join(".*")}$`),
      ...(pattern !== undefined ? { pattern: pattern.trim() } : {}),
    });
  }
  return { rules, errors };
}

/** Splits at commas and newlines that are not inside parentheses. */
function splitRuleList(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const c of text) {
    if (c === "(") depth++;
    else if (c === ")") depth = Math.max(0, depth - 1);
    if ((c === "," || c === "\n") && depth === 0) {
      parts.push(current);
      current = "";
    } else current += c;
  }
  parts.push(current);
  return parts.map((p) => p.trim()).filter((p) => p !== "");
}

/**
 * The strongest rule matching a call: deny over ask over allow, whatever the order they were written in.
 * `undefined` when none matches.
 */
export function matchRules(
  rules: readonly Rule[],
  toolName: string,
  subject: Subject,
): RuleMatch | undefined {
  let ask: Rule | undefined;
  const allowCandidates: Rule[] = [];
  for (const rule of rules) {
    if (!rule.tool.test(toolName)) continue;
    if (rule.action === "allow") {
      allowCandidates.push(rule);
      continue;
    }
    if (!matchesAny(rule, subject)) continue;
    if (rule.action === "deny") return { action: "deny", rule: rule.source };
    ask ??= rule;
  }
  if (ask) return { action: "ask", rule: ask.source };
  if (allowCandidates.length > 0) {
    const allow = matchesAllParts(allowCandidates, subject);
    if (allow) return { action: "allow", rule: allow.source };
  }
  return undefined;
}

/** Deny and ask rules: the whole subject, or any part of a command. */
function matchesAny(rule: Rule, subject: Subject): boolean {
  if (rule.pattern === undefined) return true;
  if (matchPattern(rule.pattern, subject.kind, subject.text)) return true;
  if (subject.kind !== "command") return false;
  return commandParts(subject.text).some((part) => matchPattern(rule.pattern!, "command", part));
}

/** Allow rules: every part of a command must be matched by one of them; returns the rule of the first part. */
function matchesAllParts(rules: Rule[], subject: Subject): Rule | undefined {
  const whole = rules.find((r) => r.pattern === undefined);
  if (whole) return whole;
  if (subject.kind !== "command") {
    return rules.find((r) => matchPattern(r.pattern!, subject.kind, subject.text));
  }
  if (UNSAFE_SHELL.test(subject.text)) return undefined;
  const parts = commandParts(subject.text);
  if (parts.length === 0) return undefined;
  let first: Rule | undefined;
  for (const part of parts) {
    const rule = rules.find((r) => matchPattern(r.pattern!, "command", part));
    if (!rule) return undefined;
    first ??= rule;
  }
  return first;
}

/** Command substitution, process substitution and redirections: what a prefix rule cannot see through. */
const UNSAFE_SHELL = /\$\(|`|<\(|>\(|>|</;

export function commandParts(command: string): string[] {
  return command
    .split(/&&|\|\||[;|&\n]/)
    .map((p) => p.trim())
    .filter((p) => p !== "");
}

const compiled = new Map<string, RegExp>();

/**
 * A glob: in paths `*` and `?` stay inside one folder and `**` crosses folders (`src/**`); in commands and
 * arguments `*` matches anything.
 */
export function matchPattern(pattern: string, kind: Subject["kind"], text: string): boolean {
  const key = `${kind === "path" ? "p" : "c"}${pattern}`;
  let regex = compiled.get(key);
  if (!regex) {
    regex = globToRegExp(pattern, kind === "path");
    if (compiled.size > 1000) compiled.clear();
    compiled.set(key, regex);
  }
  return regex.test(text);
}

function globToRegExp(pattern: string, path: boolean): RegExp {
  let out = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*") {
      if (path && pattern[i + 1] === "*") {
        i++;
        // `src/**` also matches `src` itself, and `**/x` matches `x` at the top.
        if (pattern[i + 1] === "/") {
          i++;
          out += "(?:.*/)?";
        } else out += ".*";
      } else out += path ? "[^/]*" : ".*";
    } else if (c === "?") out += path ? "[^/]" : ".";
    else out += escapeRegExp(c);
  }
  if (path) out = out.replace(/\/\.\*$/, "(?:/.*)?");
  return new RegExp(`^${out}$`, "s");
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
