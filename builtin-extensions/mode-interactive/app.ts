/**
 * The full terminal UI of the interactive mode, on pi-tui's differential renderer. The screen, top to bottom:
 * header, transcript, queued messages, working row, widgets above the editor, the editor (or a dialog, or an
 * extension's component in its place), widgets below, footer. Everything but the transcript stays at the bottom;
 * the transcript grows into the terminal's scrollback, and each frame rewrites only the lines that changed.
 *
 * This file holds behaviour: session events into transcript views, keys into actions, the editor's text into
 * prompts, steering, follow-ups and shell commands. `ctx.ui` is app-ui.ts; built-in commands are commands.ts.
 */
import { basename } from "node:path";
import type {
  AgentMessage,
  AssistantMessage,
  AssistantMessageEvent,
  CustomMessage,
  ImageContent,
  ModeContext,
  SessionEntry,
  SessionStreamEvent,
  ToolResult,
  UIEditorComponent,
  UITheme,
} from "@knightcodeai/cli/kit";
import { errorMessage, ThemeSelection, VERSION } from "@knightcodeai/cli/kit";
import {
  asTUI,
  type Component,
  Container,
  Editor,
  getEditorTheme,
  type KeyId,
  matchesKey,
  ProcessTerminal,
  type Terminal,
  truncateToWidth,
} from "@knightcodeai/cli/tui";
import { AppUI } from "./app-ui.js";
import { BUILTIN_COMMANDS, DISPLAY_SETTINGS, runBuiltin } from "./commands.js";
import { attachFiles, PromptCompletions } from "./completions.js";
import { Footer, FooterState, WorkingRow } from "./footer.js";
import {
  attachImages,
  ImageResizeError,
  namesImages,
  readClipboardImage,
  saveClipboardImage,
} from "./images.js";
import { bindingsOnKey, type LoadedKeybindings, loadKeybindings } from "./keybindings.js";
import { LoadedView } from "./loaded-view.js";
import { noModelLines } from "./model-commands.js";
import { partialArgs } from "./partial-json.js";
import { ScrollbackRenderer } from "./renderer.js";
import { RunningTools } from "./running-tools.js";
import { type DoubleEscapeAction, readDisplaySettings } from "./settings-menu.js";
import { passThrough, stderrToNotices } from "./stderr-notices.js";
import { editExternally, suspend } from "./terminal-handoff.js";
import {
  AssistantMessageView,
  BashView,
  CustomMessageView,
  type Look,
  NoticeView,
  ToolCallView,
  Transcript,
  UserMessageView,
} from "./transcript.js";
import type { TreeFilter } from "./tree-picker.js";

type Level = "info" | "warning" | "error" | "muted";

export class App {
  readonly tui: ScrollbackRenderer;
  readonly ui: AppUI;
  readonly themes = new ThemeSelection();
  readonly transcript = new Transcript();
  readonly header = new Container();
  readonly above = new Container();
  readonly below = new Container();
  readonly editorSlot = new Container();
  readonly footerSlot = new Container();
  readonly footerState: FooterState;
  readonly footer: Footer;
  readonly working: WorkingRow;
  readonly completions: PromptCompletions;
  readonly look: Look;
  /** The mode's own editor; `editor` is what takes input now (an extension's replacement, say). */
  readonly defaultEditor: Editor;
  editor: UIEditorComponent & Component;
  keys: LoadedKeybindings;
  showThinking = false;
  toolsExpanded = false;
  hiddenThinkingLabel = "Thinking…";
  autocompleteMaxVisible = 8;
  /** OSC 9;4 progress while the agent works (the `terminalProgress` setting). */
  terminalProgress = false;
  /** Images drawn in the terminal when it can (`terminal.showImages`), this many columns wide at most. */
  showImages = true;
  imageWidthCells = 60;
  /** Pasted images over 2000x2000 pixels are scaled down to fit (`images.autoResize`). */
  autoResize = true;
  /** What esc twice on an empty editor does (`doubleEscapeAction`). */
  doubleEscapeAction: DoubleEscapeAction = "tree";
  /** The filter `/tree` opens with (`treeFilterMode`). */
  treeFilterMode: TreeFilter = "default";
  /** `quietStartup`: true hides the header and the list of what loaded; "header" hides only the list. */
  quietStartup: boolean | "header" = false;
  private lastEscape = 0;

