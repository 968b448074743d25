/**
 * The `ctx.ui` of a session without a UI (print, JSON, an SDK host that binds none): dialogs answer "no" at once
 * and everything that would be drawn does nothing. The theme still colours (plain under NO_COLOR), as the peer's
 * does, so text an extension styles reads the same in every mode. It lives in the kit, not the kernel: what a host
 * without a screen does is a host's matter.
 */
import type { ExtensionUIContext } from "../../kernel/index.js";
import { builtinTheme } from "./theme.js";

const noop = () => {};

export const headlessUI: ExtensionUIContext = Object.freeze({
  select: async () => undefined,
  confirm: async () => false,
  input: async () => undefined,
  editor: async () => undefined,
  custom: async () => undefined,
  notify: noop,
  setStatus: noop,
  setWidget: noop,
  setTitle: noop,
  setWorkingMessage: noop,
  setWorkingVisible: noop,
  setWorkingIndicator: noop,
  setHiddenThinkingLabel: noop,
  setFooter: noop,
  setHeader: noop,
  setEditorText: noop,
  getEditorText: () => "",
  pasteToEditor: noop,
  setEditorComponent: noop,
  getEditorComponent: () => undefined,
  onTerminalInput: () => noop,
  onViewEvent: () => noop,
  theme: builtinTheme("dark")!,
  getAllThemes: () => [],
  getTheme: () => undefined,
  setTheme: () => ({ success: false, error: "This session has no UI to theme" }),
  getToolsExpanded: () => false,
  setToolsExpanded: noop,
});
