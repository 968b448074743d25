/**
 * The built-in extensions, in load order. Each is imported on first use, so a session that disables one never
 * pays for it, and each goes through the same loader door as a stranger's extension (`builtin:<name>`).
 */
import type { ExtensionFactory, ExtensionSource } from "../../kernel/index.js";

interface Builtin {
  name: string;
  load: () => Promise<{ default: ExtensionFactory }>;
}

const BUILTINS: readonly Builtin[] = [
  { name: "core-tools", load: () => import("../../builtin-extensions/core-tools/index.js") },
  { name: "scripted", load: () => import("../../builtin-extensions/scripted-provider/index.js") },
  { name: "anthropic", load: () => import("../../builtin-extensions/providers/anthropic/index.js") },
  { name: "openai", load: () => import("../../builtin-extensions/providers/openai/index.js") },
  {
    name: "openai-compatible",
    load: () => import("../../builtin-extensions/providers/openai-compatible/index.js"),
  },
  { name: "mode-print", load: () => import("../../builtin-extensions/mode-print/index.js") },
  { name: "mode-json", load: () => import("../../builtin-extensions/mode-json/index.js") },
  { name: "mode-rpc", load: () => import("../../builtin-extensions/mode-rpc/index.js") },
  { name: "mode-interactive", load: () => import("../../builtin-extensions/mode-interactive/index.js") },
];

export function builtinNames(): string[] {
  return BUILTINS.map((b) => b.name);
}

/** Sources for the enabled built-ins; `disabled` holds owner ids such as `builtin:scripted`. */
export function builtinSources(disabled: ReadonlySet<string>): ExtensionSource[] {
  return BUILTINS.filter((b) => !disabled.has(`builtin:${b.name}`)).map((b) => ({
    origin: "builtin" as const,
    name: b.name,
    factory: async (api) => (await b.load()).default(api),
  }));
}
