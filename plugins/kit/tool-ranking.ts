/**
 * Ranks tools against a search query, for tools that find other tools (`tool_search`, codemode's `searchTools`).
 * It lives in the kit so a replacement of either tool can rank the same way.
 *
 * Okapi BM25 over one weighted bag of words per tool: the name (whole, and split into words), the namespace name
 * and aliases, the description, and the parameters' names, descriptions and enum values. A field counts as many
 * times as its weight, so a word in the name outweighs the same word in a parameter's description. Ties keep the
 * catalogue's order (registration order), so the same query over the same tools always gives the same list.
 *
 * Query forms: plain words (any may match), `+word` (every such word must occur), and `select:a,b` (exact tool
 * names, or a namespace name or alias for all of its tools, in the order given).
 */

/** What ranking reads of a tool: `ToolInfo` and `CallableToolInfo` both fit. */
export interface RankableTool {
  name: string;
  description: string;
  parameters?: unknown;
  namespace?: { name: string; aliases?: string[]; description?: string };
}

export interface ToolQuery {
  /** Words that score; any may match. */
  words: string[];
  /** Words every result must contain. */
  required: string[];
  /** `select:` names, when the query is a selection. */
  select?: string[];
}

/** BM25's constants, kept here so they are tuned in one place. */
export const BM25 = Object.freeze({ k1: 1.2, b: 0.75 });

/** How many times each field counts. */
export const FIELD_WEIGHTS = Object.freeze({
  name: 3,
  nameWords: 2,
  namespace: 2,
  description: 1,
  parameters: 1,
});

const STOP_WORDS = new Set([
  "a",
  "an",
  "the",
  "and",
  "or",
  "of",
  "to",
  "in",
  "on",
  "for",
  "with",
  "by",
  "from",
  "at",
  "is",
  "are",
  "be",
  "this",
  "that",
  "it",
  "as",
]);

/** Schemas are walked this deep for parameter words; deeper nesting rarely names what a tool does. */
const SCHEMA_DEPTH = 4;

/**
 * Lower-case words split at camelCase and at anything not a letter or digit, without stop words, plurals folded
 * to the singular (`issues` finds `create_issue`).
 */
export function toolWords(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== "" && !STOP_WORDS.has(w))
    .map(singular);
}

function singular(word: string): string {
  return word.length > 3 && word.endsWith("s") && !word.endsWith("ss") ? word.slice(0, -1) : word;
}

/** A name or identifier as scripts write it: `my-docs` and `my_docs` are the same name. */
export function normalizeToolName(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, "_");
}

export function parseToolQuery(query: string): ToolQuery {
  const trimmed = query.trim();
  const selection = /^select:(.*)$/is.exec(trimmed);
  if (selection) {
    const names = selection[1]!
      .split(/[,\s]+/)
      .map((n) => n.trim())
      .filter((n) => n !== "");
    return { words: [], required: [], select: names };
  }
  const words: string[] = [];
  const required: string[] = [];
  for (const part of trimmed.split(/\s+/)) {
    if (part === "") continue;
    if (part.startsWith("+")) {
      const split = queryWords(part.slice(1));
      required.push(...split);
      words.push(...split);
    } else words.push(...queryWords(part));
  }
  return { words: unique(words), required: unique(required) };
}

/** A query word stands for itself as a whole name (`read_file`) and for its parts (`read`, `file`). */
function queryWords(part: string): string[] {
  const parts = toolWords(part);
  const whole = normalizeToolName(part).replace(/^_+|_+$/g, "");
  return parts.length > 1 && whole !== "" ? [whole, ...parts] : parts;
}

export interface RankedTool<T extends RankableTool> {
  tool: T;
  score: number;
}

/**
 * The tools matching `query`, best first, at most `limit`. A selection returns the selected tools in the order
 * named (unknown names are skipped; see `unknownSelections`); otherwise only tools with a positive score count.
 */
