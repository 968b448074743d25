/**
 * CustomEditor: the editor extensions subclass (`class VimEditor extends CustomEditor`) and install with
 * `ctx.ui.setEditorComponent`. Before editing it offers each key to the app: extension shortcuts, escape, ctrl+d
 * on an empty editor, and actions registered with `onAction` when the key bindings know the action's keys.
 * A subclass overrides `handleInput` and calls `super.handleInput(data)` for the keys it leaves alone.
 */
import type { UIHost } from "../../../kernel/index.js";
import { Editor, type EditorOptions, type EditorTheme } from "./editor.js";
import { matchesKey } from "./keys.js";

/** The part of a key-binding manager the editor uses: whether data is one of an action's keys. */
interface ActionMatcher {
  matches(data: string, action: string): boolean;
}

const isMatcher = (value: unknown): value is ActionMatcher =>
  typeof (value as ActionMatcher | undefined)?.matches === "function";

export class CustomEditor extends Editor {
  readonly actionHandlers = new Map<string, () => void>();
  onEscape?: () => void;
  onCtrlD?: () => void;
  onPasteImage?: () => void;
  /** Returns true when an extension shortcut took the key. */
  onExtensionShortcut?: (data: string) => boolean;

  constructor(
    tui: UIHost,
    theme: EditorTheme,
    private readonly keybindings?: unknown,
    options?: EditorOptions,
  ) {
    super(tui, theme, options);
  }

  onAction(action: string, handler: () => void): void {
    this.actionHandlers.set(action, handler);
  }

  override handleInput(data: string): void {
    if (this.onExtensionShortcut?.(data)) return;
    if (matchesKey(data, "escape") && this.onEscape) {
      this.onEscape();
      return;
    }
    if (matchesKey(data, "ctrl+d") && this.getText() === "" && this.onCtrlD) {
      this.onCtrlD();
      return;
    }
    const bindings = this.keybindings;
    if (isMatcher(bindings)) {
      for (const [action, handler] of this.actionHandlers) {
        if (bindings.matches(data, action)) {
          handler();
          return;
        }
      }
    }
    super.handleInput(data);
  }
}