  private readonly queueView = new Container();
  private readonly defaultHeader: Component;
  /** Dialogs and in-place components over the editor, newest last. */
  private readonly layers: Component[] = [];
  private streaming: AssistantMessageView | undefined;
  /** Tool calls being written and running: their elapsed time ticks. */
  private readonly tools = new RunningTools(() => this.render());
  private bash: { view: BashView; abort: AbortController } | undefined;
  private shownSession: string | undefined;
  private lastCtrlC = 0;
  /** A tree move waits for a branch summary (esc stops it). */
  private summarizing = false;
  /** A message's images are being attached (resized in a worker): esc stops it. */
  private attaching: AbortController | undefined;
  /** Grows when the header is replaced: lines of it may be in the scrollback already. */
  private headerEpoch = 0;
  private quitting = false;
  private restoreStderr: () => void = () => {};
  private stopped = false;
  private finished: () => void = () => {};
  /** Settles when the person quits. */
  readonly done: Promise<void>;

  /** `settings`: the session's merged settings, for the display choices `/settings` saves. */
  constructor(
    readonly session: ModeContext["session"],
    ownTerminal?: Terminal,
    settings: Record<string, unknown> = {},
    /** The host's stores: `/settings` and `/trust` save through them (absent: nothing is saved). */
    readonly host?: ModeContext["host"],
  ) {
    this.showThinking = settings[DISPLAY_SETTINGS.hideThinking] === false;
    this.toolsExpanded = settings[DISPLAY_SETTINGS.expandTools] === true;
    this.terminalProgress = settings[DISPLAY_SETTINGS.terminalProgress] === true;
    const rows = settings[DISPLAY_SETTINGS.autocompleteMaxVisible];
    if (typeof rows === "number" && rows >= 3 && rows <= 20) this.autocompleteMaxVisible = rows;
    const padding = settings[DISPLAY_SETTINGS.editorPadding];
    const display = readDisplaySettings(settings);
    this.showImages = display.showImages;
    this.imageWidthCells = display.imageWidthCells;
    this.autoResize = display.autoResize;
    this.doubleEscapeAction = display.doubleEscapeAction;
    this.treeFilterMode = display.treeFilterMode;
    this.quietStartup = display.quietStartup;
    this.tui = new ScrollbackRenderer(ownTerminal ?? passThrough(new ProcessTerminal()));
    const app = this;
    // The header and the settled messages after it are final: once scrolled off, frames leave them out.
    this.tui.setFinalLines({
      finalLines: (width) => this.header.render(width).length + this.transcript.finalLines(width),
      get epoch() {
        return app.transcript.epoch + app.headerEpoch;
      },
    });
    this.look = {
      get theme() {
        return app.themes.theme;
      },
      get showThinking() {
        return app.showThinking;
      },
      get toolsExpanded() {
        return app.toolsExpanded;
      },
      get hiddenThinkingLabel() {
        return app.hiddenThinkingLabel;
      },
      get images() {
        return app.showImages ? { widthCells: app.imageWidthCells } : undefined;
      },
      cwd: session.cwd,
      warn: (message) => this.notice(message, "warning"),
    };
    this.done = new Promise((resolve) => {
      this.finished = resolve;
    });
    this.shownSession = session.getState().sessionId;
    this.keys = loadKeybindings(session.agentDir);
    this.footerState = new FooterState(
      session.cwd,
      () => new Set(session.getAvailableModels().map((m) => m.provider)).size,
    );
    this.footer = new Footer(session, this.footerState, () => this.theme);
    this.footerState.onBranchChange(() => {
      this.footer.changed();
      this.render();
    });
    this.working = new WorkingRow(this.tui, () => this.theme);
    this.completions = new PromptCompletions(session.cwd, () => [
      ...BUILTIN_COMMANDS.map((c) => ({ name: c.name, description: c.description })),
      ...session
        .getCommands()
        .map((c) => ({ name: c.name, ...(c.description ? { description: c.description } : {}) })),
    ]);
    this.defaultEditor = new Editor(asTUI(this.tui), getEditorTheme(this.theme), {
      paddingX: typeof padding === "number" && padding >= 0 && padding <= 3 ? padding : 1,
      autocompleteMaxVisible: this.autocompleteMaxVisible,
    });
    this.defaultEditor.setAutocompleteProvider(this.completions);
    this.defaultEditor.onSubmit = (text) => this.onSubmit(text);
    this.editor = this.defaultEditor;
    this.defaultHeader = {
      invalidate() {},
      render: (width) => {
        const t = this.theme;
        return [
          truncateToWidth(`${t.bold(t.fg("accent", "KnightCode"))} ${t.fg("dim", VERSION)}`, width),
          truncateToWidth(
            t.fg("dim", "esc stops · ctrl+c clears · / commands · @ files · ! shell · /hotkeys for keys"),
            width,
          ),
        ];
      },
    };
    if (this.quietStartup !== true) this.header.addChild(this.defaultHeader);
    this.editorSlot.addChild(this.editor);
    this.footerSlot.addChild(this.footer);
    for (const part of [
      this.header,
      this.transcript,
      this.queueView,
      this.working,
      this.above,
      this.editorSlot,
      this.below,
      this.footerSlot,
    ])
      this.tui.addChild(part);
    this.tui.addInputListener((data) => this.onKey(data));
    this.ui = new AppUI(this);
    this.themes.onChange(() => {
      this.defaultEditor.borderColor = getEditorTheme(this.theme).borderColor;
      this.tui.invalidate();
      this.tui.requestRender(true);
    });
    this.tui.setFocus(this.editor);
    this.tui.start();
    // Only the real terminal: a test's model terminal leaves the test runner's stderr alone.
    if (!ownTerminal) this.restoreStderr = stderrToNotices((line) => this.notice(line, "warning"));
    for (const problem of this.keys.problems) this.notice(problem, "warning");
  }

