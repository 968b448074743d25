/**
 * The transcript's pieces: user and assistant messages (markdown, thinking shown or folded), tool calls drawn by
 * their renderers (output folded or expanded), shell commands, custom messages and notices. Each view keeps the
 * lines it drew for a width until it changes, so a frame while an answer streams redraws one message, not two
 * thousand; the terminal UI then writes only the lines that differ.
 */
import type {
  AssistantMessage,
  MessageRenderer,
  ToolRenderers,
  ToolResult,
  UIComponent,
  UITheme,
} from "@knightcodeai/cli/kit";
import { errorMessage } from "@knightcodeai/cli/kit";
import {
  type Component,
  Container,
  getCapabilities,
  getImageDimensions,
  getMarkdownTheme,
  Image,
  Markdown,
  truncateToWidth,
  wrapTextWithAnsi,
} from "@knightcodeai/cli/tui";
import { isImageLine } from "./renderer.js";

/** What every view reads when it draws: the theme and the person's display choices. */
export interface Look {
  readonly theme: UITheme;
  readonly showThinking: boolean;
  readonly toolsExpanded: boolean;
  readonly hiddenThinkingLabel: string;
  readonly cwd: string;
  /** Images are drawn (`terminal.showImages`), at most this wide, when the terminal can; undefined: named only. */
  readonly images?: { widthCells: number } | undefined;
  /** Where a renderer's failure goes (once per view). */
  warn(message: string): void;
}

const FOLDED_LINES = 4;
const EXPANDED_LINES = 400;

/** A view that keeps its lines until `changed()` or a new width; lines never exceed the width. */
abstract class View implements Component {
  private cache: { width: number; lines: string[] } | undefined;
  /** True while the view may still change (a message streaming, a tool running). */
  protected open = false;
  constructor(protected readonly look: Look) {}
  protected abstract draw(width: number): string[];
  /** Its lines change no more (until a display toggle redraws everything): they may go to the scrollback. */
  get settled(): boolean {
    return !this.open;
  }
  /** Declares the view finished, as when the run that fed it ended without a last word for it. */
  settle(): void {
    this.open = false;
  }
  changed(): void {
    this.cache = undefined;
  }
  invalidate(): void {
    this.cache = undefined;
  }
  render(width: number): string[] {
    if (this.cache?.width !== width) {
      // An image's line is its escape sequence: cutting it would break the picture.
      const fit = (line: string) => (isImageLine(line) ? line : truncateToWidth(line, width));
      this.cache = { width, lines: this.draw(width).map(fit) };
    }
    return this.cache.lines;
  }
}

function wrap(text: string, width: number, prefix = "", rest = prefix): string[] {
  const room = Math.max(10, width - Math.max(prefix.length, rest.length));
  return wrapTextWithAnsi(text, room).map((line, i) => `${i === 0 ? prefix : rest}${line}`);
}

/** Attached files are shown by name, not by content. */
export function displayPrompt(text: string): string {
  return text.replace(
    /<file name="([^"]+)">\n[\s\S]*?\n<\/file>(?:\n\n)?/g,
    (_m, name: string) => `[attached ${name}]\n`,
  );
}

export class UserMessageView extends View {
  constructor(
    look: Look,
    private readonly text: string,
    /** Images the message carries: drawn under it where the terminal can (the text says `[1 image]` anyway). */
    private readonly images: readonly { data: string; mimeType: string }[] = [],
  ) {
    super(look);
  }
  protected draw(width: number): string[] {
    const t = this.look.theme;
    const skill = skillRun(this.text);
    const drawn =
      this.look.images && getCapabilities().images
        ? this.images.flatMap((image) => imageLines(this.look, image, width - 2).map((l) => `  ${l}`))
        : [];
    if (!skill) return ["", ...wrap(displayPrompt(this.text), width, t.fg("accent", "› "), "  "), ...drawn];
    // A skill run is the skill's whole file: folded to its name unless tool output is expanded (ctrl+o).
    const lines = [
      "",
      `${t.fg("accent", "› ")}${t.fg("customMessageLabel", "[skill]")} ${t.bold(skill.name)}${
        this.look.toolsExpanded ? "" : t.fg("dim", " (ctrl+o expands)")
      }`,
    ];
    if (this.look.toolsExpanded) lines.push(...wrap(t.fg("muted", skill.body), width, "  │ ", "  │ "));
    if (skill.rest) lines.push(...wrap(displayPrompt(skill.rest), width, "  "));
    return lines;
  }
}

