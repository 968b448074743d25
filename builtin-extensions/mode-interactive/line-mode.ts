/**
 * The interactive mode where stdin or stdout is not a terminal (a pipe, a script driving `--mode interactive`):
 * a line prompt, streamed answers, tool calls with their results, `/` commands (built-in and from extensions),
 * extension dialogs answered on the input line, and Escape or Ctrl+C to stop a run. The full terminal UI is in
 * app.ts; drawing for this mode lives in view.ts.
 */
import { createInterface, emitKeypressEvents, type Interface } from "node:readline";
import type {
  AssistantMessage,
  DialogOptions,
  ExtensionUIContext,
  ModeContext,
  SessionStreamEvent,
  ToolResult,
} from "@knightcodeai/cli/kit";
import { errorMessage, VERSION } from "@knightcodeai/cli/kit";
import { TerminalUI } from "./terminal-ui.js";
import { currentEntry, findEntry, treeLines } from "./tree-view.js";
import { banner, cyan, dim, errorLine, helpText, PROMPT, toolCallLine, toolResultLines } from "./view.js";

const controllers = new WeakMap<ExtensionUIContext, InteractiveController>();

/** The mode's `ui()` without a terminal: the line UI is bound before the session starts, so session_start handlers can use it. */
export function connectLineMode(ctx: Pick<ModeContext, "session" | "io">): ExtensionUIContext {
  const controller = new InteractiveController(ctx);
  controllers.set(controller.ui, controller);
  return controller.ui;
}

export async function runLineMode(ctx: ModeContext): Promise<number> {
  let controller = ctx.ui ? controllers.get(ctx.ui) : undefined;
  if (!controller) {
    controller = new InteractiveController(ctx);
    ctx.session.setUI(controller.ui, true);
  }
  return controller.run(ctx);
}

class InteractiveController {
  readonly ui: TerminalUI;
  private readonly rl: Interface;
  private readonly write: (text: string) => void;
  private readonly columns: () => number;
  private pendingAnswer: ((line: string | undefined) => void) | undefined;
  private streamingText = false;
  private quitting = false;
  private closed: () => void = () => {};
  /** Settles when the input closes or the person quits. */
  private readonly done: Promise<void>;
  /** Lines typed before the mode ran; a question asked meanwhile (the resume picker) takes them first. */
  private early: string[] = [];
  private running = false;
  /** A `/tree` move is waiting for `session_before_tree` handlers (a summariser): Ctrl+C or Escape stops it. */
  private navigating = false;

  constructor(private readonly ctx: Pick<ModeContext, "session" | "io">) {
    const { io } = ctx;
    this.write = (text) => io.stdout.write(text);
    this.columns = () => (io.stdout as NodeJS.WriteStream).columns || 80;
    this.rl = createInterface({ input: io.stdin, output: io.stdout, terminal: io.isTTY, prompt: PROMPT });
    this.ui = new TerminalUI(this.write, (q, o) => this.ask(q, o), this.columns);
    this.rl.on("line", (line) => {
      if (!this.running && !this.pendingAnswer) this.early.push(line);
      else this.onLine(line);
    });
    // Ctrl+C: dismisses a question, stops a run, or leaves (also while the session starts).
    this.rl.on("SIGINT", () => {
      if (this.pendingAnswer) return this.answer(undefined);
      if (!ctx.session.isIdle() || this.navigating) return this.stop();
      this.quit();
    });
    this.done = new Promise<void>((resolve) => {
      this.closed = resolve;
      this.rl.on("close", () => {
        // No more answers can come.
        this.quitting = true;
        this.answer(undefined);
        resolve();
      });
    });
  }

  async run(ctx: ModeContext): Promise<number> {
    const { session, io, signal } = ctx;
    const unsubscribe = session.subscribe((event) => this.render(event));
    if (io.isTTY) {
      emitKeypressEvents(io.stdin as NodeJS.ReadStream);
      (io.stdin as NodeJS.ReadStream).on(
        "keypress",
        (_s: string, key: { name?: string; sequence?: string }) => {
          if (key?.sequence) this.ui.terminalInput(key.sequence);
          if (key?.name === "escape" && (!session.isIdle() || this.navigating)) this.stop();
        },
      );
    }
    signal.addEventListener("abort", () => this.quit(), { once: true });
    // ctx.shutdown() from an extension (a /quit of its own): leave as /quit does.
    ctx.shutdown?.addEventListener("abort", () => this.quit(), { once: true });

    const state = session.getState();
    this.write(
      banner(VERSION, state.model ? `${state.model.provider}/${state.model.id}` : undefined, session.cwd),
    );
    if (ctx.options.resume && !this.quitting) await this.resume();
    for (const prompt of ctx.prompts) if (!this.quitting) await this.submit(prompt);
    this.running = true;
    for (const line of this.early.splice(0)) this.onLine(line);
    if (!this.quitting) this.rl.prompt();
    await this.done;
    unsubscribe();
    this.answer(undefined);
    if (!session.isIdle()) {
      session.abort();
      await session.waitForIdle();
    }
    return 0;
  }

