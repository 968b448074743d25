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
    "app.editor.external": true;
    "app.suspend": true;
    "app.model.select": true;
    "app.message.dequeue": true;
  }
}

export const APP_KEYBINDINGS = {
  "app.interrupt": {
    defaultKeys: "escape",
    description: "Stop the run (or the shell command); twice on an empty editor, /tree (doubleEscapeAction)",
  },
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
  "app.editor.external": { defaultKeys: "ctrl+g", description: "Edit the message in $VISUAL or $EDITOR" },
  // Windows terminals have no job control (pi binds nothing there either).
  "app.suspend": {
    defaultKeys: process.platform === "win32" ? [] : "ctrl+z",
    description: "Suspend KnightCode to the shell (fg resumes it)",
  },
  "app.model.select": { defaultKeys: "ctrl+l", description: "Pick the model" },
  "app.message.dequeue": { defaultKeys: "alt+up", description: "Queued messages back to the editor to edit" },
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

/** The binding names whose keys include `key` (an extension shortcut there would shadow them). */
export function bindingsOnKey(manager: KeybindingsManager, key: string): string[] {
  const wanted = key.toLowerCase();
  return Object.keys(DEFINITIONS).filter((name) =>
    manager.getKeys(name as keyof typeof DEFINITIONS).some((k) => k.toLowerCase() === wanted),
  );
}

/** The context a key works in, for `/hotkeys`: typing (the app's keys and the editor's), or lists and dialogs. */
function sectionOf(name: string): "typing" | "lists" {
  return name.startsWith("tui.select.") ? "lists" : "typing";
}

/**
 * `/hotkeys`: each key once, with its one meaning. Where the app and the editor share a key (ctrl+d quits on an
 * empty editor, else deletes), the meanings are joined in the order they apply; extension shortcuts follow.
 */
export function hotkeyRows(
  manager: KeybindingsManager,
  shortcuts: { key: string; description?: string; owner: string }[],
): { title: string; rows: [string, string][] }[] {
  const sections = { typing: new Map<string, string[]>(), lists: new Map<string, string[]>() };
  // The app's bindings come first: they see a key before the editor does.
  const names = Object.keys(DEFINITIONS).sort(
    (a, b) => Number(b.startsWith("app.")) - Number(a.startsWith("app.")),
  );
  for (const name of names) {
    const description = DEFINITIONS[name as keyof typeof DEFINITIONS].description ?? name;
    for (const key of manager.getKeys(name as keyof typeof DEFINITIONS)) {
      const map = sections[sectionOf(name)];
      const meanings = map.get(key) ?? [];
      meanings.push(`${description} (${name})`);
      map.set(key, meanings);
    }
  }
  const rows = (map: Map<string, string[]>): [string, string][] =>
    [...map].map(([key, meanings]) => [key, meanings.join("; else ")]);
  const result = [
    { title: "While typing", rows: rows(sections.typing) },
    { title: "In lists and dialogs", rows: rows(sections.lists) },
  ];
  if (shortcuts.length > 0)
    result.push({
      title: "Extension shortcuts",
      rows: shortcuts.map((s) => [s.key, `${s.description ?? "extension shortcut"} (${s.owner})`]),
    });
  return result;
}