/** A message that runs a skill (`/skill:name args`): the skill's name, its text and what was typed after it. */
export function skillRun(text: string): { name: string; body: string; rest: string } | undefined {
  const match = /^<skill name="([^"]*)" path="[^"]*">\n([\s\S]*?)\n<\/skill>(?:\n\n([\s\S]*))?$/.exec(text);
  if (!match) return undefined;
  return { name: match[1]!, body: match[2]!, rest: match[3] ?? "" };
}

type Block = { kind: "text" | "thinking"; text: string; markdown?: Markdown; markdownTheme?: UITheme };

export class AssistantMessageView extends View {
  private blocks: Block[] = [];
  private error: string | undefined;
  private aborted = false;
  protected override open = true;

  /** A streamed piece of a text or thinking block (`contentIndex` as the provider numbers them). */
  append(kind: "text" | "thinking", index: number, delta: string): void {
    const block = this.blocks[index] ?? { kind, text: "" };
    this.blocks[index] = block;
    block.text += delta;
    this.changed();
  }

  /** The final message replaces what streamed (a `message_end` handler may have changed it). */
  finish(message: AssistantMessage): void {
    this.blocks = message.content.flatMap((part): Block[] => {
      if (part.type === "text") return [{ kind: "text", text: part.text }];
      if (part.type === "thinking") return [{ kind: "thinking", text: part.thinking }];
      return [];
    });
    this.error = message.stopReason === "error" ? (message.errorMessage ?? "the provider failed") : undefined;
    this.aborted = message.stopReason === "aborted";
    this.open = false;
    this.changed();
  }

  /** The text a person reads (for tests and `/copy`-like uses). */
  text(): string {
    return this.blocks
      .filter((b) => b?.kind === "text")
      .map((b) => b.text)
      .join("\n");
  }

  protected draw(width: number): string[] {
    const t = this.look.theme;
    const lines: string[] = [];
    for (const block of this.blocks) {
      if (!block?.text.trim()) continue;
      if (block.kind === "thinking") {
        if (this.look.showThinking) {
          lines.push(
            "",
            ...wrap(t.italic(t.fg("thinkingText", block.text.trim())), width, t.fg("dim", "┊ ")),
          );
        } else {
          lines.push("", t.fg("dim", `${this.look.hiddenThinkingLabel} (ctrl+t shows it)`));
        }
        continue;
      }
      if (!block.markdown || block.markdownTheme !== t) {
        block.markdown = new Markdown(block.text, 0, 0, getMarkdownTheme(t));
        block.markdownTheme = t;
      } else {
        block.markdown.setText(block.text);
      }
      lines.push("", ...block.markdown.render(width));
    }
    if (this.error) lines.push("", ...wrap(t.fg("error", this.error), width, t.fg("error", "✖ ")));
    if (this.aborted) lines.push(t.fg("dim", "(stopped)"));
    return lines;
  }
}

/** What a renderer returned: text, a component, or nothing usable (`undefined`). */
function rendered(value: unknown, width: number): string[] | undefined {
  if (typeof value === "string") return value.split("\n");
  if (value && typeof (value as UIComponent).render === "function")
    return (value as UIComponent).render(width);
  return undefined;
}

