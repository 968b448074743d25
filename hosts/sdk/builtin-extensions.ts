/**
 * The built-in extensions, in load order (builtin-manifest.ts declares what each registers). Each is imported on
 * first use, so a session that disables one never pays for it, and each goes through the same loader door as a
 * stranger's extension (`builtin:<name>`). A built-in keeps its heavy code behind a loader of its own: a mode's
 * factory registers the name and an `import()` of the mode, a provider loads its SDK on the first request.
 */
import type { ExtensionFactory, ExtensionSource } from "../../kernel/index.js";
import { BUILTIN_MANIFEST, type BuiltinName } from "./builtin-manifest.js";

const LOADERS: Record<BuiltinName, () => Promise<{ default: ExtensionFactory }>> = {
  "core-tools": () => import("../../builtin-extensions/core-tools/index.js"),
  compaction: () => import("../../builtin-extensions/compaction/index.js"),
  "pi-compat": () => import("../../builtin-extensions/pi-compat/index.js"),
  "prompt-templates": () => import("../../builtin-extensions/prompt-templates/index.js"),
  scripted: () => import("../../builtin-extensions/scripted-provider/extension.js"),
  anthropic: () => import("../../builtin-extensions/providers/anthropic/extension.js"),
  openai: () => import("../../builtin-extensions/providers/openai/extension.js"),
  "openai-compatible": () => import("../../builtin-extensions/providers/openai-compatible/extension.js"),
  "github-copilot": () => import("../../builtin-extensions/providers/github-copilot/extension.js"),
  google: () => import("../../builtin-extensions/providers/google/extension.js"),
  "html-export": () => import("../../builtin-extensions/html-export/index.js"),
  skills: () => import("../../builtin-extensions/skills/index.js"),
  mcp: () => import("../../builtin-extensions/mcp/index.js"),
  "mcp-command": () => import("../../builtin-extensions/mcp-command/index.js"),
  codemode: () => import("../../builtin-extensions/codemode/index.js"),
  "tool-search": () => import("../../builtin-extensions/tool-search/index.js"),
  "classifier-gate": () => import("../../builtin-extensions/classifier-gate/index.js"),
  "ask-user": () => import("../../builtin-extensions/ask-user/index.js"),
  "plan-mode": () => import("../../builtin-extensions/plan-mode/index.js"),
  web: () => import("../../builtin-extensions/web/index.js"),
  "tool-settings": () => import("../../builtin-extensions/tool-settings/index.js"),
  themes: () => import("../../builtin-extensions/themes/index.js"),
  worktrees: () => import("../../builtin-extensions/worktrees/index.js"),
  "mode-print": () => import("../../builtin-extensions/mode-print/index.js"),
  "mode-json": () => import("../../builtin-extensions/mode-json/index.js"),
  "mode-rpc": () => import("../../builtin-extensions/mode-rpc/index.js"),
  "mode-app-server": () => import("../../builtin-extensions/mode-app-server/index.js"),
  "mode-acp": () => import("../../builtin-extensions/mode-acp/index.js"),
  "mode-interactive": () => import("../../builtin-extensions/mode-interactive/index.js"),
};

/** Sources for the enabled built-ins; `disabled` holds owner ids such as `builtin:scripted`. */
export function builtinSources(disabled: ReadonlySet<string>): ExtensionSource[] {
  return BUILTIN_MANIFEST.filter((b) => !disabled.has(`builtin:${b.name}`)).map(({ name }) => ({
    origin: "builtin" as const,
    name,
    factory: async (api) => (await LOADERS[name]()).default(api),
  }));
}
