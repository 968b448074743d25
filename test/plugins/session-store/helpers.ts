/** Message builders and small utilities shared by the session-store tests. */
import { readFileSync } from "node:fs";
import type { AssistantMessage, ToolResultMessage, UserMessage } from "../../../kernel/index.js";

export function user(text: string, timestamp = Date.now()): UserMessage {
  return { role: "user", content: text, timestamp };
}

export function assistant(text: string, provider = "faux", model = "faux-1"): AssistantMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text }],
    api: "faux",
    provider,
    model,
    usage: {
      input: 1,
      output: 1,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 2,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: "stop",
    timestamp: Date.now(),
  };
}

export function toolResult(toolCallId: string, text: string): ToolResultMessage {
  return {
    role: "toolResult",
    toolCallId,
    toolName: "read",
    content: [{ type: "text", text }],
    isError: false,
    timestamp: Date.now(),
  };
}

/** Every line of a JSONL file parses (the file is valid JSONL), returned parsed. */
export function jsonLines(path: string): Record<string, unknown>[] {
  const text = readFileSync(path, "utf8");
  if (!text.endsWith("\n")) throw new Error(`${path} does not end with a newline`);
  return text
    .slice(0, -1)
    .split("\n")
    .map((line, i) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(`${path}: line ${i + 1} is not JSON: ${line.slice(0, 80)}`);
      }
    });
}

/** The `text` of a message's content, for assertions. */
export function textOf(message: { content: unknown }): string {
  const content = message.content;
  if (typeof content === "string") return content;
  return (content as { type: string; text?: string }[])
    .filter((part) => part.type === "text")
    .map((part) => part.text)
    .join("");
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