  get theme(): UITheme {
    return this.themes.theme;
  }

  async run(ctx: ModeContext): Promise<number> {
    const unsubscribe = this.session.subscribe((event) => this.onEvent(event));
    ctx.signal.addEventListener("abort", () => this.quit(), { once: true });
    ctx.shutdown?.addEventListener("abort", () => this.quit(), { once: true });
    // What extensions said while the session started stays, after the history of a resumed session.
    const early = [...this.transcript.children];
    this.showHistory();
    for (const view of early) this.transcript.add(view);
    this.showLoaded();
    if (!this.session.getState().model) this.notice(noModelLines(this.session).join("\n"), "warning");
    this.checkShortcuts();
    if (ctx.options.resume && !this.quitting) await runBuiltin(this, "resume", "");
    for (const prompt of ctx.prompts) if (!this.quitting) await this.submit(prompt);
    await this.done;
    unsubscribe();
    if (!this.session.isIdle()) {
      this.session.abort();
      await this.session.waitForIdle();
    }
    this.stop();
    return 0;
  }

  /** What the session loaded, folded to one line on the start screen (the expand key lists the names). */
  private showLoaded(): void {
    if (this.quietStartup !== false) return;
    const expand = this.keys.manager.getKeys("app.tools.expand")[0];
    this.transcript.add(new LoadedView(this.look, this.session.getLoaded(), expand ?? "ctrl+o"));
  }

  /** Leaves the terminal as it was (also when the session never got to run); safe to call twice. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.working.stop();
    this.tools.stop();
    this.restoreStderr();
    this.footerState.dispose();
    for (const layer of this.layers) (layer as { dispose?(): void }).dispose?.();
    this.tui.stop();
  }

  quit(): void {
    if (this.quitting) return;
    this.quitting = true;
    this.attaching?.abort();
    this.ui.closeAll();
    this.finished();
  }

  render(): void {
    this.tui.requestRender();
  }

  notice(text: string, level: Level = "info"): void {
    this.transcript.add(new NoticeView(this.look, text, level));
    this.render();
  }

  // ---- what takes keys: the editor, or a dialog or component over it ----

  /** Shows a component in place of the editor and gives it the keys until `closeLayer`. */
  openLayer(component: Component): void {
    this.layers.push(component);
    this.editorSlot.clear();
    this.editorSlot.addChild(component);
    this.tui.setFocus(component);
    this.render();
  }

  closeLayer(component: Component): void {
    const index = this.layers.indexOf(component);
    if (index < 0) return;
    this.layers.splice(index, 1);
    const top = this.layers.at(-1) ?? this.editor;
    this.editorSlot.clear();
    this.editorSlot.addChild(top);
    if (!this.tui.hasOverlay()) this.tui.setFocus(top);
    this.render();
  }

  /** An extension's header, or the mode's own with `undefined`. */
  setHeader(component: Component | undefined): void {
    this.header.clear();
    const shown = component ?? (this.quietStartup === true ? undefined : this.defaultHeader);
    if (shown) this.header.addChild(shown);
    this.headerEpoch++;
    this.render();
  }

