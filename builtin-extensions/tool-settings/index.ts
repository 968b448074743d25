/**
 * builtin:tool-settings — the `/tools` command: lists and changes the state and settings kept in tools.json for
 * what the session's extensions declared with `registerToolSettings` (the classifier gate, ask_user, or their
 * replacements), in every mode that runs commands. It goes through `ctx.toolSettings`, as the app-server's
 * `tool/settings/read|write` does, so values of keys ending in `Key` are masked here too.
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
  type ToolSettingsListing,
} from "@knightcodeai/cli/kit";

const USAGE = "Usage: /tools [<name> [on|off|<key>=<value>|<key>=]]";

export default function toolSettings(knightcode: ExtensionAPI): void {
  /** The names the session's extensions declared, for completions (kept from the last listing). */
  let names: string[] = [];
  knightcode.on("session_start", (_event, ctx) => {
    names = ctx.toolSettings.list().tools.map((t) => t.name);
  });
  knightcode.registerCommand("tools", {
    description: "List and change the settings of KnightCode's tools (tools.json)",
    getArgumentCompletions: (prefix) => {
      const words = prefix.split(/\s+/);
      if (words.length > 1) return undefined;
      return names.filter((n) => n.startsWith(words[0] ?? "")).map((n) => ({ value: n, label: n }));
    },
    handler: (args, ctx) => {
      const words = args.trim().split(/\s+/).filter(Boolean);
      const listing = ctx.toolSettings.list();
      names = listing.tools.map((t) => t.name);
      if (words.length === 0) return show(ctx, listing);
      const [name, ...rest] = words;
      const tool = listing.tools.find((t) => t.name === name);
      if (!tool) {
        ctx.ui.notify(
          `Unknown tool "${name}"; tools.json manages: ${names.join(", ") || "nothing in this session"}. ${USAGE}`,
          "error",
        );
        return undefined;
      }
      if (rest.length === 0) return show(ctx, listing, tool.name);
      const change = rest.join(" ");
      let done: string;
      try {
        if (change === "on" || change === "off") {
          ctx.toolSettings.write(tool.name, "enabled", change === "on");
          done = `${tool.name} ${change}`;
        } else {
          const eq = change.indexOf("=");
          if (eq <= 0) throw new Error(USAGE);
          const key = change.slice(0, eq).trim();
          const value = change.slice(eq + 1).trim();
          ctx.toolSettings.write(tool.name, key, value === "" ? null : value);
          // Shown as stored (an API key masked), not as typed.
          const stored = ctx.toolSettings.list().tools.find((t) => t.name === tool.name)?.settings[key];
          done = value === "" ? `${tool.name}: ${key} removed` : `${tool.name}: ${key} = ${stored ?? value}`;
        }
      } catch (error) {
        ctx.ui.notify(errorMessage(error), "error");
        return undefined;
      }
      // A change is confirmed in one line; `/tools <name>` shows the whole entry.
      const after = ctx.toolSettings.list();
      ctx.ui.notify(
        `${done} (saved in ${after.path}; applies from the next tool call)${after.warning ? `. Warning: ${after.warning}` : ""}`,
        after.warning ? "warning" : "info",
      );
      return after;
    },
  });
}

function show(ctx: ExtensionContext, listing: ToolSettingsListing, only?: string): ToolSettingsListing {
  const lines = [`Tools (${listing.path}):`];
  for (const tool of listing.tools) {
    if (only && tool.name !== only) continue;
    lines.push(`${tool.name}  ${tool.enabled ? "on" : "off"}  ${tool.description}`);
    for (const [key, value] of Object.entries(tool.settings)) lines.push(`  ${key} = ${value}`);
    if (only) {
      for (const [key, meaning] of Object.entries(tool.known)) {
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
