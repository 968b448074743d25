/**
 * CustomEditor: pi-tui's `Editor` (autocomplete, undo, the kill ring, history, paste placeholders) with the app's
 * keys in front of it, the editor extensions subclass (`class VimEditor extends CustomEditor`) and install with
 * `ctx.ui.setEditorComponent`. pi-tui has no such class; pi's coding agent does, and this one behaves as pi's: before
 * editing it offers each key to `onExtensionShortcut`, then the paste-image key to `onPasteImage`, escape
 * (`app.interrupt`, unless the autocomplete list is open, which escape closes) to `onEscape`, ctrl+d (`app.exit`)
 * on an empty editor to `onCtrlD`, and the keys of actions registered with `onAction`. A subclass overrides
 * `handleInput` and calls `super.handleInput(data)` for the keys it leaves alone.
 *
 * `keybindings` is what the mode passes to an editor factory (in the interactive mode, pi-tui's
 * `KeybindingsManager` with the person's keybindings.json); an action it does not know keeps its default key.
 */
import { Editor, type EditorOptions, type EditorTheme, type KeyId, matchesKey } from "@mariozechner/pi-tui";
import type { UIEditorTheme, UIHost } from "../../../kernel/index.js";
import { asTUI, type TUISurface } from "./host.js";

/** What the editor needs of a key-binding manager: whether data is one of an action's keys. */
interface ActionMatcher {
  matches(data: string, action: string): boolean;
  getKeys?(action: string): readonly string[];
}

const isMatcher = (value: unknown): value is ActionMatcher =>
  typeof (value as ActionMatcher | undefined)?.matches === "function";

/** The app actions the editor itself answers, with their keys when no binding manager says otherwise. */
const DEFAULT_KEYS: Readonly<Record<string, KeyId>> = {
  "app.interrupt": "escape",
  "app.exit": "ctrl+d",
  "app.clipboard.pasteImage": process.platform === "win32" ? "alt+v" : "ctrl+v",
};

export class CustomEditor extends Editor {
  readonly actionHandlers = new Map<string, () => void>();
  onEscape?: () => void;
  onCtrlD?: () => void;
  onPasteImage?: () => void;
  /** Returns true when an extension shortcut took the key. */
  onExtensionShortcut?: (data: string) => boolean;
  private readonly bindings: ActionMatcher | undefined;

  constructor(
    tui: UIHost | TUISurface,
    theme: UIEditorTheme | EditorTheme,
    keybindings?: unknown,
    options?: EditorOptions,
  ) {
    super(asTUI(tui), theme, options);
    this.bindings = isMatcher(keybindings) ? keybindings : undefined;
  }

  onAction(action: string, handler: () => void): void {
    this.actionHandlers.set(action, handler);
  }

  /** Whether `data` is one of `action`'s keys: the binding manager's, else the action's default key. */
  private isAction(data: string, action: string): boolean {
    const bindings = this.bindings;
    if (bindings?.matches(data, action)) return true;
    const known = bindings?.getKeys ? bindings.getKeys(action).length > 0 : false;
    const fallback = DEFAULT_KEYS[action];
    return !known && fallback !== undefined && matchesKey(data, fallback);
  }

  override handleInput(data: string): void {
    if (this.onExtensionShortcut?.(data)) return;
    if (this.isAction(data, "app.clipboard.pasteImage") && this.onPasteImage) {
      this.onPasteImage();
      return;
    }
    if (this.isAction(data, "app.interrupt")) {
      const handler = this.onEscape ?? this.actionHandlers.get("app.interrupt");
      if (handler && !this.isShowingAutocomplete()) {
        handler();
        return;
      }
      super.handleInput(data);
      return;
    }
    if (this.isAction(data, "app.exit") && this.getText().length === 0) {
      (this.onCtrlD ?? this.actionHandlers.get("app.exit"))?.();
      return;
    }
    for (const [action, handler] of this.actionHandlers) {
      if (action !== "app.interrupt" && action !== "app.exit" && this.bindings?.matches(data, action)) {
        handler();
        return;
      }
    }
    super.handleInput(data);
  }
}