  /** Puts another editor in place (an extension's), keeping the text. */
  replaceEditor(editor: UIEditorComponent & Component): void {
    const text = this.editor.getText();
    this.editor = editor;
    editor.setText(text);
    editor.onSubmit = (value) => this.onSubmit(value);
    if (this.layers.length === 0) {
      this.editorSlot.clear();
      this.editorSlot.addChild(editor);
      this.tui.setFocus(editor);
    }
    this.render();
  }

  private editorHasFocus(): boolean {
    return this.layers.length === 0 && !this.tui.hasOverlay();
  }

  private onKey(data: string): { consume?: boolean; data?: string } | undefined {
    const passed = this.ui.terminalInput(data);
    if (passed === undefined) return { consume: true };
    data = passed;
    if (!this.editorHasFocus()) {
      // A dialog or component has the keys; ctrl+c dismisses it (and every other one open), as esc does in a dialog.
      if (!this.keys.manager.matches(data, "app.clear")) return undefined;
      this.ui.closeAll();
      return { consume: true };
    }
    const keys = this.keys.manager;
    if (this.runShortcut(data)) return { consume: true };
    const completing = this.editor === this.defaultEditor && this.defaultEditor.isShowingAutocomplete();
    // Two escapes read at once (a quick double press on a busy machine, or over ssh) count as esc twice.
    if (data === "\x1b\x1b" && keys.matches("\x1b", "app.interrupt") && !completing && this.doubleEscape()) {
      return { consume: true };
    }
    if (keys.matches(data, "app.interrupt") && !completing) {
      if (this.attaching) {
        this.attaching.abort();
        return { consume: true };
      }
      if (this.bash) {
        this.bash.abort.abort();
        return { consume: true };
      }
      if (!this.session.isIdle() || this.summarizing) {
        this.interrupt();
        return { consume: true };
      }
      if (Date.now() - this.lastEscape < 500 && this.doubleEscape()) return { consume: true };
      this.lastEscape = Date.now();
      return undefined;
    }
    if (keys.matches(data, "app.clear")) {
      if (!this.session.isIdle()) this.interrupt();
      else if (this.editor.getText()) this.editor.setText("");
      else if (Date.now() - this.lastCtrlC < 1500) this.quit();
      else {
        this.lastCtrlC = Date.now();
        this.notice("Press ctrl+c again to quit", "muted");
      }
      this.render();
      return { consume: true };
    }
    if (keys.matches(data, "app.exit") && this.editor.getText() === "") {
      this.quit();
      return { consume: true };
    }
    if (keys.matches(data, "app.followUp")) {
      const text = this.editor.getText().trim();
      if (!text) return { consume: true };
      this.editor.setText("");
      if (this.session.isIdle()) void this.submit(text);
      else this.session.followUp(this.queuedText(text));
      this.render();
      return { consume: true };
    }
    if (keys.matches(data, "app.editor.external")) {
      editExternally(this);
      return { consume: true };
    }
    if (keys.matches(data, "app.suspend")) {
      suspend(this);
      return { consume: true };
    }
    if (keys.matches(data, "app.model.select")) {
      if (this.session.isIdle()) void this.submit("/model");
      else this.notice("/model waits for the run to finish (esc stops it)", "warning");
      return { consume: true };
    }
    if (keys.matches(data, "app.message.dequeue")) {
      this.dequeue();
      return { consume: true };
    }
    if (keys.matches(data, "app.clipboard.pasteImage")) {
      void this.pasteClipboardImage();
      return { consume: true };
    }
    if (keys.matches(data, "app.tools.expand")) {
      this.toolsExpanded = !this.toolsExpanded;
      this.transcript.invalidate();
      this.render();
      return { consume: true };
    }
    if (keys.matches(data, "app.thinking.toggle")) {
      this.showThinking = !this.showThinking;
      this.transcript.invalidate();
      this.render();
      return { consume: true };
    }
    if (keys.matches(data, "app.thinking.cycle")) {
      const model = this.session.getState().model;
      if (!model?.reasoning) return { consume: true };
      const levels = ["off", "minimal", "low", "medium", "high", "xhigh"] as const;
      const next = levels[(levels.indexOf(this.session.getThinkingLevel()) + 1) % levels.length]!;
      this.session.setThinkingLevel(next);
      this.footer.changed();
      this.render();
      return { consume: true };
    }
    if (keys.matches(data, "app.model.cycle")) {
      void this.session.cycleModel().then((next) => {
        if (!next) this.notice("No model can be used yet: /login stores a key", "warning");
        this.footer.changed();
        this.render();
      });
      return { consume: true };
    }
    return undefined;
  }

