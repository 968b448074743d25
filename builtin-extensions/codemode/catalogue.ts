/**
 * What a script sees of the tools: the identifiers `tools.<namespace>.<tool>` and `tools.<tool>` resolve to, the
 * data `listTools`/`describeTool`/`describeNamespace` return, and the tool's description for the model (rendered
 * by `prepareLoadout`, so it changes only when the listed tools change).
 */
import type { ToolExposure, ToolLoadoutEntry, ToolNamespace } from "@knightcodeai/cli/kit";
import { doc, toolSignature } from "./declarations.js";
import type { SandboxCatalogue, SandboxTool } from "./protocol.js";

export interface SurfaceTool {
  name: string;
  description: string;
  parameters: unknown;
  outputSchema?: unknown;
  namespace?: ToolNamespace;
  exposure: ToolExposure;
}

/** A name as a script identifier: `my-docs` is reachable as `tools.my_docs`. */
export function identifier(name: string): string {
  const id = name.replace(/[^A-Za-z0-9_$]/g, "_");
  return /^[0-9]/.test(id) ? `_${id}` : id;
}

/** Listed by `listTools`, `searchTools` and the description; `deferred` tools are callable but left to tool_search. */
export function isListed(tool: { exposure: ToolExposure }): boolean {
  return tool.exposure === "codemode" || tool.exposure === "direct";
}

/** A tool's key inside its namespace object: its name without the namespace prefix (`mcp__docs__search` → `search`). */
export function shortName(tool: { name: string; namespace?: ToolNamespace }): string {
  const ns = tool.namespace?.name;
  if (!ns) return tool.name;
  for (const separator of ["__", "_", ".", "-"]) {
    const prefix = `${ns}${separator}`;
    if (tool.name.startsWith(prefix) && tool.name.length > prefix.length)
      return tool.name.slice(prefix.length);
  }
  return tool.name;
}

function namespaceIds(namespace: ToolNamespace): string[] {
  return [...new Set([namespace.name, ...(namespace.aliases ?? [])].map(identifier))];
}

export function sandboxTools(tools: readonly SurfaceTool[]): SandboxTool[] {
  return tools.map((tool) => ({
    name: tool.name,
    keys: [...new Set([tool.name, identifier(tool.name), identifier(shortName(tool))])],
    namespaces: tool.namespace ? namespaceIds(tool.namespace) : [],
  }));
}

export function catalogueOf(tools: readonly SurfaceTool[]): SandboxCatalogue {
  const namespaces = new Map<string, SandboxCatalogue["namespaces"][number]>();
  for (const tool of tools) {
    const ns = tool.namespace;
    if (!ns) continue;
    let entry = namespaces.get(ns.name);
    if (!entry) {
      entry = {
        name: ns.name,
        aliases: ns.aliases ?? [],
        ...(ns.description ? { description: ns.description } : {}),
        ...(ns.instructions ? { instructions: ns.instructions } : {}),
        tools: [],
      };
      namespaces.set(ns.name, entry);
    }
    entry.tools.push(tool.name);
  }
  return {
    tools: tools.map((tool) => ({
      name: tool.name,
      ...(tool.namespace ? { namespace: tool.namespace.name } : {}),
      description: tool.description,
      parameters: tool.parameters,
      ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
      listed: isListed(tool),
    })),
    namespaces: [...namespaces.values()],
  };
}

/**
 * What a script may reach, for `reachesTools`: everything when it lists or searches tools or indexes `tools`
 * with a computed key, otherwise the words it contains (a tool or namespace name it uses is among them).
 */
