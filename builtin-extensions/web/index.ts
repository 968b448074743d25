/**
 * builtin:web — the `websearch` tool (Brave Search or Tavily, chosen by the `provider` setting) and the `webfetch`
 * tool (a page as Markdown). Both are read-only network tools: their annotations say `readOnlyHint` and
 * `openWorldHint`, so the classifier gate lets them run as it lets reads run, and rules in tools.json can still ask
 * for or deny them (`"ask": "webfetch"`).
 *
 * Both are off until tools.json turns them on (`/tools websearch on`, or `tool/settings/write` with `enabled`): a
 * search needs an API key, and a page fetched on the model's word is a way in for instructions planted in it. Like
 * ask_user, the state applies to new sessions; the other settings are read at every call.
 */
import type { ExtensionAPI } from "@knightcodeai/cli/kit";
import { FETCH_SETTINGS, FETCH_SETTINGS_KEYS, webfetchTool } from "./webfetch.js";
import { SEARCH_SETTINGS, SEARCH_SETTINGS_KEYS, websearchTool } from "./websearch.js";

export default function web(knightcode: ExtensionAPI): void {
  knightcode.registerToolSettings(SEARCH_SETTINGS, {
    description: "The websearch tool: searches the web with Brave Search or Tavily",
    enabledByDefault: false,
    settings: SEARCH_SETTINGS_KEYS,
  });
  knightcode.registerToolSettings(FETCH_SETTINGS, {
    description: "The webfetch tool: reads a web page as Markdown",
    enabledByDefault: false,
    settings: FETCH_SETTINGS_KEYS,
  });
  const tools = [
    {
      settings: SEARCH_SETTINGS,
      name: websearchTool.name,
      unregister: knightcode.registerTool(websearchTool, { fallback: true }),
    },
    {
      settings: FETCH_SETTINGS,
      name: webfetchTool.name,
      unregister: knightcode.registerTool(webfetchTool, { fallback: true }),
    },
  ];
  knightcode.on("session_start", (_event, ctx) => {
    for (const tool of tools) if (!ctx.toolSettings.read(tool.settings).enabled) tool.unregister();
  });
}
