/**
 * A Claude subscription's token is meant for Claude Code, and Anthropic's API treats requests that do not look like
 * Claude Code's with suspicion. Besides the identity line and the betas (stream.ts), Claude Code's tools have names
 * in its own casing (`Read`, `Bash`, `WebFetch`, ...). With a subscription, a tool whose name matches one of them
 * without regard to case (`read`, `bash`, `webfetch`) goes out under Claude Code's spelling, and a call the model
 * makes comes back under the tool's own name, so nothing above the provider sees the difference.
 */

/** Claude Code 2.x's tool names, as it sends them. */
const CLAUDE_CODE_TOOLS = [
  "Read",
  "Write",
  "Edit",
  "Bash",
  "Grep",
  "Glob",
  "AskUserQuestion",
  "EnterPlanMode",
  "ExitPlanMode",
  "KillShell",
  "NotebookEdit",
  "Skill",
  "Task",
  "TaskOutput",
  "TodoWrite",
  "WebFetch",
  "WebSearch",
];

const CANONICAL = new Map(CLAUDE_CODE_TOOLS.map((name) => [name.toLowerCase(), name]));

/** How one request's tool names go out and come back. */
export interface ToolNames {
  /** The name a tool (or a past call of it) is sent under. */
  toWire(name: string): string;
  /** The tool a name the model used stands for. */
  fromWire(name: string): string;
}

/**
 * The names for a request offering `tools`. A tool is renamed only when no other tool of the request already has
 * (or would get) the same wire name, so two tools never become one; a name the model sends that is no tool's wire
 * name comes back as it is.
 */
export function claudeCodeToolNames(tools: readonly { name: string }[]): ToolNames {
  const taken = new Set(tools.map((tool) => tool.name));
  const out = new Map<string, string>();
  const back = new Map<string, string>();
  for (const { name } of tools) {
    const canonical = CANONICAL.get(name.toLowerCase());
    if (!canonical || canonical === name || taken.has(canonical) || back.has(canonical)) continue;
    out.set(name, canonical);
    back.set(canonical, name);
  }
  return {
    toWire: (name) => out.get(name) ?? name,
    fromWire: (name) => back.get(name) ?? name,
  };
}
