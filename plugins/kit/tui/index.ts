/**
 * The terminal UI building blocks published as `@knightcodeai/cli/tui`: every export of pi-tui (the very classes
 * the interactive mode draws with: Editor with autocomplete, undo and the kill ring, Markdown, SelectList,
 * SettingsList, Input, Loader, the key parser, the width helpers, ...), and what KnightCode adds that pi-tui has
 * not: themes, the component themes made from them, CustomEditor, BorderedLoader, DynamicBorder, key hints,
 * DetachedUI and `asTUI` for the `tui` a factory is given, and `stripAnsi`. See docs/tui.md.
 */
import type { SettingsList } from "@mariozechner/pi-tui";

export * from "@mariozechner/pi-tui";
/** pi-tui's module itself: what an extension written for pi gets when it imports `@mariozechner/pi-tui`. */
export * as piTui from "@mariozechner/pi-tui";
export type {
  EditorFactory,
  TerminalInputHandler,
  UIComponent,
  UIHost,
  UITheme,
} from "../../../kernel/index.js";
export {
  BUILTIN_THEMES,
  builtinTheme,
  type ColorMode,
  Theme,
  type ThemeColorValue,
  type ThemeOptions,
  ThemeSelection,
} from "../theme.js";
export { stripAnsi } from "./ansi.js";
export { BorderedLoader } from "./bordered-loader.js";
export { CustomEditor } from "./custom-editor.js";
export { DynamicBorder } from "./dynamic-border.js";
export { asTUI, DetachedUI, isTUI, type TUISurface } from "./host.js";
export {
  getEditorTheme,
  getMarkdownTheme,
  getSelectListTheme,
  getSettingsListTheme,
  keyHint,
  keyText,
  rawKeyHint,
} from "./themes.js";

/** The options `SettingsList` takes last (pi-tui declares them without exporting the type). */
export type SettingsListOptions = NonNullable<ConstructorParameters<typeof SettingsList>[5]>;