  /**
   * Esc twice within half a second on an empty editor while idle: the tree, or the fork picker (pi's double
   * escape, `doubleEscapeAction`). False when it does not apply (text in the editor, busy, or `none`).
   */
  private doubleEscape(): boolean {
    this.lastEscape = 0;
    if (this.doubleEscapeAction === "none" || this.editor.getText() !== "") return false;
    if (this.bash || !this.session.isIdle() || this.summarizing) return false;
    void runBuiltin(this, this.doubleEscapeAction, "");
    return true;
  }

  /**
   * Runs a tree move that may wait for a branch summary: the working row says so, and esc (the session's abort)
   * stops the summary, leaving the session where it was.
   */
  async whileSummarizing<T>(summarizing: boolean, move: () => Promise<T>): Promise<T> {
    if (!summarizing) return move();
    const message = this.working.message;
    this.summarizing = true;
    this.working.message = "Summarizing the branch you leave…";
    this.working.start();
    try {
      return await move();
    } finally {
      this.summarizing = false;
      this.working.message = message;
      this.working.stop();
    }
  }

  /** alt+up: queued steers and follow-ups come back to the editor (not sent) to edit and send again. */
  private dequeue(): void {
    const { steering, followUp } = this.session.clearQueue();
    const returned = [...steering, ...followUp];
    if (returned.length === 0) {
      this.notice("No queued messages to edit", "muted");
      return;
    }
    this.editor.setText([...returned, this.editor.getText()].filter(Boolean).join("\n"));
    this.render();
  }

  private interrupt(): void {
    const { steering, followUp } = this.session.abort();
    const returned = [...steering, ...followUp];
    // What was queued and not sent goes back to the editor, so nothing typed is lost.
    if (returned.length) this.editor.setText([...returned, this.editor.getText()].filter(Boolean).join("\n"));
    this.render();
  }

  /** Extension shortcuts: true when one took the key. */
  private runShortcut(data: string): boolean {
    for (const shortcut of this.session.getShortcuts()) {
      if (this.shortcutSkipped.has(shortcut.key) || !this.keyMatches(data, shortcut.key)) continue;
      void this.session.runShortcut(shortcut.key).catch((error: unknown) => {
        this.notice(`Shortcut ${shortcut.key} failed: ${errorMessage(error)}`, "error");
      });
      return true;
    }
    return false;
  }

  private readonly shortcutSkipped = new Set<string>();

  private keyMatches(data: string, key: string): boolean {
    try {
      return matchesKey(data, key as KeyId);
    } catch {
      // A key id pi-tui cannot parse matches nothing.
      return false;
    }
  }

  /** Shortcuts on a key the app already uses are reported and left out: the built-in binding keeps its key. */
  checkShortcuts(): void {
    this.shortcutSkipped.clear();
    for (const shortcut of this.session.getShortcuts()) {
      const taken = bindingsOnKey(this.keys.manager, shortcut.key);
      if (taken.length === 0) continue;
      this.shortcutSkipped.add(shortcut.key);
      this.notice(
        `${shortcut.owner}: shortcut ${shortcut.key} is already bound to ${taken.join(", ")}; it is not active (rebind in keybindings.json)`,
        "warning",
      );
    }
  }

  // ---- input ----

  private onSubmit(text: string): void {
    const trimmed = text.trim();
    if (!trimmed) return;
    if (this.editor === this.defaultEditor) this.defaultEditor.addToHistory(trimmed);
    if (trimmed.startsWith("!")) {
      void this.runBash(trimmed);
      return;
    }
    if (!this.session.isIdle() && !trimmed.startsWith("/")) {
      this.session.steer(this.queuedText(trimmed));
      this.render();
      return;
    }
    void this.submit(trimmed);
  }