  private onLine(line: string): void {
    if (this.pendingAnswer) {
      this.answer(line);
      return;
    }
    const text = line.trim();
    if (!text) {
      if (this.ctx.session.isIdle()) this.rl.prompt();
      return;
    }
    if (!this.ctx.session.isIdle()) {
      this.ctx.session.steer(text);
      this.write(dim(`(queued: it enters after the current turn)\n`));
      return;
    }
    void this.submit(text).then(() => {
      if (!this.quitting) this.rl.prompt();
    });
  }

  private async submit(text: string): Promise<void> {
    try {
      if (await this.builtin(text)) return;
      await this.ctx.session.prompt(text);
    } catch (error) {
      this.write(`${errorLine(errorMessage(error))}\n`);
    }
  }

  /** The built-in commands; extension commands reach the session as prompts. */
  private async builtin(text: string): Promise<boolean> {
    const [command, ...rest] = text.split(/\s+/);
    const arg = rest.join(" ");
    const session = this.ctx.session;
    switch (command) {
      case "/help":
        this.write(`${helpText(session.getCommands())}\n`);
        return true;
      case "/quit":
      case "/exit":
        this.quit();
        return true;
      case "/new": {
        const { cancelled } = await session.newSession();
        this.write(dim(cancelled ? "(an extension kept this session)\n" : "(new session)\n"));
        return true;
      }
      case "/reload":
        await session.reload();
        this.write(dim("(extensions reloaded)\n"));
        return true;
      case "/resume":
        await this.resume();
        return true;
      case "/tree":
        await this.tree(arg);
        return true;
      case "/label":
        this.label(arg);
        return true;
      case "/model": {
        if (!arg) {
          const current = session.getState().model;
          const usable = session.getUsableModels();
          if (usable.length === 0)
            this.write(
              `No model can be used yet: set a provider key or add a server to ${session.agentDir}/models.json\n`,
            );
          for (const { model: m, access } of usable) {
            const mark = current && m.provider === current.provider && m.id === current.id ? "*" : " ";
            this.write(`${mark} ${m.provider}/${m.id}${dim(`  ${m.name ? `${m.name} · ` : ""}${access}`)}\n`);
          }
          return true;
        }
        const slash = arg.indexOf("/");
        const ok = slash > 0 && (await session.setModel(arg.slice(0, slash), arg.slice(slash + 1)));
        this.write(ok ? dim(`(model: ${arg})\n`) : `${errorLine(`No model ${arg}; /model lists them`)}\n`);
        return true;
      }
      default:
        return false;
    }
  }

  /** `/tree` lists the tree; `/tree <id prefix> [--summarize [instructions]]` continues from that entry. */
  private async tree(arg: string): Promise<void> {
    const manager = this.ctx.session.sessionManager;
    if (!arg) {
      const lines = treeLines(manager, this.columns());
      this.write(lines.length ? `${lines.join("\n")}\n` : dim("(the session is empty)\n"));
      return;
    }
    const [prefix = "", flag, ...rest] = arg.split(/\s+/);
    if (flag !== undefined && flag !== "--summarize") {
      this.write(
        `${errorLine(`/tree takes an entry id and optionally --summarize [instructions], not "${flag}"`)}\n`,
      );
      return;
    }
    const target = findEntry(manager, prefix);
    if (typeof target === "string") {
      this.write(`${errorLine(target)}\n`);
      return;
    }
    const instructions = rest.join(" ");
    this.navigating = true;
    const result = await this.ctx.session
      .navigateTree(target.id, {
        ...(flag ? { summarize: true } : {}),
        ...(instructions ? { customInstructions: instructions } : {}),
      })
      .finally(() => {
        this.navigating = false;
      });
    if (result.cancelled) {
      this.write(dim("(not moved: stopped, or an extension kept the session where it was)\n"));
      return;
    }
    const summary = result.summaryEntry ? "; a summary of the branch you left was added" : "";
    const note = flag && !result.summaryEntry ? "; no extension supplied a summary" : "";
    this.write(dim(`(continuing from ${target.id}${summary}${note})\n`));
  }

  /** `/label [text]` labels the current entry; `/label @<id prefix> [text]` another one; no text clears it. */
  private label(arg: string): void {
    const manager = this.ctx.session.sessionManager;
    let text = arg;
    let target = currentEntry(manager);
    if (arg.startsWith("@")) {
      const [ref = "", ...words] = arg.slice(1).split(/\s+/);
      const found = findEntry(manager, ref);
      if (typeof found === "string") {
        this.write(`${errorLine(found)}\n`);
        return;
      }
      target = found;
      text = words.join(" ");
    }
    if (!target) {
      this.write(`${errorLine("Nothing to label yet: the session has no messages")}\n`);
      return;
    }
    this.ctx.session.setLabel(target.id, text || undefined);
    this.write(dim(text ? `(labelled ${target.id} "${text}")\n` : `(label of ${target.id} cleared)\n`));
  }

