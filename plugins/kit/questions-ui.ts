/**
 * Several questions asked at once, where the UI can show them together: the app-server's
 * `item/toolCall/requestUserInput`, which lets a desktop client move back and forth between the questions before
 * answering. A UI that can offers `askQuestions` beside the `ExtensionUIContext` dialogs; `questionsDialog(ui)`
 * finds it (through the SDK's wrapper too), and a caller without one asks one dialog at a time instead, as
 * `ask_user` does in the terminal and over RPC.
 */
import type { DialogOptions, ExtensionUIContext } from "../../kernel/index.js";

export interface UserQuestion {
  id: string;
  text: string;
  options: { label: string; description?: string }[];
}

/** An option's exact label (with an optional note), or the user's own answer. */
export type UserAnswer = { label: string; note?: string } | { other: string };

export interface QuestionsRequest {
  /** The tool call asking, shown as the request's `itemId`. */
  toolCallId: string;
  questions: UserQuestion[];
}

/** Answers by question id (a skipped question is left out); undefined when the user dismissed the questions. */
export type AskQuestions = (
  request: QuestionsRequest,
  options?: DialogOptions,
) => Promise<Record<string, UserAnswer> | undefined>;

export interface QuestionsUI {
  askQuestions: AskQuestions;
}

/** The UI's way of asking several questions at once, when it has one. */
export function questionsDialog(ui: ExtensionUIContext): AskQuestions | undefined {
  const ask = (ui as Partial<QuestionsUI>).askQuestions;
  return typeof ask === "function" ? ask.bind(ui) : undefined;
}
