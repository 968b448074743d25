/**
 * Themes: the colours behind the token names extensions style text with (`theme.fg("accent", text)`). A theme
 * writes ANSI SGR codes, 256-colour or 24-bit, and writes plain text when colour is off (`NO_COLOR` set when the
 * theme was made, or `color: false`). It lives in the kit rather than with the terminal components because every
 * mode that has a UI hands extensions a theme, and a theme must not pull the components in.
 */
import { readFileSync } from "node:fs";
import type { ThemeBg, ThemeColor, UITheme } from "../../kernel/index.js";

/** A colour: a 256-colour palette index, `"#rrggbb"`, or `""` for the terminal's default. */
export type ThemeColorValue = number | string;
export type ColorMode = "truecolor" | "256color";

export interface ThemeOptions {
  name?: string;
  sourcePath?: string;
  /** Whether to write colour at all; defaults to on unless `NO_COLOR` is set. */
  color?: boolean;
}

const colorAllowed = () => !process.env.NO_COLOR;

function cubeIndex(value: number): number {
  return value < 48 ? 0 : value < 115 ? 1 : Math.floor((value - 35) / 40);
}

function sgrColor(value: ThemeColorValue, mode: ColorMode, layer: 38 | 48): string {
  if (typeof value === "number") return `\x1b[${layer};5;${value}m`;
  const hex = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(value);
  if (!hex) return "";
  const [r, g, b] = hex.slice(1).map((h) => Number.parseInt(h, 16)) as [number, number, number];
  if (mode === "truecolor") return `\x1b[${layer};2;${r};${g};${b}m`;
  return `\x1b[${layer};5;${16 + 36 * cubeIndex(r) + 6 * cubeIndex(g) + cubeIndex(b)}m`;
}

export class Theme implements UITheme {
  readonly name?: string;
  readonly sourcePath?: string;
  private readonly color: boolean;

  constructor(
    private readonly fgColors: Record<ThemeColor, ThemeColorValue>,
    private readonly bgColors: Record<ThemeBg, ThemeColorValue>,
    private readonly mode: ColorMode = "256color",
    options: ThemeOptions = {},
  ) {
    if (options.name !== undefined) this.name = options.name;
    if (options.sourcePath !== undefined) this.sourcePath = options.sourcePath;
    this.color = options.color ?? colorAllowed();
  }

  /** `text` in the token's colour. An unknown token (from a newer theme file, say) leaves the text as it is. */
  fg(color: ThemeColor, text: string): string {
    const code = this.getFgAnsi(color);
    return code ? `${code}${text}\x1b[39m` : text;
  }

  bg(color: ThemeBg, text: string): string {
    const code = this.getBgAnsi(color);
    return code ? `${code}${text}\x1b[49m` : text;
  }

  bold(text: string): string {
    return this.sgr(1, 22, text);
  }

  italic(text: string): string {
    return this.sgr(3, 23, text);
  }

  underline(text: string): string {
    return this.sgr(4, 24, text);
  }

  inverse(text: string): string {
    return this.sgr(7, 27, text);
  }

  strikethrough(text: string): string {
    return this.sgr(9, 29, text);
  }

  /** The escape sequence that starts the token's foreground colour, or "" without colour. */
  getFgAnsi(color: ThemeColor): string {
    const value = this.fgColors[color];
    return this.color && value !== undefined ? sgrColor(value, this.mode, 38) : "";
  }

  getBgAnsi(color: ThemeBg): string {
    const value = this.bgColors[color];
    return this.color && value !== undefined ? sgrColor(value, this.mode, 48) : "";
  }

  getColorMode(): ColorMode {
    return this.mode;
  }

  /** Whether this theme writes colour (false under `NO_COLOR`). */
  hasColor(): boolean {
    return this.color;
  }

  getThinkingBorderColor(
    level: "off" | "minimal" | "low" | "medium" | "high" | "xhigh",
  ): (text: string) => string {
    const token = `thinking${level[0]!.toUpperCase()}${level.slice(1)}` as ThemeColor;
    return (text) => this.fg(token, text);
  }

  getBashModeBorderColor(): (text: string) => string {
    return (text) => this.fg("bashMode", text);
  }

