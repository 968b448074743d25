/**
 * Terminal column arithmetic: how many columns a string takes once ANSI escape sequences are left out, with East
 * Asian wide characters and emoji taking two and combining marks none. Our own range table rather than a package:
 * it covers the blocks a terminal draws double width (CJK, Hangul, kana, full-width forms, emoji), which is what a
 * component needs to pad and cut lines; a rare character outside it counts as one column.
 */

/** CSI (`ESC [ ... final`), OSC (`ESC ] ... BEL` or `ESC \`), APC (`ESC _ ... BEL`) and two-byte escapes. */
const ANSI =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal input and escape sequences are control characters
  /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|_[^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/y;

// [start, end] code point ranges drawn two columns wide.
const WIDE: ReadonlyArray<readonly [number, number]> = [
  [0x1100, 0x115f],
  [0x231a, 0x231b],
  [0x2329, 0x232a],
  [0x23e9, 0x23ec],
  [0x23f0, 0x23f0],
  [0x23f3, 0x23f3],
  [0x25fd, 0x25fe],
  [0x2614, 0x2615],
  [0x2648, 0x2653],
  [0x267f, 0x267f],
  [0x2693, 0x2693],
  [0x26a1, 0x26a1],
  [0x26aa, 0x26ab],
  [0x26bd, 0x26be],
  [0x26c4, 0x26c5],
  [0x26ce, 0x26ce],
  [0x26d4, 0x26d4],
  [0x26ea, 0x26ea],
  [0x26f2, 0x26f5],
  [0x26fa, 0x26fd],
  [0x2705, 0x2705],
  [0x270a, 0x270b],
  [0x2728, 0x2728],
  [0x274c, 0x274c],
  [0x2753, 0x2755],
  [0x2757, 0x2757],
  [0x2795, 0x2797],
  [0x27b0, 0x27b0],
  [0x27bf, 0x27bf],
  [0x2b1b, 0x2b1c],
  [0x2b50, 0x2b50],
  [0x2b55, 0x2b55],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xa960, 0xa97f],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe10, 0xfe19],
  [0xfe30, 0xfe6f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x16fe0, 0x18cff],
  [0x1b000, 0x1b2ff],
  [0x1f004, 0x1f004],
  [0x1f0cf, 0x1f0cf],
  [0x1f18e, 0x1f18e],
  [0x1f191, 0x1f19a],
  [0x1f200, 0x1f251],
  [0x1f300, 0x1f64f],
  [0x1f680, 0x1f6ff],
  [0x1f7e0, 0x1f7eb],
  [0x1f90c, 0x1f9ff],
  [0x1fa70, 0x1faff],
  [0x20000, 0x3fffd],
];

function isWide(cp: number): boolean {
  if (cp < 0x1100) return false;
  let lo = 0;
  let hi = WIDE.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [start, end] = WIDE[mid]!;
    if (cp < start) hi = mid - 1;
    else if (cp > end) lo = mid + 1;
    else return true;
  }
  return false;
}

/** Combining marks, variation selectors, zero-width joiners and other characters that take no column. */
const ZERO_WIDTH = /^(?:\p{Mn}|\p{Me}|\p{Cf}|[\u200b-\u200f]|[\ufe00-\ufe0f])$/u;

// Made on first use: creating a segmenter loads ICU data, which an import of this module should not pay for.
let segmenter: Intl.Segmenter | undefined;

/** The columns one grapheme (a user-perceived character) takes. */
export function graphemeWidth(grapheme: string): number {
  const cp = grapheme.codePointAt(0) ?? 0;
  if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) return 0;
  if (cp < 0x7f) return 1;
  // An emoji sequence (a flag, a family joined by ZWJ, a symbol with the emoji selector) is two columns.
  if (grapheme.length > 1 && /\ufe0f|\u200d|[\u{1f1e6}-\u{1f1ff}]{2}/u.test(grapheme)) return 2;
  if (ZERO_WIDTH.test(String.fromCodePoint(cp))) return 0;
  return isWide(cp) ? 2 : 1;
}