export class ToolCallView extends View {
  private result: ToolResult | undefined;
  private partial: ToolResult | undefined;
  private isError = false;
  private warned = false;
  /** When the tool started running (`tool_execution_start`); undefined while its arguments are written. */
  private startedAt: number | undefined;
  private durationMs: number | undefined;
  /** The arguments are still being written by the model. */
  private writing = false;
  /** Tool calls this call made (a codemode script's), drawn under it. */
  private readonly nested: ToolCallView[] = [];
  protected override open = true;

  constructor(
    look: Look,
    readonly toolCallId: string,
    readonly toolName: string,
    private args: unknown,
    private readonly renderers: () => ToolRenderers | undefined,
    /** How deep it is nested under other calls (0: the model's own call). */
    private readonly depth = 0,
  ) {
    super(look);
  }

  setArgs(args: unknown): void {
    this.args = args;
    this.changed();
  }

  /** The model is writing the arguments: `args` is what could be read of them so far. */
  writingArgs(args: unknown): void {
    this.writing = true;
    this.setArgs(args);
  }

  /** The tool runs from now (its arguments are complete). */
  started(at = Date.now()): void {
    this.writing = false;
    this.startedAt ??= at;
    this.changed();
  }

  get running(): boolean {
    return this.startedAt !== undefined && this.result === undefined;
  }

  /** A call this one made: it is drawn under this one, indented. */
  addNested(view: ToolCallView): void {
    this.nested.push(view);
    this.changed();
  }

  nestedView(toolName: string, toolCallId: string, args: unknown): ToolCallView {
    return new ToolCallView(this.look, toolCallId, toolName, args, () => undefined, this.depth + 1);
  }

  update(partial: ToolResult): void {
    this.partial = partial;
    this.changed();
  }

  finish(result: ToolResult, isError: boolean, durationMs?: number): void {
    this.result = result;
    this.isError = isError;
    this.partial = undefined;
    this.writing = false;
    this.durationMs = durationMs ?? (this.startedAt !== undefined ? Date.now() - this.startedAt : undefined);
    this.open = false;
    // Drawn from the session file: the calls the script made come from the result's record of them.
    if (this.nested.length === 0)
      for (const call of result.nestedCalls?.calls ?? []) {
        const view = this.nestedView(call.toolName, call.toolCallId, call.arguments ?? {});
        view.finish(
          { content: call.error ? [{ type: "text", text: call.error }] : [], details: undefined },
          call.status !== "ok",
          call.durationMs,
        );
        this.nested.push(view);
      }
    for (const view of this.nested) view.settle();
    this.changed();
  }

  override settle(): void {
    super.settle();
    for (const view of this.nested) view.settle();
  }

  override changed(): void {
    super.changed();
    this.onChange?.();
  }

  /** The view it is nested in: a change here redraws that one. */
  onChange: (() => void) | undefined;

  get done(): boolean {
    return this.result !== undefined;
  }

  private call<T>(run: () => T): T | undefined {
    try {
      return run();
    } catch (error) {
      if (!this.warned) this.look.warn(`The renderer of ${this.toolName} failed: ${errorMessage(error)}`);
      this.warned = true;
      return undefined;
    }
  }

  /** `(3s)` while it runs, `(1.2s)` once done; nothing while its arguments are written. */
  private time(): string {
    const ms =
      this.durationMs ??
      (this.startedAt !== undefined && !this.result ? Date.now() - this.startedAt : undefined);
    if (ms === undefined) return "";
    if (!this.result) return ` (${Math.floor(ms / 1000)}s)`;
    return ` (${formatDuration(ms)})`;
  }