  /**
   * The message with its `@files` attached, and the images its paths name. An image over the size limit is resized
   * in a worker thread while the working row says so; the UI keeps drawing and taking keys, and esc stops it. When a
   * resize fails or is stopped the message is not sent: undefined, and the text goes back to the editor.
   */
  private async withAttachments(text: string): Promise<{ text: string; images: ImageContent[] } | undefined> {
    const { text: full, errors } = attachFiles(text, this.session.cwd);
    for (const error of errors) this.notice(error, "warning");
    const abort = new AbortController();
    this.attaching = abort;
    const message = this.working.message;
    let working = false;
    try {
      const attached = await attachImages(text, this.session.cwd, {
        autoResize: this.autoResize,
        signal: abort.signal,
        onResize: (written, size) => {
          this.working.message = `Resizing ${basename(written)} (${size.width}x${size.height})…`;
          if (!working) this.working.start();
          working = true;
          this.render();
        },
      });
      for (const error of attached.errors) this.notice(error, "warning");
      for (const note of attached.notes) this.notice(note, "muted");
      return { text: full, images: attached.images };
    } catch (error) {
      if (!(error instanceof ImageResizeError)) throw error;
      if (!this.quitting) {
        this.notice(
          `${error.message}; the message was not sent (its text is back in the editor)`,
          error.stopped ? "warning" : "error",
        );
        this.editor.setText([text, this.editor.getText()].filter(Boolean).join("\n"));
      }
      return undefined;
    } finally {
      this.attaching = undefined;
      if (working) {
        this.working.message = message;
        this.working.stop();
      }
    }
  }

  /** A steer or follow-up: the session queues text only, so images it names go with the next message sent idle. */
  private queuedText(text: string): string {
    const { text: full, errors } = attachFiles(text, this.session.cwd);
    for (const error of errors) this.notice(error, "warning");
    if (namesImages(text, this.session.cwd))
      this.notice(
        "Images go with a message sent while the agent is idle; this one is queued as text",
        "warning",
      );
    return full;
  }

  /** ctrl+v: the clipboard's image saved to a file whose path is typed into the editor (sent as an image). */
  private async pasteClipboardImage(): Promise<void> {
    const read = await readClipboardImage();
    if ("missing" in read) {
      this.notice(`No image pasted: ${read.missing}`, "muted");
      return;
    }
    const saved = saveClipboardImage(read.bytes);
    if ("error" in saved) {
      this.notice(`No image pasted: ${saved.error}`, "muted");
      return;
    }
    const editor = this.editor as UIEditorComponent & { insertTextAtCursor?(text: string): void };
    if (editor.insertTextAtCursor) editor.insertTextAtCursor(`${saved.path} `);
    else editor.setText(`${editor.getText()}${saved.path} `);
    this.render();
  }

  /** A prompt or a command, as typed (or given on the command line). */
  async submit(text: string): Promise<void> {
    try {
      const command = /^\/(\S+)\s*([\s\S]*)$/.exec(text);
      if (command && (await runBuiltin(this, command[1]!, command[2]!.trim()))) return;
      if (command) await this.session.prompt(text);
      else if (this.attaching) {
        // The message before is still having its images resized; this one waits in the editor.
        this.editor.setText([text, this.editor.getText()].filter(Boolean).join("\n"));
        this.notice(
          "An image of the message before is still being resized (esc stops it); send this one after",
          "warning",
        );
      } else {
        const attached = await this.withAttachments(text);
        if (attached)
          await this.session.prompt(
            attached.text,
            attached.images.length > 0 ? { images: attached.images } : {},
          );
      }
    } catch (error) {
      this.notice(errorMessage(error), "error");
    } finally {
      this.afterCommand();
    }
  }

  /** A command may have replaced the session (new, resume, fork, an extension's): show the one now active. */
  afterCommand(): void {
    if (this.session.getState().sessionId !== this.shownSession && this.session.isIdle()) this.showHistory();
    this.footer.changed();
    this.render();
  }

  private async runBash(text: string): Promise<void> {
    const excluded = text.startsWith("!!");
    const command = text.slice(excluded ? 2 : 1).trim();
    if (!command) return;
    if (this.bash) {
      this.notice("A shell command is still running; esc stops it", "warning");
      return;
    }
    const view = new BashView(this.look, command, excluded);
    const abort = new AbortController();
    this.bash = { view, abort };
    this.transcript.add(view);
    this.render();
    try {
      const result = await this.session.executeBash(command, {
        excludeFromContext: excluded,
        signal: abort.signal,
        onData: (chunk) => {
          view.append(chunk);
          this.render();
        },
      });
      view.finish(result.exitCode, result.cancelled);
    } catch (error) {
      this.notice(errorMessage(error), "error");
    } finally {
      this.bash = undefined;
      this.completions.refreshFiles();
      this.render();
    }
  }

  // ---- session events into the transcript ----

