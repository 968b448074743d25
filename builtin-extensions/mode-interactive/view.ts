/**
 * How the interactive mode draws things: pure functions from data to text, kept apart from the behaviour in
 * controller.ts so the full terminal UI can replace them later without touching what happens.
 */
import type { CommandInfo, ToolRenderers, ToolResult } from "@knightcodeai/cli/kit";

const useColor = !process.env.NO_COLOR;
const paint = (code: string) => (text: string) => (useColor ? `\x1b[${code}m${text}\x1b[0m` : text);
export const dim = paint("2");
export const bold = paint("1");
export const red = paint("31");
export const green = paint("32");
export const cyan = paint("36");

export const PROMPT = "› ";

export function banner(version: string, model: string | undefined, cwd: string): string {
  return `${bold("KnightCode")} ${dim(version)}  ${model ? cyan(model) : red("no model configured")}\n${dim(cwd)}\n${dim("Type a message, /help for commands, Ctrl+C or Escape to stop a run, /quit to leave.")}\n`;
}

/** One line for a tool call: its name and a short form of its arguments, or what a renderer draws. */
export function toolCallLine(name: string, args: unknown, renderers?: ToolRenderers): string {
  const custom = renderers?.renderCall?.(args, { expanded: false, isPartial: false, cwd: "" });
  if (typeof custom === "string") return `${cyan("●")} ${custom}`;
  const summary = JSON.stringify(args ?? {});
  return `${cyan("●")} ${bold(name)} ${dim(summary.length > 120 ? `${summary.slice(0, 117)}…` : summary)}`;
}

/** The first lines of a result (or what a renderer draws), indented under its call. */
export function toolResultLines(
  result: ToolResult,
  isError: boolean,
  renderers?: ToolRenderers,
  maxLines = 6,
): string {
  const custom = renderers?.renderResult?.(result, { expanded: false, isPartial: false, isError, cwd: "" });
  const text =
    typeof custom === "string"
      ? custom
      : result.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");
  const lines = text.split("\n");
  const shown = lines.slice(0, maxLines).map((l) => `  ${dim("│")} ${isError ? red(l) : l}`);
  if (lines.length > maxLines) shown.push(`  ${dim(`│ … ${lines.length - maxLines} more lines`)}`);
  return shown.join("\n");
}

export function helpText(commands: CommandInfo[]): string {
  const builtins: [string, string][] = [
    ["/help", "Show this help"],
    ["/model [provider/model]", "Show the models, or switch to one"],
    ["/new", "Start a new session"],
    ["/resume", "Pick an earlier session of this folder"],
    ["/tree [id [--summarize]]", "Show the session tree, or continue from an entry"],
    ["/label [@id] [text]", "Label the current entry (or another); no text clears"],
    ["/reload", "Reload extensions"],
    ["/quit", "Leave KnightCode"],
  ];
  const rows = [
    ...builtins,
    ...commands.map((c): [string, string] => [
      `/${c.name}`,
      `${c.description ?? ""} ${dim(`(${c.owner ?? c.source})`)}`,
    ]),
  ];
  const width = Math.max(...rows.map(([a]) => a.length)) + 2;
  return rows.map(([a, b]) => `  ${a.padEnd(width)}${b}`).join("\n");
}

export function errorLine(message: string): string {
  return red(`✖ ${message}`);
}
