/** Escaping and small building blocks: every string that comes from the session passes through `escapeHtml`. */

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** Terminal colour and cursor sequences: a terminal renderer's string is shown as plain text. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: escape sequences begin with ESC
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, "");
}

/** Preformatted text; long text shows its first `visible` lines and folds the rest into a `<details>`. */
export function textBlock(text: string, className = "text", visible = Number.POSITIVE_INFINITY): string {
  const lines = text.split("\n");
  if (lines.length <= visible + 2) return `<pre class="${className}">${escapeHtml(text)}</pre>`;
  const head = lines.slice(0, visible).join("\n");
  const rest = lines.slice(visible).join("\n");
  return (
    `<pre class="${className}">${escapeHtml(head)}</pre>` +
    `<details class="more"><summary>${lines.length - visible} more lines</summary>` +
    `<pre class="${className}">${escapeHtml(rest)}</pre></details>`
  );
}

/** JSON of a value for display (arguments, custom data); never throws. */
export function json(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

const MIME = /^image\/[a-z0-9.+-]+$/i;
const BASE64 = /^[A-Za-z0-9+/=\r\n]*$/;

/** An inline image as a `data:` URI, the only kind of source the export holds; malformed data is left out. */
export function image(mimeType: unknown, data: unknown): string {
  if (
    typeof mimeType !== "string" ||
    typeof data !== "string" ||
    !MIME.test(mimeType) ||
    !BASE64.test(data)
  ) {
    return `<p class="note">[image left out: not valid image data]</p>`;
  }
  return `<img class="image" alt="${escapeHtml(mimeType)} image" src="data:${mimeType};base64,${data.replace(/\s/g, "")}">`;
}

/** A one-line preview of text: the first line, cut at `max` characters. */
export function preview(text: string, max = 80): string {
  const line = text.trim().split("\n")[0] ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
