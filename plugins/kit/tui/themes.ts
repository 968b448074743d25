/**
 * The component themes built from a colour theme, and key hints. Without an argument they use the dark built-in
 * theme (which writes no colour under NO_COLOR); pass `ctx.ui.theme` to follow the session's theme.
 */
import {
  type EditorTheme,
  getKeybindings,
  type Keybinding,
  type MarkdownTheme,
  type SelectListTheme,
  type SettingsListTheme,
} from "@mariozechner/pi-tui";
import type { UITheme } from "../../../kernel/index.js";
import { builtinTheme } from "../theme.js";

let fallback: UITheme | undefined;
function pick(theme?: UITheme): UITheme {
  if (theme) return theme;
  fallback ??= builtinTheme("dark")!;
  return fallback;
}

export function getMarkdownTheme(theme?: UITheme): MarkdownTheme {
  const t = pick(theme);
  return {
    heading: (s) => t.fg("mdHeading", s),
    link: (s) => t.fg("mdLink", s),
    linkUrl: (s) => t.fg("mdLinkUrl", s),
    code: (s) => t.fg("mdCode", s),
    codeBlock: (s) => t.fg("mdCodeBlock", s),
    codeBlockBorder: (s) => t.fg("mdCodeBlockBorder", s),
    quote: (s) => t.fg("mdQuote", s),
    quoteBorder: (s) => t.fg("mdQuoteBorder", s),
    hr: (s) => t.fg("mdHr", s),
    listBullet: (s) => t.fg("mdListBullet", s),
    bold: (s) => t.bold(s),
    italic: (s) => t.italic(s),
    strikethrough: (s) => t.strikethrough(s),
    underline: (s) => t.underline(s),
  };
}

export function getSelectListTheme(theme?: UITheme): SelectListTheme {
  const t = pick(theme);
  return {
    selectedPrefix: (s) => t.fg("accent", s),
    selectedText: (s) => t.fg("accent", s),
    description: (s) => t.fg("muted", s),
    scrollInfo: (s) => t.fg("muted", s),
    noMatch: (s) => t.fg("muted", s),
  };
}

export function getSettingsListTheme(theme?: UITheme): SettingsListTheme {
  const t = pick(theme);
  return {
    label: (s, selected) => (selected ? t.fg("accent", s) : s),
    value: (s, selected) => (selected ? t.fg("accent", s) : t.fg("muted", s)),
    description: (s) => t.fg("dim", s),
    cursor: t.fg("accent", "→ "),
    hint: (s) => t.fg("dim", s),
  };
}

export function getEditorTheme(theme?: UITheme): EditorTheme {
  const t = pick(theme);
  return { borderColor: (s) => t.fg("borderMuted", s), selectList: getSelectListTheme(t) };
}

/**
 * The default keys of the app's bindings, by the peer's names, for hints shown where no mode has registered them
 * with pi-tui (a test, a headless mode). The interactive mode registers every binding, `app.*` included, with the
 * person's keybindings.json applied, and then hints show those keys.
 */
const APP_KEYS: Readonly<Record<string, string>> = {
  "app.interrupt": "escape",
  "app.clear": "ctrl+c",
  "app.exit": "ctrl+d",
};

const isBinding = (name: string): name is Keybinding => /^(app|tui)\./.test(name);

/**
 * The keys of a named binding (`"app.interrupt"`, `"tui.select.confirm"`, ...) as pi-tui's current bindings have
 * them, several joined with "/"; the argument itself when it is a key rather than a binding (`"ctrl+x"`).
 */
export function keyText(binding: string): string {
  const keys = isBinding(binding) ? getKeybindings().getKeys(binding) : [];
  return keys.length > 0 ? keys.join("/") : (APP_KEYS[binding] ?? binding);
}

/** A binding's key and what it does, dim and muted, for hint lines (`keyHint("app.interrupt", "cancel")`). */
export function keyHint(binding: string, description: string, theme?: UITheme): string {
  return rawKeyHint(keyText(binding), description, theme);
}

/** A key as given and what it does, for hint lines (`rawKeyHint("ctrl+x", "close")`). */
export function rawKeyHint(key: string, description: string, theme?: UITheme): string {
  const t = pick(theme);
  return t.fg("dim", key) + t.fg("muted", ` ${description}`);
}
