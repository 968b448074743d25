/**
 * builtin:tool-settings — the `/tools` command: lists and changes the state and settings of the tools tools.json
 * manages (the classifier gate, ask_user), in every mode that runs commands. It goes through the same functions
 * as the app-server's `tool/settings/read|write`, so values of keys ending in `Key` are masked here too.
 *
 *   /tools                          every managed tool, its state and settings, and the classifier models
 *   /tools <name>                   one tool, with what each of its settings means
 *   /tools <name> on|off            turns it on or off
 *   /tools <name> <key>=<value>     sets a setting; `<key>=` removes it
 */
import {
  type ExtensionAPI,
  type ExtensionContext,
  errorMessage,
  listToolSettings,
  MANAGED_TOOLS,
  type ToolSettingsListing,
  writeToolSetting,
} from "@knightcodeai/cli/kit";

const USAGE = "Usage: /tools [<name> [on|off|<key>=<value>|<key>=]]";

export default function toolSettings(knightcode: ExtensionAPI): void {
  knightcode.registerCommand("tools", {
    description: "List and change the settings of KnightCode's tools (tools.json)",
    getArgumentCompletions: (prefix) => {
      const words = prefix.split(/\s+/);
      if (words.length > 1) return undefined;
      return MANAGED_TOOLS.filter((t) => t.name.startsWith(words[0] ?? "")).map((t) => ({
        value: t.name,
        label: t.name,
      }));
    },
    handler: (args, ctx) => {
      const words = args.trim().split(/\s+/).filter(Boolean);
      if (words.length === 0) return show(ctx, listToolSettings(ctx.agentDir));
      const [name, ...rest] = words;
      const tool = MANAGED_TOOLS.find((t) => t.name === name);
      if (!tool) {
        ctx.ui.notify(
          `Unknown tool "${name}"; tools.json manages: ${MANAGED_TOOLS.map((t) => t.name).join(", ")}. ${USAGE}`,
          "error",
        );
        return undefined;
      }
      if (rest.length === 0) return show(ctx, listToolSettings(ctx.agentDir), name);
      const change = rest.join(" ");
      try {
        if (change === "on" || change === "off")
          writeToolSetting(ctx.agentDir, tool.name, "enabled", change === "on");
        else {
          const eq = change.indexOf("=");
          if (eq <= 0) throw new Error(USAGE);
          const value = change.slice(eq + 1).trim();
          writeToolSetting(ctx.agentDir, tool.name, change.slice(0, eq).trim(), value === "" ? null : value);
        }
      } catch (error) {
        ctx.ui.notify(errorMessage(error), "error");
        return undefined;
      }
      return show(ctx, listToolSettings(ctx.agentDir), name);
    },
  });
}

function show(ctx: ExtensionContext, listing: ToolSettingsListing, only?: string): ToolSettingsListing {
  const lines = [`Tools (${listing.path}):`];
  for (const tool of listing.tools) {
    if (only && tool.name !== only) continue;
    const managed = MANAGED_TOOLS.find((t) => t.name === tool.name)!;
    lines.push(`${tool.name}  ${tool.enabled ? "on" : "off"}  ${managed.description}`);
    for (const [key, value] of Object.entries(tool.settings)) lines.push(`  ${key} = ${value}`);
    if (only) {
      for (const [key, meaning] of Object.entries(managed.settings)) {
        if (!(key in tool.settings)) lines.push(`  ${key}: ${meaning}`);
      }
    }
  }
  if (!only || only === "classifier-gate") {
    const classifiers = ctx.modelRegistry.getAvailableClassifiers().map((c) => `${c.provider}/${c.model}`);
    lines.push(`Classifier models: ${classifiers.length > 0 ? classifiers.join(", ") : "none available"}`);
  }
  if (listing.warning) lines.push(`Warning: ${listing.warning}`);
  ctx.ui.notify(lines.join("\n"), listing.warning ? "warning" : "info");
  return listing;
}
