/** `stripAnsi`: text without its terminal escape sequences (pi-tui measures around them but exports no stripper). */

/** CSI sequences (colours, cursor moves), OSC strings (links, titles), APC strings (the cursor marker), others. */
const ESCAPES =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point
  /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b_[^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

/** The text as a terminal shows it, without colours, links or markers. */
export function stripAnsi(text: string): string {
  return text.replace(ESCAPES, "");
}
