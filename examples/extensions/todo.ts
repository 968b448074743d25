/**
 * A `todo` tool whose state follows the active branch of the session.
 *
 * Shows: keeping extension state in tool results (`details` carries the full list after every call) and rebuilding
 * it on `session_start` from `ctx.sessionManager.getBranch()`, so a fork, a resume or a jump in the tree sees the
 * list as it was on that branch, with no extra storage.
 */
import type { ExtensionAPI, ExtensionContext } from "@knightcodeai/cli";
import { Type } from "@sinclair/typebox";

export interface TodoItem {
  id: number;
  text: string;
  done: boolean;
}

export interface TodoDetails {
  items: TodoItem[];
}

function formatList(items: TodoItem[]): string {
  if (items.length === 0) return "No todos.";
  return items.map((item) => `${item.done ? "[x]" : "[ ]"} #${item.id} ${item.text}`).join("\n");
}

export default function (knightcode: ExtensionAPI) {
  let items: TodoItem[] = [];

  /** The list of the last `todo` result on the active branch (empty when there is none). */
  const rebuild = (ctx: ExtensionContext) => {
    items = [];
    for (const entry of ctx.sessionManager.getBranch()) {
      if (entry.type !== "message") continue;
      const message = entry.message;
      if (message.role !== "toolResult" || message.toolName !== "todo") continue;
      const details = message.details as TodoDetails | undefined;
      if (details && Array.isArray(details.items)) items = details.items.map((item) => ({ ...item }));
    }
  };

  knightcode.on("session_start", (_event, ctx) => rebuild(ctx));

  knightcode.registerTool({
    name: "todo",
    label: "Todo",
    description: "Keep a todo list: add an item, mark one done by id, or list them.",
    promptSnippet: "todo: keep a todo list (add, done, list)",
    parameters: Type.Object({
      action: Type.Union([Type.Literal("add"), Type.Literal("done"), Type.Literal("list")]),
      text: Type.Optional(Type.String({ description: "The item to add" })),
      id: Type.Optional(Type.Integer({ description: "The item to mark done" })),
    }),
    // Calls change shared state, so run them one at a time.
    executionMode: "sequential",
    async execute(_toolCallId, params) {
      if (params.action === "add") {
        if (!params.text) throw new Error("add needs a text");
        const id = items.reduce((max, item) => Math.max(max, item.id), 0) + 1;
        items = [...items, { id, text: params.text, done: false }];
      } else if (params.action === "done") {
        const item = items.find((candidate) => candidate.id === params.id);
        if (!item) throw new Error(`No todo #${params.id}`);
        items = items.map((candidate) => (candidate === item ? { ...candidate, done: true } : candidate));
      }
      return {
        content: [{ type: "text", text: formatList(items) }],
        details: { items: items.map((item) => ({ ...item })) } satisfies TodoDetails,
      };
    },
  });
}