/** Splits text into escape sequences (width 0) and graphemes, in order. */
export function* tokens(text: string): Generator<{ text: string; ansi: boolean }> {
  let plain = "";
  for (let i = 0; i < text.length; ) {
    if (text.charCodeAt(i) === 0x1b) {
      ANSI.lastIndex = i;
      const match = ANSI.exec(text);
      if (match) {
        if (plain) yield* graphemes(plain);
        plain = "";
        yield { text: match[0], ansi: true };
        i += match[0].length;
        continue;
      }
    }
    plain += text[i];
    i++;
  }
  if (plain) yield* graphemes(plain);
}

function* graphemes(text: string): Generator<{ text: string; ansi: boolean }> {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  for (const { segment } of segmenter.segment(text)) yield { text: segment, ansi: false };
}

/** The columns `text` takes in a terminal: escape sequences count nothing, wide characters two, tabs three. */
export function visibleWidth(text: string): number {
  let width = 0;
  // The common case (printable ASCII, no escapes) needs no segmenting.
  if (/^[\x20-\x7e]*$/.test(text)) return text.length;
  for (const token of tokens(text)) {
    if (token.ansi) continue;
    width += token.text === "\t" ? 3 : graphemeWidth(token.text);
  }
  return width;
}

/** Leaves out every ANSI escape sequence. */
export function stripAnsi(text: string): string {
  let out = "";
  for (const token of tokens(text)) if (!token.ansi) out += token.text;
  return out;
}

const RESET = "\x1b[0m";

/**
 * Cuts `text` to at most `maxWidth` columns, ending in `ellipsis` when something was cut; escape sequences are
 * kept (so colours stay balanced, a reset follows a cut styled line). With `pad`, a shorter result is padded with
 * spaces to exactly `maxWidth`.
 */
export function truncateToWidth(text: string, maxWidth: number, ellipsis = "…", pad = false): string {
  const limit = Math.max(0, Math.floor(maxWidth));
  const full = visibleWidth(text);
  if (full <= limit) return pad ? text + " ".repeat(limit - full) : text;
  const ellipsisWidth = visibleWidth(ellipsis);
  const room = Math.max(0, limit - ellipsisWidth);
  let out = "";
  let width = 0;
  let styled = false;
  for (const token of tokens(text)) {
    if (token.ansi) {
      out += token.text;
      styled = true;
      continue;
    }
    const w = graphemeWidth(token.text);
    if (width + w > room) break;
    out += token.text;
    width += w;
  }
  const tail = ellipsisWidth <= limit ? ellipsis : "";
  out = `${out}${styled ? RESET : ""}${tail}`;
  const used = width + (tail ? ellipsisWidth : 0);
  return pad ? out + " ".repeat(Math.max(0, limit - used)) : out;
}

/**
 * Wraps text to `width` columns, breaking at spaces where it can and inside a word only when the word alone is
 * wider than the line. Each input line starts a new output line; escape sequences stay with the text they style.
 */
export function wrapTextWithAnsi(text: string, width: number): string[] {
  const max = Math.max(1, Math.floor(width));
  const out: string[] = [];
  for (const line of text.split("\n")) {
    if (visibleWidth(line) <= max) {
      out.push(line);
      continue;
    }
    let current = "";
    let currentWidth = 0;
    for (const word of line.split(/(?<= )/)) {
      const wordWidth = visibleWidth(word);
      if (currentWidth + wordWidth <= max) {
        current += word;
        currentWidth += wordWidth;
        continue;
      }
      if (current.trim()) out.push(current.trimEnd());
      current = "";
      currentWidth = 0;
      for (const token of tokens(word)) {
        const w = token.ansi ? 0 : graphemeWidth(token.text);
        if (currentWidth + w > max) {
          out.push(current);
          current = "";
          currentWidth = 0;
        }
        current += token.text;
        currentWidth += w;
      }
    }
    out.push(current.trimEnd());
  }
  return out;
}