  private sgr(on: number, off: number, text: string): string {
    return this.color ? `\x1b[${on}m${text}\x1b[${off}m` : text;
  }
}

type Palette = { fg: Record<ThemeColor, ThemeColorValue>; bg: Record<ThemeBg, ThemeColorValue> };

function palette(base: {
  accent: number;
  border: number;
  muted: number;
  dim: number;
  text: ThemeColorValue;
  success: number;
  error: number;
  warning: number;
  selectedBg: number;
  messageBg: number;
}): Palette {
  const { accent, border, muted, dim, text, success, error, warning } = base;
  return {
    fg: {
      accent,
      border,
      borderAccent: accent,
      borderMuted: dim,
      success,
      error,
      warning,
      muted,
      dim,
      text,
      thinkingText: muted,
      userMessageText: text,
      customMessageText: text,
      customMessageLabel: accent,
      toolTitle: accent,
      toolOutput: muted,
      mdHeading: accent,
      mdLink: accent,
      mdLinkUrl: dim,
      mdCode: warning,
      mdCodeBlock: text,
      mdCodeBlockBorder: dim,
      mdQuote: muted,
      mdQuoteBorder: dim,
      mdHr: dim,
      mdListBullet: accent,
      toolDiffAdded: success,
      toolDiffRemoved: error,
      toolDiffContext: muted,
      syntaxComment: dim,
      syntaxKeyword: accent,
      syntaxFunction: warning,
      syntaxVariable: text,
      syntaxString: success,
      syntaxNumber: warning,
      syntaxType: accent,
      syntaxOperator: muted,
      syntaxPunctuation: muted,
      thinkingOff: dim,
      thinkingMinimal: muted,
      thinkingLow: border,
      thinkingMedium: accent,
      thinkingHigh: warning,
      thinkingXhigh: error,
      bashMode: warning,
    },
    bg: {
      selectedBg: base.selectedBg,
      userMessageBg: base.messageBg,
      customMessageBg: base.messageBg,
      toolPendingBg: base.messageBg,
      toolSuccessBg: base.messageBg,
      toolErrorBg: base.messageBg,
    },
  };
}

const PALETTES: Record<string, Palette> = {
  dark: palette({
    accent: 75,
    border: 67,
    muted: 246,
    dim: 242,
    text: "",
    success: 114,
    error: 203,
    warning: 179,
    selectedBg: 237,
    messageBg: 235,
  }),
  light: palette({
    accent: 25,
    border: 67,
    muted: 242,
    dim: 246,
    text: "",
    success: 28,
    error: 160,
    warning: 130,
    selectedBg: 254,
    messageBg: 255,
  }),
};

/** The names of the built-in themes. */
export const BUILTIN_THEMES = Object.keys(PALETTES);

/** A built-in theme by name (a new object each time), or undefined. */
export function builtinTheme(name: string, options: Omit<ThemeOptions, "name"> = {}): Theme | undefined {
  const p = Object.hasOwn(PALETTES, name) ? PALETTES[name] : undefined;
  return p ? new Theme(p.fg, p.bg, "256color", { ...options, name }) : undefined;
}

/**
 * The theme state a UI keeps for `ctx.ui.theme`, `getAllThemes`, `getTheme` and `setTheme`: the built-in themes
 * and whatever theme object an extension installed.
 */
export class ThemeSelection {
  private current: UITheme;
  private readonly listeners = new Set<(theme: UITheme) => void>();

  constructor(
    initial = "dark",
    private readonly options: Omit<ThemeOptions, "name"> = {},
  ) {
    this.current = builtinTheme(initial, options) ?? builtinTheme("dark", options)!;
  }

  get theme(): UITheme {
    return this.current;
  }

  all(): { name: string; path: string | undefined }[] {
    return BUILTIN_THEMES.map((name) => ({ name, path: undefined }));
  }

  get(name: string): UITheme | undefined {
    return builtinTheme(name, this.options);
  }

