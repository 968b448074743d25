/**
 * builtin:ask-user — the `ask_user` tool: the model asks the user one or more questions with fixed options and
 * gets every answer at once. Where the UI can show every question together (the app-server's
 * `item/toolCall/requestUserInput`), they go in one request, each answered with an option, the user's own words
 * or not at all (a note may come with an option). In the terminal and over RPC each question is a `select`
 * dialog with the options, an "other" choice (a free-text answer) and a "skip" choice, followed by one optional
 * note. Dismissing the questions stops the turn. Without a UI (print and JSON modes) the call fails: no one can
 * answer.
 *
 * On by default, and offered to the model only in sessions with a UI; `"ask-user": {"enabled": false}` in
 * tools.json leaves the tool out of new sessions.
 */
import {
  type ExtensionAPI,
  type ExtensionContext,
  questionsDialog,
  type Static,
  Type,
} from "@knightcodeai/cli/kit";

const optionSchema = Type.Object({
  label: Type.String({
    minLength: 1,
    description: 'What the user picks; end it with "(Recommended)" to mark the option you recommend',
  }),
  description: Type.Optional(Type.String({ description: "One line on what this option means" })),
});

const questionSchema = Type.Object({
  id: Type.String({ minLength: 1, description: "Short id the answer is keyed by" }),
  text: Type.String({ minLength: 1, description: "The question" }),
  options: Type.Array(optionSchema, { minItems: 1, maxItems: 12 }),
});

const askUserSchema = Type.Object({
  questions: Type.Array(questionSchema, { minItems: 1, maxItems: 10 }),
});

export type AskUserInput = Static<typeof askUserSchema>;

/** One answer: an option's exact label (with the user's note on it, where the UI takes one), or their own text. */
export type AskUserAnswer = { label: string; note?: string } | { other: string };

export interface AskUserDetails {
  answers: Record<string, AskUserAnswer>;
  /** Questions the user chose to skip. */
  skipped: string[];
  /** The user's note on the whole set, when they wrote one. */
  note?: string;
  /** The user closed a dialog: nothing was answered and the turn stops. */
  dismissed?: true;
}

/** The extra choices each question's dialog offers after the model's options. */
export const OTHER_CHOICE = "✎ Other (type your own answer)";
export const SKIP_CHOICE = "↷ Skip this question";
export const NOTE_TITLE = "Anything to add for the agent? (optional)";

export const NO_UI_ERROR =
  "ask_user needs someone to answer, and this session has no UI (print or JSON mode): no one can answer. " +
  "Decide yourself and say what you assumed, or end your turn with the question in your reply.";

export default function askUser(knightcode: ExtensionAPI): void {
  knightcode.registerToolSettings("ask-user", {
    description: "The ask_user tool: the model asks you questions with fixed options",
    enabledByDefault: true,
  });
  const unregister = knightcode.registerTool(
    {
      name: "ask_user",
      label: "ask user",
      description: [
        "Ask the user one or more questions, each with fixed options, and get all the answers at once.",
        'Mark the option you recommend by ending its label with "(Recommended)".',
        "The user may pick an option, type their own answer, or skip a question; skipped questions are left out of the answers.",
        "Use it when a decision is the user's to make and you cannot go on well without it; do not use it for things you can find out yourself.",
      ].join(" "),
      promptSnippet: "ask_user: ask the user questions with fixed options when a decision is theirs",
      parameters: askUserSchema,
      // It asks a person, so only the model may call it, never a script through ctx.executeTool().
      exposure: "model-only",
      executionMode: "sequential",
      annotations: {
        title: "Ask the user",
        readOnlyHint: true,
        destructiveHint: false,
        openWorldHint: false,
      },
      async execute(toolCallId, params, signal, _onUpdate, ctx) {
        if (!ctx.hasUI) throw new Error(NO_UI_ERROR);
        checkQuestions(params);
        const details = await ask(ctx, params, signal, toolCallId);
        if (details.dismissed) {
          return {
            content: [
              {
                type: "text",
                text: "The user dismissed the questions without answering. Stop here and wait for their next message.",
              },
            ],
            details,
            structuredContent: details,
            terminate: true,
          };
        }
        return {
          content: [{ type: "text", text: describe(params, details) }],
          details,
          structuredContent: details,
        };
      },
    },
    { fallback: true },
  );
  knightcode.on("session_start", (_event, ctx) => {
    if (!ctx.toolSettings.read("ask-user").enabled) unregister();
    // Where no one can answer, the model is not offered it; `--tools` and `defaultTools` apply afterwards and
    // may still turn it on, and a call then fails saying why.
    else if (!ctx.hasUI)
      knightcode.setActiveTools(knightcode.getActiveTools().filter((n) => n !== "ask_user"));
  });
}