  protected draw(width: number): string[] {
    const t = this.look.theme;
    const expanded = this.look.toolsExpanded;
    const renderers = this.renderers();
    const options = { expanded, isPartial: !this.result, cwd: this.look.cwd };
    const dot = !this.result ? t.fg("dim", "●") : this.isError ? t.fg("error", "●") : t.fg("success", "●");
    const custom = renderers?.renderCall && this.call(() => renderers.renderCall!(this.args, options));
    const time = t.fg("dim", `${this.time()}${this.writing ? " …" : ""}`);
    const head = rendered(custom, width - 2) ?? this.defaultHead(width);
    const lines = [
      ...(this.depth === 0 ? [""] : []),
      `${dot} ${head[0] ?? ""}${time}`,
      ...head.slice(1).map((l) => `  ${l}`),
    ];
    for (const view of this.nested) lines.push(...view.render(Math.max(10, width - 2)).map((l) => `  ${l}`));
    const result = this.result ?? this.partial;
    if (!result) return lines;
    const customResult =
      renderers?.renderResult &&
      this.call(() => renderers.renderResult!(result, { ...options, isError: this.isError }));
    const body = rendered(customResult, width - 4) ?? textLines(result);
    while (body.length > 0 && body[body.length - 1] === "") body.pop();
    const limit = expanded ? EXPANDED_LINES : this.depth > 0 ? 1 : FOLDED_LINES;
    const paint = (l: string) => (this.isError ? t.fg("error", l) : t.fg("toolOutput", l));
    for (const [i, line] of body.slice(0, limit).entries())
      lines.push(`${t.fg("dim", i === 0 ? "  ⎿ " : "    ")}${paint(line)}`);
    if (body.length > limit) {
      const hint = expanded ? "" : " (ctrl+o expands)";
      lines.push(t.fg("dim", `    … ${body.length - limit} more lines${hint}`));
    }
    if (this.result && !customResult)
      for (const part of this.result.content)
        if (part.type === "image")
          lines.push(...imageLines(this.look, part, width - 4).map((l) => `    ${l}`));
    return lines;
  }

  /** `$ command` for bash, a codemode script as its lines, else the name and the main argument. */
  private defaultHead(width: number): string[] {
    const t = this.look.theme;
    const record = (this.args && typeof this.args === "object" ? this.args : {}) as Record<string, unknown>;
    if (this.toolName === "bash" && typeof record.command === "string")
      return [`${t.bold("$")} ${t.fg("muted", oneLine(record.command, Math.max(20, width - 20)))}`];
    if (this.toolName === "codemode" && typeof record.code === "string") {
      const script = record.code.replace(/\s+$/, "").split("\n");
      const limit = this.look.toolsExpanded ? EXPANDED_LINES : SCRIPT_LINES;
      const shown = script.slice(0, limit).map((l) => `${t.fg("dim", "│ ")}${t.fg("muted", l)}`);
      if (script.length > limit)
        shown.push(t.fg("dim", `… ${script.length - limit} more script lines (ctrl+o expands)`));
      return [t.bold("codemode"), ...shown];
    }
    return [`${t.bold(this.toolName)} ${t.fg("muted", summary(this.args))}`];
  }
}

/** Lines of a codemode script shown while tool output is folded. */
const SCRIPT_LINES = 12;

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  return `${Math.floor(ms / 60_000)}m ${Math.round((ms % 60_000) / 1000)}s`;
}

function textLines(result: ToolResult): string[] {
  return result.content
    .filter((c) => c.type !== "image")
    .map((c) => (c.type === "text" ? c.text : `[${c.type}]`))
    .join("\n")
    .split("\n");
}

/**
 * An image drawn with the terminal's image protocol (kitty or iTerm2, as pi-tui detects it) when `terminal.showImages`
 * is on; otherwise one line naming it, with its size.
 */
export function imageLines(look: Look, image: { data: string; mimeType: string }, width: number): string[] {
  const t = look.theme;
  const size = getImageDimensions(image.data, image.mimeType);
  const named = `[image ${image.mimeType}${size ? ` ${size.widthPx}x${size.heightPx}` : ""}]`;
  if (!look.images || !getCapabilities().images || !size) return [t.fg("muted", named)];
  const drawn = new Image(
    image.data,
    image.mimeType,
    { fallbackColor: (text) => t.fg("muted", text) },
    { maxWidthCells: Math.max(1, Math.min(look.images.widthCells, width)) },
    size,
  );
  return drawn.render(Math.max(1, width));
}

