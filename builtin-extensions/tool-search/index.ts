/**
 * builtin:tool-search — the `tool_search` tool: finds tools the model cannot see yet (exposure `deferred`, and
 * `codemode` tools that are not active) and activates the matches for the next model request. Written only against
 * the public API (`exposure`, `prepareLoadout`, `reachesTools`, `setActiveTools`), so `-builtin:tool-search` and
 * an extension of one's own can replace it. See docs/codemode.md.
 *
 * Its description never mentions the searchable tools, so it stays byte for byte the same while tools register and
 * the provider's prompt cache survives. It is declared only while there is something to find.
 */
import {
  type ExtensionAPI,
  parseToolQuery,
  rankTools,
  type ToolInfo,
  type ToolLoadoutEntry,
  Type,
  unknownSelections,
} from "@knightcodeai/cli/kit";

export const TOOL_SEARCH = "tool_search";
export const DEFAULT_LIMIT = 8;
const MAX_LIMIT = 50;

export const TOOL_SEARCH_DESCRIPTION = [
  "Find tools that are not loaded yet and load them for your next step.",
  "Query with plain words describing the task (any may match), `+word` for words a tool must mention, or",
  "`select:name1,name2` for exact tool names or a whole namespace.",
  "The matching tools become callable in your next request; the result lists them (name, namespace, summary).",
].join(" ");

export interface ToolSearchDetails {
  query: string;
  /** The tools listed, best first. */
  matches: string[];
  /** The subset that this call activated (the others were active already). */
  activated: string[];
}

/**
 * What tool_search can find: deferred tools, and inactive codemode tools while no active tool reaches them. An
 * active tool that declares `reachesTools` (codemode, or a replacement) lists codemode tools itself and hides the
 * declarations of those activated, so activating them here would only promise the model tools it does not get.
 */
export function searchableTools(all: readonly ToolInfo[], active: ReadonlySet<string>): ToolInfo[] {
  const orchestrated = all.some((t) => t.reachesTools && t.name !== TOOL_SEARCH && active.has(t.name));
  return all.filter(
    (t) => t.exposure === "deferred" || (t.exposure === "codemode" && !orchestrated && !active.has(t.name)),
  );
}

export default function toolSearch(knightcode: ExtensionAPI): void {
  knightcode.registerTool(
    {
      name: TOOL_SEARCH,
      label: "Tool search",
      description: TOOL_SEARCH_DESCRIPTION,
      promptSnippet: "Find and load tools that are not listed yet",
      parameters: Type.Object({
        query: Type.String({ minLength: 1, description: "Words, +required words, or select:name1,name2" }),
        limit: Type.Optional(
          Type.Integer({
            minimum: 1,
            maximum: MAX_LIMIT,
            description: `How many tools (default ${DEFAULT_LIMIT})`,
          }),
        ),
      }),
      // The model calls it; a script has nothing to gain from activating tools for the model.
      exposure: "model-only",
      annotations: { readOnlyHint: true, openWorldHint: false },
      reachesTools: () => "all",
      prepareLoadout(loadout) {
        return loadout.all.some(isDeferred) ? undefined : { hiddenDeclarations: [TOOL_SEARCH] };
      },
      async execute(_id, params) {
        const active = new Set(knightcode.getActiveTools());
        const candidates = searchableTools(knightcode.getAllTools(), active);
        const query = parseToolQuery(params.query);
        const ranked = rankTools(candidates, query, params.limit ?? DEFAULT_LIMIT).map((r) => r.tool);
        const details: ToolSearchDetails = {
          query: params.query,
          matches: ranked.map((t) => t.name),
          activated: ranked.filter((t) => !active.has(t.name)).map((t) => t.name),
        };
        if (ranked.length === 0) {
          return {
            content: [{ type: "text", text: noMatch(params.query, candidates, query.select) }],
            details,
          };
        }
        if (details.activated.length > 0) knightcode.setActiveTools([...active, ...details.activated]);
        const lines = ranked.map((t) => {
          const summary = t.description.split("\n")[0]!.trim();
          return `- ${t.name}${t.namespace ? ` (${t.namespace.name})` : ""}: ${summary}`;
        });
        const missing = query.select ? unknownSelections(candidates, query.select) : [];
        return {
          content: [
            {
              type: "text",
              text: [
                `Loaded ${ranked.length} tool${ranked.length === 1 ? "" : "s"}; call them in your next step:`,
                ...lines,
                ...(missing.length > 0 ? [`Not found: ${missing.join(", ")}.`] : []),
              ].join("\n"),
            },
          ],
          details,
        };
      },
    },
    { fallback: true },
  );
}

function isDeferred(entry: ToolLoadoutEntry): boolean {
  return entry.exposure === "deferred";
}

/** "No match", with the namespaces there are, so the model can `select:` one instead of guessing words. */
function noMatch(query: string, candidates: ToolInfo[], select: string[] | undefined): string {
  if (candidates.length === 0) return "There are no tools to search: every tool is already available.";
  const namespaces = new Map<string, string | undefined>();
  for (const tool of candidates) {
    if (tool.namespace && !namespaces.has(tool.namespace.name))
      namespaces.set(tool.namespace.name, tool.namespace.description);
  }
  const head = select
    ? `No tool or namespace is named ${select.map((s) => `"${s}"`).join(", ")}.`
    : `No tools match "${query}".`;
  if (namespaces.size === 0) return `${head} Try other words.`;
  const list = [...namespaces].map(
    ([name, description]) => `- ${name}${description ? `: ${description}` : ""}`,
  );
  return [`${head} Namespaces you can load with select:<namespace>:`, ...list].join("\n");
}
