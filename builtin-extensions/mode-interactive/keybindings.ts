/**
 * The interactive mode's key bindings: the editor's own (`tui.*`, from pi-tui) and the app's (`app.*`), with what a
 * person changed in `<agentDir>/keybindings.json`. The file maps a binding name to a key or a list of keys
 * (`{"app.followUp": ["alt+enter", "ctrl+j"]}`); a key bound to two things and an extension shortcut on a key the
 * app already uses are reported, never silently dropped.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type KeybindingsConfig,
  KeybindingsManager,
  type KeyId,
  setKeybindings,
  TUI_KEYBINDINGS,
} from "@knightcodeai/cli/tui";

declare module "@mariozechner/pi-tui" {
  interface Keybindings {
    "app.interrupt": true;
    "app.clear": true;
    "app.exit": true;
    "app.followUp": true;
    "app.tools.expand": true;
    "app.thinking.toggle": true;
    "app.thinking.cycle": true;
    "app.model.cycle": true;
    "app.clipboard.pasteImage": true;
  }
}

export const APP_KEYBINDINGS = {
  "app.interrupt": { defaultKeys: "escape", description: "Stop the run (or the shell command)" },
  "app.clear": { defaultKeys: "ctrl+c", description: "Stop the run, else clear the editor; twice quits" },
  "app.exit": { defaultKeys: "ctrl+d", description: "Quit when the editor is empty" },
  "app.followUp": { defaultKeys: "alt+enter", description: "While busy: queue as a follow-up" },
  "app.tools.expand": { defaultKeys: "ctrl+o", description: "Expand or collapse tool output" },
  "app.thinking.toggle": { defaultKeys: "ctrl+t", description: "Show or hide thinking" },
  "app.thinking.cycle": { defaultKeys: "shift+tab", description: "Next thinking level" },
  "app.model.cycle": { defaultKeys: "ctrl+p", description: "Next model" },
  // pi's keys: Windows terminals take ctrl+v for their own paste.
  "app.clipboard.pasteImage": {
    defaultKeys: process.platform === "win32" ? "alt+v" : "ctrl+v",
    description: "Paste an image from the clipboard (types its saved path)",
  },
} as const;

export type AppBinding = keyof typeof APP_KEYBINDINGS;

const DEFINITIONS = { ...TUI_KEYBINDINGS, ...APP_KEYBINDINGS };

export interface LoadedKeybindings {
  manager: KeybindingsManager;
  /** Problems with the file and keys bound twice, one sentence each. */
  problems: string[];
}

/** Reads `<agentDir>/keybindings.json` (absent is fine) and makes the result the bindings pi-tui's editor uses. */
export function loadKeybindings(agentDir: string): LoadedKeybindings {
  const file = join(agentDir, "keybindings.json");
  const problems: string[] = [];
  const config: KeybindingsConfig = {};
  let text: string | undefined;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    // No file: the defaults.
  }
  if (text !== undefined) {
    let json: unknown;
    try {
      json = JSON.parse(text.replace(/^\uFEFF/, ""));
    } catch (error) {
      problems.push(`${file} is not valid JSON (${(error as Error).message}); using the default keys`);
    }
    if (json !== undefined && (typeof json !== "object" || json === null || Array.isArray(json))) {
      problems.push(`${file} must be a JSON object of binding names to keys; using the default keys`);
    } else if (json) {
      for (const [name, keys] of Object.entries(json as Record<string, unknown>)) {
        if (!Object.hasOwn(DEFINITIONS, name)) {
          problems.push(`${file}: "${name}" is not a key binding (/hotkeys lists them)`);
        } else if (
          typeof keys === "string" ||
          (Array.isArray(keys) && keys.every((k) => typeof k === "string"))
        ) {
          config[name] = keys as KeyId | KeyId[];
        } else {
          problems.push(`${file}: "${name}" needs a key or a list of keys, not ${JSON.stringify(keys)}`);
        }
      }
    }
  }
  const manager = new KeybindingsManager(DEFINITIONS, config);
  for (const conflict of manager.getConflicts()) {
    problems.push(
      `key ${conflict.key} is bound to ${conflict.keybindings.join(" and ")}; the first one wins`,
    );
  }
  setKeybindings(manager);
  return { manager, problems };
}

/** Every binding with its keys and description, for `/hotkeys` and the docs. */
export function describeBindings(
  manager: KeybindingsManager,
): { name: string; keys: string[]; description: string }[] {
  return Object.entries(DEFINITIONS).map(([name, definition]) => ({
    name,
    keys: manager.getKeys(name as keyof typeof DEFINITIONS),
    description: definition.description ?? "",
  }));
}

/** The binding names whose keys include `key` (an extension shortcut there would shadow them). */
export function bindingsOnKey(manager: KeybindingsManager, key: string): string[] {
  const wanted = key.toLowerCase();
  return Object.keys(DEFINITIONS).filter((name) =>
    manager.getKeys(name as keyof typeof DEFINITIONS).some((k) => k.toLowerCase() === wanted),
  );
}
