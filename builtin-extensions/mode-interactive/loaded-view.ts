/**
 * The start screen's list of what loaded: one line of counts (extensions, skills, prompt templates, MCP servers,
 * packages), expanded to the names with the key that expands tool output (ctrl+o by default), as pi's start screen
 * folds its sections.
 */
import type { LoadedSummary } from "@knightcodeai/cli/kit";
import { type Component, truncateToWidth, wrapTextWithAnsi } from "@knightcodeai/cli/tui";
import type { Look } from "./transcript.js";

function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

export class LoadedView implements Component {
  /** Its lines change only with a display toggle, which redraws everything. */
  readonly settled = true;

  constructor(
    private readonly look: Look,
    private readonly loaded: LoadedSummary,
    /** The expand key's name, for the hint. */
    private readonly expandKey: string,
  ) {}

  invalidate(): void {}

  render(width: number): string[] {
    const t = this.look.theme;
    const l = this.loaded;
    const own = l.extensions.filter((e) => e.origin !== "builtin");
    const builtin = l.extensions.length - own.length;
    const extensions = `${count(l.extensions.length, "extension")}${own.length > 0 ? ` (${own.length} yours)` : ` (built-in)`}`;
    const parts = [
      extensions,
      count(l.skills.length, "skill"),
      count(l.prompts.length, "prompt template"),
      count(l.mcpServers.length, "MCP server"),
      count(l.packages.length, "package"),
      ...(l.failed.length > 0 ? [t.fg("error", `${l.failed.length} failed`)] : []),
    ];
    if (!this.look.toolsExpanded) {
      return [
        truncateToWidth(t.fg("dim", `Loaded ${parts.join(" · ")} (${this.expandKey} lists them)`), width),
      ];
    }
    const section = (title: string, names: string[]): string[] =>
      names.length === 0
        ? []
        : wrapTextWithAnsi(`${t.fg("muted", `${title}:`)} ${names.join(", ")}`, Math.max(10, width - 2)).map(
            (line, i) => (i === 0 ? line : `  ${line}`),
          );
    return [
      t.fg("dim", `Loaded (${this.expandKey} folds):`),
      ...section("Extensions", [...own.map((e) => e.id), ...(builtin > 0 ? [`${builtin} built-in`] : [])]),
      ...section("Skills", l.skills),
      ...section(
        "Prompt templates",
        l.prompts.map((p) => `/${p}`),
      ),
      ...section("MCP servers", l.mcpServers),
      ...section("Packages", l.packages),
      ...l.failed.map((f) => t.fg("error", `Failed: ${f}`)),
    ].map((line) => truncateToWidth(line, width));
  }
}
