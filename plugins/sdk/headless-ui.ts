import type { ExtensionUIContext } from "../../kernel/index.js";

/** The UI of modes without one (print, JSON, SDK by default): dialogs answer "no" at once, surfaces are no-ops. */
export const headlessUI: ExtensionUIContext = Object.freeze({
  select: async () => undefined,
  confirm: async () => false,
  input: async () => undefined,
  editor: async () => undefined,
  notify: () => {},
  setStatus: () => {},
  setWidget: () => {},
  setTitle: () => {},
  setWorkingMessage: () => {},
  setEditorText: () => {},
  getEditorText: () => "",
  custom: async () => undefined,
});
