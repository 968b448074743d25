/**
 * `ctx.ui` for the extensions of one ACP session. Confirmations and permission selects (the permission gate's, an
 * extension's) become `session/request_permission`; questions (`select`, `input`, `editor`, and `ask_user`'s several at once) become
 * `elicitation/create` forms when the client offers them, and otherwise fail saying that no one can answer. What
 * only a terminal draws (widgets, status, footer, header, editor) is a no-op; notifications go to the client as
 * notices when it takes them, else to stderr.
 */
import {
  type AskQuestions,
  type DialogOptions,
  type EditorFactory,
  type ExtensionUIContext,
  type NotifyLevel,
  ThemedUI,
  type UserAnswer,
} from "@knightcodeai/cli/kit";

/** What the UI asks of its session. */
export interface UiBackend {
  /** `session/request_permission`: which allow the person chose, or undefined (rejected, cancelled, no answer). */
  permission(
    title: string,
    message: string | undefined,
    opts: DialogOptions | undefined,
  ): Promise<"once" | "always" | undefined>;
  /** A form answer by field, or undefined when the person declined or cancelled it. */
  form(
    message: string,
    properties: Record<string, Record<string, unknown>>,
    required: string[],
    opts: DialogOptions | undefined,
  ): Promise<Record<string, unknown> | undefined>;
  notify(message: string, level: NotifyLevel): void;
  setTitle(title: string): void;
}

export class AcpUI extends ThemedUI implements ExtensionUIContext {
  private editorText = "";

  constructor(private readonly backend: UiBackend) {
    super();
  }

  async confirm(title: string, message?: string, opts?: DialogOptions): Promise<boolean> {
    return (await this.backend.permission(title, message, opts)) !== undefined;
  }

  async select(title: string, options: string[], opts?: DialogOptions): Promise<string | undefined> {
    // A permission question (the gate's) is the client's own permission prompt, not a form.
    const permission = opts?.permission;
    if (permission) {
      const allowed = await this.backend.permission(title, undefined, opts);
      if (allowed === "always") return permission.allowAlways ?? permission.allowOnce;
      return allowed === "once" ? permission.allowOnce : permission.reject;
    }
    const answer = await this.backend.form(
      title,
      { choice: { type: "string", title, enum: options } },
      ["choice"],
      opts,
    );
    const choice = answer?.choice;
    return typeof choice === "string" && options.includes(choice) ? choice : undefined;
  }

  async input(title: string, placeholder?: string, opts?: DialogOptions): Promise<string | undefined> {
    const answer = await this.backend.form(
      title,
      { answer: { type: "string", title, ...(placeholder ? { description: placeholder } : {}) } },
      [],
      opts,
    );
    return typeof answer?.answer === "string" ? answer.answer : undefined;
  }

  editor(title: string, prefill?: string, opts?: DialogOptions): Promise<string | undefined> {
    return this.input(title, prefill, opts);
  }

  /** `ask_user`'s questions in one form: a field per question, each an optional choice among its options. */
  askQuestions: AskQuestions = async (request, opts) => {
    const properties: Record<string, Record<string, unknown>> = {};
    for (const question of request.questions) {
      properties[question.id] = {
        type: "string",
        title: question.text,
        oneOf: question.options.map((o) => ({
          const: o.label,
          title: o.label,
          ...(o.description ? { description: o.description } : {}),
        })),
      };
    }
    const message =
      request.questions.length === 1 ? request.questions[0]!.text : "The agent has questions for you";
    const answer = await this.backend.form(message, properties, [], opts);
    if (!answer) return undefined;
    const answers: Record<string, UserAnswer> = {};
    for (const question of request.questions) {
      const value = answer[question.id];
      if (typeof value === "string" && value !== "") answers[question.id] = { label: value };
    }
    return answers;
  };

  notify(message: string, level: NotifyLevel = "info"): void {
    this.backend.notify(message, level);
  }

  setTitle(title: string): void {
    this.backend.setTitle(title);
  }

  setEditorText(text: string): void {
    this.editorText = text;
  }

  getEditorText(): string {
    return this.editorText;
  }

  pasteToEditor(text: string): void {
    this.editorText = text;
  }

  // What an ACP client has no place for: documented no-ops (docs/acp.md).
  setStatus(): void {}
  setWidget(): void {}
  setWorkingMessage(): void {}
  setWorkingVisible(): void {}
  setWorkingIndicator(): void {}
  setHiddenThinkingLabel(): void {}
  setFooter(): void {}
  setHeader(): void {}
  setEditorComponent(_factory: EditorFactory | undefined): void {}
  getEditorComponent(): EditorFactory | undefined {
    return undefined;
  }
  onViewEvent(): () => void {
    return () => {};
  }
  onTerminalInput(): () => void {
    return () => {};
  }
  async custom<T>(): Promise<T | undefined> {
    this.backend.notify(
      "ctx.ui.custom() needs the interactive terminal; over ACP it returns undefined",
      "warning",
    );
    return undefined;
  }
}
