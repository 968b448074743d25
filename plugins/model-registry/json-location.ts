/** Turns a JSON.parse error into ":line:column" using the position in its message, when there is one. */
export function jsonErrorLocation(text: string, error: unknown): string {
  const match = /position (\d+)/.exec((error as Error)?.message ?? "");
  if (!match) return "";
  const position = Number(match[1]);
  const before = text.slice(0, position);
  const line = before.split("\n").length;
  const column = position - before.lastIndexOf("\n");
  return `:${line}:${column}`;
}