  set(theme: string | UITheme): { success: boolean; error?: string } {
    if (typeof theme === "string") {
      const found = builtinTheme(theme, this.options);
      if (!found)
        return { success: false, error: `Unknown theme "${theme}" (known: ${BUILTIN_THEMES.join(", ")})` };
      this.current = found;
    } else if (theme && typeof theme.fg === "function" && typeof theme.bold === "function") {
      this.current = theme;
    } else {
      return {
        success: false,
        error: "setTheme() needs a theme name or a theme object with fg(), bg(), bold()",
      };
    }
    for (const listener of this.listeners) listener(this.current);
    return { success: true };
  }

  /** Called after each successful switch; returns the unsubscribe function. */
  onChange(listener: (theme: UITheme) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/**
 * A theme file: `{"name", "base"?, "vars"?, "colors"}` (the closest peer's format, so its themes load unchanged).
 * `colors` maps token names, foreground and background alike, to a colour: `"#rrggbb"`, a 256-colour index, `""`
 * for the terminal's default, or the name of an entry of `vars`. Tokens it leaves out come from the built-in theme
 * `base` names (`dark` by default); unknown tokens are ignored, so a theme written for a newer version still loads.
 */
export function themeFromFile(
  path: string,
  options: Omit<ThemeOptions, "name" | "sourcePath"> = {},
): { theme: Theme } | { error: string } {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8").replace(/^\uFEFF/, ""));
  } catch (error) {
    return { error: `theme ${path} cannot be read: ${(error as Error).message}` };
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return { error: `theme ${path} must be a JSON object with "name" and "colors"` };
  }
  const { name, base = "dark", vars = {}, colors } = json as Record<string, unknown>;
  if (typeof name !== "string" || name.trim() === "") return { error: `theme ${path} has no "name"` };
  if (typeof colors !== "object" || colors === null || Array.isArray(colors)) {
    return { error: `theme ${path} has no "colors" object` };
  }
  const palette = typeof base === "string" && Object.hasOwn(PALETTES, base) ? PALETTES[base] : undefined;
  if (!palette) return { error: `theme ${path}: "base" must be one of ${BUILTIN_THEMES.join(", ")}` };
  const variables = typeof vars === "object" && vars !== null ? (vars as Record<string, unknown>) : {};
  const fg = { ...palette.fg };
  const bg = { ...palette.bg };
  for (const [token, raw] of Object.entries(colors as Record<string, unknown>)) {
    const value = typeof raw === "string" && Object.hasOwn(variables, raw) ? variables[raw] : raw;
    if (!isColorValue(value)) {
      return {
        error: `theme ${path}: colour of "${token}" must be "#rrggbb", 0-255, "" or a name from "vars", not ${JSON.stringify(raw)}`,
      };
    }
    if (Object.hasOwn(fg, token)) fg[token as ThemeColor] = value;
    else if (Object.hasOwn(bg, token)) bg[token as ThemeBg] = value;
  }
  const hex = [...Object.values(fg), ...Object.values(bg)].some((v) => typeof v === "string" && v !== "");
  return { theme: new Theme(fg, bg, hex ? "truecolor" : "256color", { ...options, name, sourcePath: path }) };
}

function isColorValue(value: unknown): value is ThemeColorValue {
  if (typeof value === "number") return Number.isInteger(value) && value >= 0 && value <= 255;
  return typeof value === "string" && (value === "" || /^#[0-9a-f]{6}$/i.test(value));
}

/**
 * The theme and tool-output part of `ctx.ui` for a mode that keeps no theme store of its own (RPC, the app-server,
 * the line-mode terminal): the built-in themes through a ThemeSelection, and the expanded flag kept so an
 * extension reads back what it set. Such a mode's UI class extends this and adds the rest.
 */
export class ThemedUI {
  protected readonly themes = new ThemeSelection();
  protected toolsExpanded = false;

  get theme(): UITheme {
    return this.themes.theme;
  }

  getAllThemes(): { name: string; path: string | undefined }[] {
    return this.themes.all();
  }

  getTheme(name: string): UITheme | undefined {
    return this.themes.get(name);
  }

  setTheme(theme: string | UITheme): { success: boolean; error?: string } {
    return this.themes.set(theme);
  }

  getToolsExpanded(): boolean {
    return this.toolsExpanded;
  }

  setToolsExpanded(expanded: boolean): void {
    this.toolsExpanded = expanded;
  }
}
