/** The terminal UI building blocks published as `@knightcodeai/cli/tui`. */
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
export { Box } from "./box.js";
export {
  type Component,
  Container,
  CURSOR_MARKER,
  DetachedUI,
  type Focusable,
  isFocusable,
} from "./component.js";
export { CustomEditor } from "./custom-editor.js";
export { Editor, type EditorOptions, type EditorTheme } from "./editor.js";
export { type FuzzyMatch, fuzzyFilter, fuzzyMatch } from "./fuzzy.js";
export { Input } from "./input.js";
export {
  type BaseKey,
  decodeKittyPrintable,
  isKeyRelease,
  isKeyRepeat,
  Key,
  type KeyEventType,
  type KeyId,
  matchesKey,
  parseKey,
} from "./keys.js";
export { BorderedLoader, CancellableLoader, Loader, type LoaderIndicatorOptions } from "./loader.js";
export { type DefaultTextStyle, Markdown, type MarkdownTheme } from "./markdown.js";
export {
  type SelectItem,
  SelectList,
  type SelectListLayoutOptions,
  type SelectListTheme,
} from "./select-list.js";
export {
  type SettingItem,
  SettingsList,
  type SettingsListOptions,
  type SettingsListTheme,
} from "./settings-list.js";
export { DynamicBorder, Spacer, Text, TruncatedText } from "./text.js";
export {
  getEditorTheme,
  getMarkdownTheme,
  getSelectListTheme,
  getSettingsListTheme,
  keyHint,
  keyText,
  rawKeyHint,
} from "./themes.js";
export { stripAnsi, truncateToWidth, visibleWidth, wrapTextWithAnsi } from "./width.js";