  onEvent(event: SessionStreamEvent): void {
    switch (event.type) {
      case "agent_settled":
        if (this.terminalProgress) this.tui.terminal.write(PROGRESS_OFF);
        this.transcript.settleAll();
        this.working.stop();
        this.footerState.refreshBranch();
        this.footer.changed();
        break;
      case "message_start":
        this.messageStart(event.message as AgentMessage);
        break;
      case "message_update": {
        const update = event.assistantMessageEvent as { type: string; contentIndex?: number; delta?: string };
        if (update.type.startsWith("toolcall_")) {
          this.streamToolCall(event.assistantMessageEvent as AssistantMessageEvent);
          break;
        }
        if (!this.streaming || !update.delta) break;
        if (update.type === "text_delta")
          this.streaming.append("text", update.contentIndex ?? 0, update.delta);
        else if (update.type === "thinking_delta")
          this.streaming.append("thinking", update.contentIndex ?? 0, update.delta);
        break;
      }
      case "message_end": {
        const message = event.message as AgentMessage;
        if (message.role === "assistant" && this.streaming) {
          this.streaming.finish(message as AssistantMessage);
          this.streaming = undefined;
        }
        this.footer.changed();
        break;
      }
      case "tool_execution_start": {
        const view = this.toolView(
          String(event.toolCallId),
          String(event.toolName),
          event.args,
          event.parentToolCallId as string | undefined,
        );
        view.started();
        this.tools.running(view);
        break;
      }
      case "tool_execution_update":
        if (!event.partialResult) break;
        this.toolView(
          String(event.toolCallId),
          String(event.toolName),
          event.args,
          event.parentToolCallId as string | undefined,
        ).update(event.partialResult as ToolResult);
        break;
      case "tool_execution_end":
        this.toolView(
          String(event.toolCallId),
          String(event.toolName),
          undefined,
          event.parentToolCallId as string | undefined,
        ).finish(
          event.result as ToolResult,
          event.isError === true,
          typeof event.durationMs === "number" ? event.durationMs : undefined,
        );
        break;
      case "queue_update":
        this.showQueue(event.steering as string[], event.followUp as string[]);
        break;
      case "auto_retry_start":
        this.notice(
          `Retrying in ${Math.round(Number(event.delayMs) / 100) / 10}s: ${String(event.errorMessage)}`,
          "muted",
        );
        break;
      case "compaction_start":
        this.notice(`Compacting the conversation (${String(event.reason)})…`, "muted");
        break;
      case "compaction_end": {
        const result = event.result as { tokensBefore: number; estimatedTokensAfter?: number } | undefined;
        if (result) {
          const after =
            result.estimatedTokensAfter !== undefined ? ` → about ${result.estimatedTokensAfter}` : "";
          this.notice(`Compacted: ${result.tokensBefore}${after} tokens`, "muted");
        } else if (event.errorMessage)
          this.notice(`Compaction failed: ${String(event.errorMessage)}`, "error");
        else this.notice("Compaction cancelled", "muted");
        break;
      }
      case "agent_start":
        if (this.terminalProgress) this.tui.terminal.write(PROGRESS_BUSY);
        this.working.start();
        this.footer.changed();
        break;
      case "thinking_level_changed":
      case "session_info_changed":
        this.footer.changed();
        break;
      case "entry_appended":
        this.entryAppended(event.entry as SessionEntry);
        break;
      case "extension_error":
        this.notice(
          `${String(event.extensionPath)} (${String(event.event)}): ${String(event.error)}`,
          "error",
        );
        break;
      default:
        break;
    }
    this.render();
  }

  private messageStart(message: AgentMessage, live = true): void {
    if (message.role === "user") {
      const images = Array.isArray(message.content)
        ? message.content.filter((part): part is ImageContent => part.type === "image")
        : [];
      this.transcript.add(new UserMessageView(this.look, textOf(message.content), images));
    } else if (message.role === "assistant") {
      this.streaming = new AssistantMessageView(this.look);
      this.transcript.add(this.streaming);
    } else if (
      message.role === "custom" &&
      (message as CustomMessage).display &&
      // `!cmd` output is on screen already (BashView); it enters the context with this run.
      !(live && (message as CustomMessage).customType === "bashExecution")
    ) {
      const custom = message as CustomMessage;
      this.transcript.add(
        new CustomMessageView(this.look, custom, this.session.getMessageRenderer(custom.customType)),
      );
    }
  }

  private entryAppended(entry: SessionEntry): void {
    if (entry.type !== "custom") return;
    const renderer = this.session.getEntryRenderer(entry.customType);
    if (!renderer) return;
    this.transcript.add(
      new CustomMessageView(this.look, { customType: entry.customType, content: entry.data }, (_m, options) =>
        renderer(entry, options),
      ),
    );
  }

