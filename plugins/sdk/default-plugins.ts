import type { PluginDefinition } from "../../kernel/index.js";
import { commandRegistryPlugin } from "../command-registry/command-registry.js";
import { flagRegistryPlugin } from "../flag-registry/flag-registry.js";

/** The services a standard KnightCode session is built from. A host may replace any by providing its token. */
export function defaultPlugins(): PluginDefinition<any, any>[] {
  return [commandRegistryPlugin, flagRegistryPlugin];
}