function summary(args: unknown): string {
  if (args && typeof args === "object") {
    const record = args as Record<string, unknown>;
    for (const key of ["command", "path", "file_path", "pattern", "url", "query"]) {
      if (typeof record[key] === "string") return oneLine(record[key] as string, 100);
    }
  }
  return oneLine(JSON.stringify(args ?? {}), 100);
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** `!cmd` and `!!cmd`: the command, its output as it arrives (folded like tool output) and how it ended. */
export class BashView extends View {
  private output = "";
  private status: string | undefined;
  protected override open = true;
  constructor(
    look: Look,
    private readonly command: string,
    private readonly excluded: boolean,
  ) {
    super(look);
  }
  append(chunk: string): void {
    this.output += chunk;
    this.changed();
  }
  /** A shell command is no part of the agent's run: it settles when it ends, whatever the run does. */
  override settle(): void {}
  finish(exitCode: number | null, cancelled: boolean): void {
    this.status = cancelled ? "stopped" : exitCode === 0 ? undefined : `exit ${exitCode ?? "?"}`;
    this.open = false;
    this.changed();
  }
  protected draw(width: number): string[] {
    const t = this.look.theme;
    const mark = this.excluded ? "!!" : "!";
    const lines = [
      "",
      `${t.fg("bashMode", mark)} ${t.bold(this.command)}${this.excluded ? t.fg("dim", "  (not sent)") : ""}`,
    ];
    const body = this.output.replace(/\n$/, "").split("\n");
    const limit = this.look.toolsExpanded ? EXPANDED_LINES : FOLDED_LINES;
    if (this.output)
      for (const [i, line] of body.slice(0, limit).entries())
        lines.push(`${t.fg("dim", i === 0 ? "  ⎿ " : "    ")}${t.fg("toolOutput", line)}`);
    if (body.length > limit)
      lines.push(t.fg("dim", `    … ${body.length - limit} more lines (ctrl+o expands)`));
    if (this.status) lines.push(t.fg("warning", `    (${this.status})`));
    return lines.map((l) => truncateToWidth(l, width));
  }
}

/** A custom message: what its extension's renderer draws, else its type and text. */
export class CustomMessageView extends View {
  constructor(
    look: Look,
    private readonly message: { customType: string; content: unknown; details?: unknown },
    private readonly renderer: MessageRenderer | undefined,
  ) {
    super(look);
  }
  protected draw(width: number): string[] {
    const t = this.look.theme;
    if (this.renderer) {
      try {
        const lines = rendered(this.renderer(this.message, { expanded: this.look.toolsExpanded }), width);
        if (lines) return ["", ...lines];
      } catch (error) {
        this.look.warn(`The renderer of ${this.message.customType} messages failed: ${errorMessage(error)}`);
      }
    }
    const content = this.message.content;
    const text =
      typeof content === "string"
        ? content
        : Array.isArray(content)
          ? content
              .map((c: { type?: string; text?: string }) => (c?.type === "text" ? c.text : `[${c?.type}]`))
              .join("\n")
          : "";
    return ["", ...wrap(text, width, t.fg("customMessageLabel", `[${this.message.customType}] `), "  ")];
  }
}

/** One line of information from the mode or an extension (`notify`). */
export class NoticeView extends View {
  constructor(
    look: Look,
    private readonly text: string,
    private readonly level: "info" | "warning" | "error" | "muted" = "info",
  ) {
    super(look);
  }
  protected draw(width: number): string[] {
    const t = this.look.theme;
    const mark =
      this.level === "error"
        ? t.fg("error", "✖ ")
        : this.level === "warning"
          ? t.fg("warning", "! ")
          : this.level === "info"
            ? t.fg("accent", "ℹ ")
            : "";
    const body = this.level === "muted" ? t.fg("dim", this.text) : this.text;
    return wrap(body, width, mark, "  ");
  }
}

/** A component an extension made (a header or widget), kept inside the width it is given. */
export class Fitted implements Component {
  constructor(readonly inner: UIComponent) {}
  /** Focus reaches the component, so an input inside it shows the cursor. */
  get focused(): boolean {
    return (this.inner as { focused?: boolean }).focused === true;
  }
  set focused(value: boolean) {
    if ("focused" in this.inner) (this.inner as { focused: boolean }).focused = value;
  }
  render(width: number): string[] {
    return this.inner.render(width).map((line) => truncateToWidth(line, width));
  }
  handleInput(data: string): void {
    this.inner.handleInput?.(data);
  }
  invalidate(): void {
    this.inner.invalidate();
  }
}

/**
 * The transcript: views in order, tool calls findable by id. Its lines are kept between frames; a frame re-joins
 * only from the first view whose lines changed (views return the same array until they change), and does not even
 * look at the settled views at the start, so streaming into the last message of a long transcript costs what the
 * message costs, not the thousands of lines above it. The settled start is also what may go to the terminal's
 * scrollback (`finalLines`, scrollback-tui.ts).
 */
export class Transcript extends Container {
  private readonly calls = new Map<string, ToolCallView>();
  /** The joined lines, each child's lines (`parts`) and where they start in `lines` (`starts`). */
  private joined: { width: number; parts: string[][]; starts: number[]; lines: string[] } | undefined;
  /** How many children from the start are settled, and their lines. */
  private settledStart: { width: number; children: number; lines: number } | undefined;
  /** Grows when lines already reported final may change: everything is cleared or redrawn. */
  epoch = 0;

  add(view: Component): void {
    this.addChild(view);
    if (view instanceof ToolCallView) this.calls.set(view.toolCallId, view);
  }

  /** A call drawn inside another one (nested): findable by id, drawn by its parent. */
  register(view: ToolCallView): void {
    this.calls.set(view.toolCallId, view);
  }

  call(toolCallId: string): ToolCallView | undefined {
    return this.calls.get(toolCallId);
  }

  /** Every view is finished (the run ended, or history was drawn): what never got its last word stays as is. */
  settleAll(): void {
    for (const child of this.children) (child as { settle?(): void }).settle?.();
  }

  override clear(): void {
    super.clear();
    this.calls.clear();
    this.reset();
  }

  override invalidate(): void {
    super.invalidate();
    this.reset();
  }

  private reset(): void {
    this.joined = undefined;
    this.settledStart = undefined;
    this.epoch++;
  }

  /**
   * The lines at the start, at this width, that cannot change: those of the settled views before any open one,
   * as the last frame joined them (a view that settled since is counted once a frame has drawn its last lines).
   */
  finalLines(width: number): number {
    const start = this.settledStart?.width === width ? this.settledStart : { width, children: 0, lines: 0 };
    const parts = this.joined?.width === width ? this.joined.parts : [];
    while (start.children < parts.length) {
      const child = this.children[start.children] as Component & { settled?: boolean };
      const lines = child.render(width);
      if (child.settled !== true || lines !== parts[start.children]) break;
      start.lines += lines.length;
      start.children++;
    }
    this.settledStart = start;
    return start.lines;
  }

  override render(width: number): string[] {
    const joined =
      this.joined?.width === width ? this.joined : { width, parts: [], starts: [], lines: [] as string[] };
    this.joined = joined;
    const { parts, starts, lines } = joined;
    const children = this.children;
    // Settled views drawn before are where they were; look from the first view after them.
    let same = Math.min(this.settledStart?.width === width ? this.settledStart.children : 0, parts.length);
    while (same < children.length && same < parts.length && children[same]!.render(width) === parts[same])
      same++;
    if (same === children.length && same === parts.length) return lines;
    // The array is reused: the terminal UI copies what a component returns before it changes anything.
    lines.length = same < starts.length ? starts[same]! : lines.length;
    parts.length = same;
    starts.length = same;
    for (let i = same; i < children.length; i++) {
      const part = children[i]!.render(width);
      starts.push(lines.length);
      parts.push(part);
      for (const line of part) lines.push(line);
    }
    return lines;
  }
}