export function reachedBy(code: string): "all" | string[] {
  if (/\b(listTools|searchTools)\b/.test(code) || /\btools\s*\[/.test(code)) return "all";
  return [...new Set(code.match(/[A-Za-z_$][\w$-]*/g) ?? [])];
}

/** Strips a Markdown fence and turns a bare `async () => {...}` into a call, so either form runs as a body. */
export function normalizeCode(code: string): string {
  let text = code.trim();
  const fenced = /^```[\w-]*\n([\s\S]*?)\n?```$/.exec(text);
  if (fenced) text = fenced[1]!.trim();
  if (/^async\s*(\(\s*\)\s*=>|function\s*\w*\s*\(\s*\))\s*\{[\s\S]*\}\s*;?$/.test(text)) {
    return `return await (${text.replace(/;\s*$/, "")})();`;
  }
  return text;
}

export const CODEMODE_INTRO = [
  "Run a short JavaScript program that calls tools, and get back what it returns and logs. Use it to make several",
  "tool calls in one step (in parallel with Promise.all), to filter or combine results before you read them, and",
  "to reach the tools listed below, which are not offered to you directly.",
  "",
  "`code` is the body of an async function: use `await`, and `return` the value you want (it comes back as JSON).",
  "- `tools.<namespace>.<tool>(args)` or `tools.<tool>(args)` calls a tool. It resolves to the tool's structured",
  "  result when the tool declares an output type, otherwise to its text. A failed call throws; a result marked as",
  "  an error that carries data resolves to that data.",
  "- `listTools()`, `describeTool(name)` (schemas), `describeNamespace(name)` (usage instructions), and",
  "  `await searchTools(query, limit?)` look tools up.",
  "- `console.log/info/warn/error` lines come back with the result.",
  "There is no network, file system, timers, `require` or `import`: every effect is a tool call.",
].join("\n");

/** Past this many characters, declarations give way to names only, then to namespaces only. */
const DESCRIPTION_BUDGET = 16_000;
const NAMES_PER_NAMESPACE = 40;

/**
 * The tool's description for the given listed tools: typed declarations when they fit, else each namespace with
 * its tool names, else the namespaces alone (scripts then look tools up with searchTools and describeTool).
 */
export function describeTools(tools: readonly ToolLoadoutEntry[]): string {
  if (tools.length === 0) return CODEMODE_INTRO;
  const groups = new Map<string, { namespace?: ToolNamespace; tools: ToolLoadoutEntry[] }>();
  for (const tool of tools) {
    const key = tool.namespace?.name ?? "";
    const group = groups.get(key) ?? { ...(tool.namespace ? { namespace: tool.namespace } : {}), tools: [] };
    group.tools.push(tool);
    groups.set(key, group);
  }
  const heading = (ns: ToolNamespace) => {
    const aliases = ns.aliases?.length ? ` (also ${ns.aliases.map(identifier).join(", ")})` : "";
    return `tools.${identifier(ns.name)}${aliases}${ns.description ? `: ${ns.description}` : ""}`;
  };

  const declared = [...groups.values()].map(({ namespace, tools: members }) => {
    if (!namespace) return members.map((t) => toolSignature(identifier(t.name), t, "  ")).join("\n");
    const body = members.map((t) => toolSignature(identifier(shortName(t)), t, "    ")).join("\n");
    return `${doc(namespace.description ?? "", "  ")}  ${identifier(namespace.name)}: {\n${body}\n  };`;
  });
  const declarations = `Tools:\n\`\`\`ts\ndeclare const tools: {\n${declared.join("\n")}\n};\n\`\`\``;
  if (declarations.length <= DESCRIPTION_BUDGET) return `${CODEMODE_INTRO}\n\n${declarations}`;

  const names = [...groups.values()].map(({ namespace, tools: members }) => {
    const list = members.slice(0, NAMES_PER_NAMESPACE).map((t) => (namespace ? shortName(t) : t.name));
    const more = members.length > list.length ? `, and ${members.length - list.length} more` : "";
    return namespace
      ? `- ${heading(namespace)}\n  ${list.join(", ")}${more}`
      : `- tools: ${list.join(", ")}${more}`;
  });
  const byName = `Tools (describeTool(name) shows a tool's arguments):\n${names.join("\n")}`;
  if (byName.length <= DESCRIPTION_BUDGET) return `${CODEMODE_INTRO}\n\n${byName}`;

  const summary = [...groups.values()].map(({ namespace, tools: members }) =>
    namespace
      ? `- ${heading(namespace)} (${members.length} tools)`
      : `- ${members.length} tools without a namespace`,
  );
  return `${CODEMODE_INTRO}\n\nTool namespaces (find tools with searchTools(query)):\n${summary.join("\n")}`;
}