  private async resume(): Promise<void> {
    // The session in use is no choice: at start (`-r`) it is the empty one just opened.
    const current = this.ctx.session.getState().sessionFile;
    const sessions = this.ctx.session
      .listSessions()
      .filter((s) => s.path !== current)
      .slice(0, 20);
    if (sessions.length === 0) {
      this.write(dim("(no earlier sessions in this folder)\n"));
      return;
    }
    const list = sessions
      .map(
        (s, i) =>
          `  ${i + 1}. ${s.name ?? s.firstMessage.slice(0, 60)}${s.labels ? ` ${cyan(s.labels.map((l) => `[${l}]`).join(" "))}` : ""} ${dim(`${s.messageCount} messages, ${s.modified.toLocaleString()}`)}`,
      )
      .join("\n");
    const answer = await this.ask(`${list}\nResume which session (1-${sessions.length})? `);
    const chosen = sessions[Number(answer?.trim()) - 1];
    if (!chosen) return;
    await this.ctx.session.switchSession(chosen.path);
    this.write(dim(`(resumed ${chosen.id})\n`));
  }

  /** Reads one line as the answer to a question (dialogs, pickers). */
  private ask(question: string, opts: DialogOptions = {}): Promise<string | undefined> {
    if (this.quitting || opts.signal?.aborted) return Promise.resolve(undefined);
    this.answer(undefined);
    if (question) this.write(question);
    const typed = this.early.shift();
    if (typed !== undefined) return Promise.resolve(typed);
    return new Promise((resolve) => {
      const timer = opts.timeout ? setTimeout(() => this.answer(undefined), opts.timeout) : undefined;
      opts.signal?.addEventListener("abort", () => this.answer(undefined), { once: true });
      this.pendingAnswer = (line) => {
        if (timer) clearTimeout(timer);
        resolve(line);
      };
    });
  }

  private answer(line: string | undefined): void {
    const pending = this.pendingAnswer;
    this.pendingAnswer = undefined;
    pending?.(line);
  }

  private stop(): void {
    const { followUp, steering } = this.ctx.session.abort();
    const returned = [...steering, ...followUp];
    this.write(`\n${dim(`(stopped${returned.length ? `; not sent: ${returned.join(" | ")}` : ""})`)}\n`);
  }

  private quit(): void {
    if (this.quitting) return;
    this.quitting = true;
    this.rl.close();
    this.closed();
  }

  private render(event: SessionStreamEvent): void {
    switch (event.type) {
      case "message_update": {
        const update = event.assistantMessageEvent as { type: string; delta?: string };
        if (update.type === "text_delta" && update.delta) {
          this.streamingText = true;
          this.write(update.delta);
        } else if (update.type === "thinking_delta" && update.delta) {
          this.write(dim(update.delta));
        }
        break;
      }
      case "message_end": {
        const message = event.message as AssistantMessage;
        if (message.role !== "assistant") break;
        if (this.streamingText) this.write("\n");
        this.streamingText = false;
        if (message.stopReason === "error")
          this.write(`${errorLine(message.errorMessage ?? "the provider failed")}\n`);
        break;
      }
      case "tool_execution_start":
        if (event.parentToolCallId) break;
        this.write(
          `${toolCallLine(String(event.toolName), event.args, this.ctx.session.getToolRenderers(String(event.toolName)))}\n`,
        );
        break;
      case "tool_execution_end":
        if (event.parentToolCallId) break;
        this.write(
          `${toolResultLines(event.result as ToolResult, event.isError === true, this.ctx.session.getToolRenderers(String(event.toolName)))}\n`,
        );
        break;
      case "auto_retry_start":
        this.write(
          dim(
            `(retrying in ${Math.round(Number(event.delayMs) / 100) / 10}s: ${String(event.errorMessage)})\n`,
          ),
        );
        break;
      case "compaction_start":
        this.write(dim(`(compacting the conversation: ${String(event.reason)})\n`));
        break;
      case "compaction_end": {
        const result = event.result as { tokensBefore: number; estimatedTokensAfter?: number } | undefined;
        if (result) {
          const after =
            result.estimatedTokensAfter !== undefined ? ` → about ${result.estimatedTokensAfter}` : "";
          this.write(dim(`(compacted: ${result.tokensBefore}${after} tokens)\n`));
        } else if (event.errorMessage) {
          this.write(`${errorLine(`compaction failed: ${String(event.errorMessage)}`)}\n`);
        } else {
          this.write(dim("(compaction cancelled)\n"));
        }
        break;
      }
      case "extension_error":
        this.write(
          `${errorLine(`${String(event.extensionPath)} (${String(event.event)}): ${String(event.error)}`)}\n`,
        );
        break;
    }
  }
}