export function rankTools<T extends RankableTool>(
  tools: readonly T[],
  query: string | ToolQuery,
  limit = 8,
): RankedTool<T>[] {
  const parsed = typeof query === "string" ? parseToolQuery(query) : query;
  if (parsed.select) return selectTools(tools, parsed.select).slice(0, limit);
  if (parsed.words.length === 0) return [];
  const docs = tools.map(documentOf);
  const averageLength = docs.reduce((sum, d) => sum + d.length, 0) / Math.max(1, docs.length);
  const frequency = new Map<string, number>();
  for (const doc of docs)
    for (const word of doc.counts.keys()) frequency.set(word, (frequency.get(word) ?? 0) + 1);
  const scored: RankedTool<T>[] = [];
  tools.forEach((tool, index) => {
    const doc = docs[index]!;
    if (parsed.required.some((word) => !doc.counts.has(word))) return;
    let score = 0;
    for (const word of parsed.words) {
      const tf = doc.counts.get(word);
      if (!tf) continue;
      const df = frequency.get(word)!;
      const idf = Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
      const norm = tf + BM25.k1 * (1 - BM25.b + (BM25.b * doc.length) / (averageLength || 1));
      score += (idf * tf * (BM25.k1 + 1)) / norm;
    }
    if (score > 0) scored.push({ tool, score });
  });
  // Array.prototype.sort is stable: equal scores keep the catalogue's order.
  return scored.sort((a, b) => b.score - a.score).slice(0, limit);
}

/** `select:` names that are neither a tool nor a namespace (name or alias) of one. */
export function unknownSelections(tools: readonly RankableTool[], names: readonly string[]): string[] {
  return names.filter((name) => selectTools(tools, [name]).length === 0);
}

function selectTools<T extends RankableTool>(tools: readonly T[], names: readonly string[]): RankedTool<T>[] {
  const picked: T[] = [];
  for (const name of names) {
    const wanted = normalizeToolName(name);
    const exact = tools.filter((t) => t.name === name || normalizeToolName(t.name) === wanted);
    const inNamespace = tools.filter((t) => t.namespace && namespaceNames(t.namespace).includes(wanted));
    for (const tool of exact.length > 0 ? exact : inNamespace) if (!picked.includes(tool)) picked.push(tool);
  }
  return picked.map((tool) => ({ tool, score: 1 }));
}

/** A namespace's name and aliases, normalised. */
export function namespaceNames(namespace: { name: string; aliases?: string[] }): string[] {
  return [namespace.name, ...(namespace.aliases ?? [])].map(normalizeToolName);
}

interface Document {
  counts: Map<string, number>;
  length: number;
}

function documentOf(tool: RankableTool): Document {
  const counts = new Map<string, number>();
  let length = 0;
  const add = (words: string[], weight: number) => {
    for (const word of words) {
      counts.set(word, (counts.get(word) ?? 0) + weight);
      length += weight;
    }
  };
  add([normalizeToolName(tool.name)], FIELD_WEIGHTS.name);
  add(toolWords(tool.name), FIELD_WEIGHTS.nameWords);
  if (tool.namespace) {
    const names = [tool.namespace.name, ...(tool.namespace.aliases ?? [])];
    add(unique(names.flatMap((n) => [normalizeToolName(n), ...toolWords(n)])), FIELD_WEIGHTS.namespace);
  }
  add(toolWords(tool.description), FIELD_WEIGHTS.description);
  add(schemaWords(tool.parameters, 0), FIELD_WEIGHTS.parameters);
  return { counts, length };
}

/** Property names, descriptions and enum values of a JSON Schema, a few levels deep. */
function schemaWords(schema: unknown, depth: number): string[] {
  if (depth > SCHEMA_DEPTH || typeof schema !== "object" || schema === null) return [];
  const s = schema as Record<string, unknown>;
  const words: string[] = [];
  if (depth > 0 && typeof s.description === "string") words.push(...toolWords(s.description));
  if (Array.isArray(s.enum)) for (const v of s.enum) if (typeof v === "string") words.push(...toolWords(v));
  if (s.properties && typeof s.properties === "object") {
    for (const [name, child] of Object.entries(s.properties as Record<string, unknown>)) {
      words.push(...toolWords(name), ...schemaWords(child, depth + 1));
    }
  }
  for (const key of ["items", "additionalProperties"]) words.push(...schemaWords(s[key], depth + 1));
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    if (Array.isArray(s[key]))
      for (const child of s[key] as unknown[]) words.push(...schemaWords(child, depth + 1));
  }
  return words;
}

function unique(words: string[]): string[] {
  return [...new Set(words)];
}
