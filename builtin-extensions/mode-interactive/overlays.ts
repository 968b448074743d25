/**
 * Overlays for the renderer (renderer.ts): where pi-tui's `OverlayOptions` put a component on the screen, and how
 * its lines are laid over the lines below. The options mean what pi-tui documents for them: a width (columns or a
 * percentage of the terminal), a minimum width, a maximum height, an anchor (centre by default) or an explicit row
 * and column (a percentage places it within the free space), offsets, and margins that keep it off the edges.
 */
import {
  type OverlayAnchor,
  type OverlayOptions,
  type SizeValue,
  truncateToWidth,
  visibleWidth,
} from "@knightcodeai/cli/tui";

export interface Placement {
  width: number;
  row: number;
  col: number;
  maxHeight: number | undefined;
}

/** A number of columns or rows, or a percentage (`"50%"`) of `whole`; undefined when absent or unreadable. */
function resolveSize(value: SizeValue | undefined, whole: number): number | undefined {
  if (typeof value === "number") return value;
  const percent = value === undefined ? undefined : /^(\d+(?:\.\d+)?)%$/.exec(value);
  return percent ? Math.floor((whole * Number(percent[1])) / 100) : undefined;
}

/** Where an overlay of `height` lines goes on a `columns`×`rows` screen. */
export function placeOverlay(
  options: OverlayOptions | undefined,
  height: number,
  columns: number,
  rows: number,
): Placement {
  const o = options ?? {};
  const m =
    typeof o.margin === "number"
      ? { top: o.margin, right: o.margin, bottom: o.margin, left: o.margin }
      : o.margin;
  const top = Math.max(0, m?.top ?? 0);
  const right = Math.max(0, m?.right ?? 0);
  const bottom = Math.max(0, m?.bottom ?? 0);
  const left = Math.max(0, m?.left ?? 0);
  const roomX = Math.max(1, columns - left - right);
  const roomY = Math.max(1, rows - top - bottom);

  let width = resolveSize(o.width, columns) ?? Math.min(80, roomX);
  if (o.minWidth !== undefined) width = Math.max(width, o.minWidth);
  width = Math.min(Math.max(1, width), roomX);
  const asked = resolveSize(o.maxHeight, rows);
  const maxHeight = asked === undefined ? undefined : Math.min(Math.max(1, asked), roomY);
  const shown = maxHeight === undefined ? height : Math.min(height, maxHeight);

  const anchor: OverlayAnchor = o.anchor ?? "center";
  const vertical = anchor.startsWith("top") ? "start" : anchor.startsWith("bottom") ? "end" : "middle";
  const horizontal = anchor.includes("left") ? "start" : anchor.includes("right") ? "end" : "middle";
  const along = (where: "start" | "end" | "middle", size: number, room: number, from: number) =>
    where === "start" ? from : where === "end" ? from + room - size : from + Math.floor((room - size) / 2);
  const at = (
    value: SizeValue | undefined,
    where: typeof vertical,
    size: number,
    room: number,
    from: number,
  ) => {
    if (typeof value === "number") return value;
    const percent = value === undefined ? undefined : /^(\d+(?:\.\d+)?)%$/.exec(value);
    if (percent) return from + Math.floor(Math.max(0, room - size) * (Number(percent[1]) / 100));
    return along(value === undefined ? where : "middle", size, room, from);
  };
  let row = at(o.row, vertical, shown, roomY, top) + (o.offsetY ?? 0);
  let col = at(o.col, horizontal, width, roomX, left) + (o.offsetX ?? 0);
  row = Math.max(top, Math.min(row, rows - bottom - shown));
  col = Math.max(left, Math.min(col, columns - right - width));
  return { width, row, col, maxHeight };
}

const segmenter = new Intl.Segmenter();
/** An escape sequence at the start of the rest of a string: CSI, OSC (to BEL or ST), APC, or a two-byte one. */
const ESCAPE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching escape sequences is the point
  /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|_[^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])/y;
const RESET = "\x1b[0m\x1b]8;;\x07";

/**
 * The columns `[from, to)` of a styled line. Styles and links set before `from` are carried in front of what is
 * kept; a wide character cut by either edge is left out (the caller pads to the width).
 */
function columns(line: string, from: number, to: number): { text: string; width: number } {
  let text = "";
  let carried = "";
  let width = 0;
  let col = 0;
  let i = 0;
  while (i < line.length && col < to) {
    ESCAPE.lastIndex = i;
    const code = ESCAPE.exec(line)?.[0];
    if (code) {
      if (col >= from) text += code;
      else if (code.endsWith("m") || code.startsWith("\x1b]8;")) carried += code;
      i += code.length;
      continue;
    }
    const next = line.indexOf("\x1b", i);
    const run = line.slice(i, next < 0 ? line.length : next);
    for (const { segment } of segmenter.segment(run)) {
      const w = visibleWidth(segment);
      if (col >= from && col + w <= to) {
        text += segment;
        width += w;
      }
      col += w;
      if (col >= to) break;
    }
    i += run.length;
  }
  return { text: carried + text, width };
}

/** `base` with `overlay` laid over its columns `[col, col + width)`, the whole no wider than `total`. */
export function overlayLine(
  base: string,
  overlay: string,
  col: number,
  width: number,
  total: number,
): string {
  const before = columns(base, 0, col);
  const over = visibleWidth(overlay) > width ? truncateToWidth(overlay, width, "") : overlay;
  const after = columns(base, col + width, total);
  const line = `${before.text}${" ".repeat(Math.max(0, col - before.width))}${RESET}${over}${" ".repeat(
    Math.max(0, width - visibleWidth(over)),
  )}${RESET}${after.text}`;
  return visibleWidth(line) > total ? truncateToWidth(line, total, "") : line;
}