function checkQuestions(params: AskUserInput): void {
  const ids = new Set<string>();
  for (const question of params.questions) {
    if (ids.has(question.id))
      throw new Error(`Two questions have the id "${question.id}"; give each its own.`);
    ids.add(question.id);
    const labels = new Set<string>();
    for (const option of question.options) {
      if (labels.has(option.label)) {
        throw new Error(`Question "${question.id}" has the option "${option.label}" twice.`);
      }
      if (option.label === OTHER_CHOICE || option.label === SKIP_CHOICE) {
        throw new Error(`Question "${question.id}": "${option.label}" is a choice ask_user adds itself.`);
      }
      labels.add(option.label);
    }
  }
}

async function ask(
  ctx: ExtensionContext,
  params: AskUserInput,
  signal: AbortSignal | undefined,
  toolCallId: string,
): Promise<AskUserDetails> {
  const dialog = signal ? { signal } : undefined;
  const askAll = questionsDialog(ctx.ui);
  if (askAll) return askTogether(params, await askAll({ toolCallId, questions: params.questions }, dialog));
  const answers: Record<string, AskUserAnswer> = {};
  const skipped: string[] = [];
  const dismissed = (): AskUserDetails => ({ answers: {}, skipped: [], dismissed: true });
  for (const [index, question] of params.questions.entries()) {
    const shown = question.options.map((o) => (o.description ? `${o.label} — ${o.description}` : o.label));
    const title =
      params.questions.length > 1
        ? `(${index + 1}/${params.questions.length}) ${question.text}`
        : question.text;
    const choice = await ctx.ui.select(title, [...shown, OTHER_CHOICE, SKIP_CHOICE], dialog);
    if (choice === undefined) return dismissed();
    if (choice === SKIP_CHOICE) {
      skipped.push(question.id);
      continue;
    }
    if (choice === OTHER_CHOICE) {
      const text = await ctx.ui.input(`Your answer: ${question.text}`, undefined, dialog);
      if (text === undefined) return dismissed();
      if (text.trim() === "") skipped.push(question.id);
      else answers[question.id] = { other: text.trim() };
      continue;
    }
    answers[question.id] = { label: question.options[shown.indexOf(choice)]!.label };
  }
  const note = (await ctx.ui.input(NOTE_TITLE, undefined, dialog))?.trim();
  return { answers, skipped, ...(note ? { note } : {}) };
}

/** Answers to every question at once: an unknown label or an empty answer counts as skipped. */
function askTogether(
  params: AskUserInput,
  reply: Record<string, { label: string; note?: string } | { other: string }> | undefined,
): AskUserDetails {
  if (reply === undefined) return { answers: {}, skipped: [], dismissed: true };
  const answers: Record<string, AskUserAnswer> = {};
  const skipped: string[] = [];
  for (const question of params.questions) {
    const answer = reply[question.id];
    const note = answer && "note" in answer && typeof answer.note === "string" ? answer.note.trim() : "";
    if (answer && "label" in answer && question.options.some((o) => o.label === answer.label))
      answers[question.id] = { label: answer.label, ...(note ? { note } : {}) };
    else if (answer && "other" in answer && typeof answer.other === "string" && answer.other.trim() !== "")
      answers[question.id] = { other: answer.other.trim() };
    else skipped.push(question.id);
  }
  return { answers, skipped };
}

/** The answers as the model reads them. */
function describe(params: AskUserInput, details: AskUserDetails): string {
  const lines = ["The user answered:"];
  for (const question of params.questions) {
    const answer = details.answers[question.id];
    if (!answer) continue;
    lines.push(
      "label" in answer
        ? `- ${question.id} (${question.text}): ${answer.label}${answer.note ? ` (their note: ${answer.note})` : ""}`
        : `- ${question.id} (${question.text}): in their own words: ${answer.other}`,
    );
  }
  if (Object.keys(details.answers).length === 0) lines[0] = "The user answered none of the questions.";
  if (details.skipped.length > 0) lines.push(`Skipped: ${details.skipped.join(", ")}`);
  if (details.note) lines.push(`Their note: ${details.note}`);
  return lines.join("\n");
}