  /**
   * The view of a tool call, made on first sight. A call another call made (a codemode script's) is drawn under
   * that one; one whose parent is not shown goes in the transcript.
   */
  private toolView(toolCallId: string, toolName: string, args: unknown, parentId?: string): ToolCallView {
    const known = this.transcript.call(toolCallId);
    if (known) {
      if (args !== undefined) known.setArgs(args);
      return known;
    }
    const parent = parentId ? this.transcript.call(parentId) : undefined;
    if (parent) {
      const view = parent.nestedView(toolName, toolCallId, args ?? {});
      view.onChange = () => parent.changed();
      parent.addNested(view);
      this.transcript.register(view);
      return view;
    }
    const view = new ToolCallView(this.look, toolCallId, toolName, args ?? {}, () =>
      this.session.getToolRenderers(toolName),
    );
    this.transcript.add(view);
    return view;
  }

  /** A tool call shows as soon as its name is known, its arguments as they are written. */
  private streamToolCall(update: AssistantMessageEvent): void {
    if (update.type === "toolcall_start") {
      const block = update.partial.content[update.contentIndex];
      if (block?.type !== "toolCall") return;
      this.tools.writing.set(update.contentIndex, { id: block.id, json: "" });
      this.toolView(block.id, block.name, {}).writingArgs({});
    } else if (update.type === "toolcall_delta") {
      const writing = this.tools.writing.get(update.contentIndex);
      if (!writing) return;
      writing.json += update.delta;
      this.transcript.call(writing.id)?.writingArgs(partialArgs(writing.json));
    } else if (update.type === "toolcall_end") {
      this.tools.writing.delete(update.contentIndex);
      this.toolView(update.toolCall.id, update.toolCall.name, update.toolCall.arguments);
    }
  }

  private showQueue(steering: string[], followUp: string[]): void {
    this.queueView.clear();
    const t = this.theme;
    const row = (label: string, text: string): Component => ({
      invalidate() {},
      render: (width) => [truncateToWidth(`${t.fg("dim", label)} ${text.replace(/\s+/g, " ")}`, width)],
    });
    for (const text of steering) this.queueView.addChild(row("↳ steer:", text));
    for (const text of followUp) this.queueView.addChild(row("↳ follow-up:", text));
  }

  /** Draws the active branch of the session from its entries (at start, after resume, new, fork, tree moves). */
  showHistory(): void {
    this.transcript.clear();
    this.streaming = undefined;
    const manager = this.session.sessionManager;
    for (const entry of manager.getBranch()) {
      switch (entry.type) {
        case "message": {
          const message = entry.message;
          if (message.role === "assistant") {
            const view = new AssistantMessageView(this.look);
            view.finish(message);
            this.transcript.add(view);
            for (const part of message.content)
              if (part.type === "toolCall") this.toolView(part.id, part.name, part.arguments);
          } else if (message.role === "toolResult") {
            this.toolView(message.toolCallId, message.toolName, undefined).finish(
              { content: message.content, details: message.details } as ToolResult,
              message.isError,
            );
          } else {
            this.messageStart(message, false);
          }
          break;
        }
        case "custom_message":
          if (entry.display)
            this.transcript.add(
              new CustomMessageView(this.look, entry, this.session.getMessageRenderer(entry.customType)),
            );
          break;
        case "custom":
          this.entryAppended(entry);
          break;
        case "compaction":
          this.notice(`Earlier conversation compacted: ${firstLine(entry.summary)}`, "muted");
          break;
        case "branch_summary":
          this.notice(`Summary of the branch left: ${firstLine(entry.summary)}`, "muted");
          break;
        default:
          break;
      }
    }
    this.transcript.settleAll();
    this.shownSession = this.session.getState().sessionId;
    this.footer.changed();
    this.tui.requestRender(true);
  }
}

/** ConEmu's progress sequence, which Windows Terminal, WezTerm, Ghostty and others show: busy, and done. */
const PROGRESS_BUSY = "\x1b]9;4;3;\x07";
const PROGRESS_OFF = "\x1b]9;4;0;\x07";

function firstLine(text: string): string {
  const line = text.trim().split("\n")[0] ?? "";
  return line.length > 160 ? `${line.slice(0, 159)}…` : line;
}

/** A message's text, with the images it carries counted at the end. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts = content as { type?: string; text?: string }[];
  const text = parts.map((part) => (part?.type === "text" ? part.text : "")).join("");
  const images = parts.filter((part) => part?.type === "image").length;
  return images === 0 ? text : `${text} [${images} image${images === 1 ? "" : "s"}]`;
}
