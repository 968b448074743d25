/**
 * Session files written straight to disk, in the store's JSONL format, for tests that need a session too large to
 * build through the store's API in good time.
 */
import { writeFileSync } from "node:fs";

/**
 * Writes a session of `count` user messages, each the child of the one before and about `messageChars` long, with
 * ids `e0`, `e1`, …, and returns those ids in file order.
 */
export function writeLinearSession(
  file: string,
  options: { cwd: string; count: number; messageChars: number },
): string[] {
  const lines = [
    JSON.stringify({
      type: "session",
      version: 3,
      id: "11111111-2222-4333-8444-555555555555",
      timestamp: new Date(0).toISOString(),
      cwd: options.cwd,
    }),
  ];
  const ids: string[] = [];
  for (let i = 0; i < options.count; i++) {
    const id = `e${i}`;
    lines.push(
      JSON.stringify({
        type: "message",
        id,
        parentId: ids.at(-1) ?? null,
        timestamp: new Date(i).toISOString(),
        message: { role: "user", content: `${i} ${"x".repeat(options.messageChars)}`, timestamp: i },
      }),
    );
    ids.push(id);
  }
  writeFileSync(file, `${lines.join("\n")}\n`);
  return ids;
}
