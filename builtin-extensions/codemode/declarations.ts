/**
 * JSON Schema to TypeScript declarations, for the codemode tool's description: the model reads
 * `search(args: { query: string; limit?: number }): Promise<string>` faster and more reliably than raw schemas.
 * The schemas only shape the text; arguments are validated by the tool pipeline when a script calls.
 *
 * Handles `type` (and type arrays), `enum`/`const`, `anyOf`/`oneOf` (union), `allOf` (intersection), required and
 * optional properties, `additionalProperties` (index signature), `items` and `prefixItems` (tuples), `nullable`,
 * and internal `$ref`s (`#`, `#/$defs/…`, `#/definitions/…`) with a guard against cycles. Anything else, anything
 * nested deeper than `MAX_DEPTH`, and anything past the size budget becomes `unknown`.
 */

const MAX_DEPTH = 6;
/** Characters one tool's declaration may take before the rest of its schema is written as `unknown`. */
const MAX_CHARS = 4000;
const MAX_DOC_CHARS = 160;

type Schema = Record<string, unknown>;

interface Walk {
  root: unknown;
  depth: number;
  /** `$ref`s being expanded on the current path: a ref met again is a cycle. */
  refs: string[];
  budget: { chars: number };
  indent: string;
}

/** The TypeScript type of a JSON Schema. */
export function schemaToType(schema: unknown, root: unknown = schema, indent = ""): string {
  return typeOf(schema, { root, depth: 0, refs: [], budget: { chars: MAX_CHARS }, indent });
}

/** One tool as a method signature with a JSDoc line: `name(args: {...}): Promise<...>;` */
export function toolSignature(
  key: string,
  tool: { description: string; parameters: unknown; outputSchema?: unknown },
  indent: string,
): string {
  const args = schemaToType(tool.parameters, tool.parameters, indent);
  const result = tool.outputSchema ? schemaToType(tool.outputSchema, tool.outputSchema, indent) : "string";
  return `${doc(tool.description, indent)}${indent}${propertyKey(key)}(args: ${args}): Promise<${result}>;`;
}

function typeOf(schema: unknown, walk: Walk): string {
  if (walk.budget.chars <= 0) return "unknown";
  const text = render(schema, walk);
  walk.budget.chars -= text.length;
  return text;
}

function render(schema: unknown, walk: Walk): string {
  if (schema === true || schema === undefined) return "unknown";
  if (schema === false) return "never";
  if (typeof schema !== "object" || schema === null || walk.depth > MAX_DEPTH) return "unknown";
  const s = schema as Schema;
  const nested = (child: unknown, extra: Partial<Walk> = {}) =>
    typeOf(child, { ...walk, depth: walk.depth + 1, ...extra });
  const nullable = (text: string) => (s.nullable === true ? `${text} | null` : text);

  if (typeof s.$ref === "string") {
    if (walk.refs.includes(s.$ref)) return "unknown";
    const target = resolveRef(walk.root, s.$ref);
    return target === undefined ? "unknown" : nested(target, { refs: [...walk.refs, s.$ref] });
  }
  if ("const" in s) return literal(s.const);
  if (Array.isArray(s.enum)) return nullable(s.enum.map(literal).join(" | ") || "never");
  for (const key of ["anyOf", "oneOf"] as const) {
    if (Array.isArray(s[key])) return nullable(union((s[key] as unknown[]).map((c) => nested(c))));
  }
  if (Array.isArray(s.allOf)) {
    const parts = (s.allOf as unknown[]).map((c) => nested(c)).filter((t) => t !== "unknown");
    return parts.length === 0 ? "unknown" : parts.map(wrap).join(" & ");
  }
  const types = Array.isArray(s.type) ? (s.type as unknown[]) : s.type === undefined ? [] : [s.type];
  if (types.length > 1) return nullable(union(types.map((t) => render({ ...s, type: t }, walk))));
  const type = types[0] ?? (s.properties ? "object" : s.items ? "array" : undefined);
  switch (type) {
    case "string":
      return nullable("string");
    case "number":
    case "integer":
      return nullable("number");
    case "boolean":
      return nullable("boolean");
    case "null":
      return "null";
    case "array": {
      if (Array.isArray(s.prefixItems))
        return nullable(`[${s.prefixItems.map((c) => nested(c)).join(", ")}]`);
      if (Array.isArray(s.items)) return nullable(`[${s.items.map((c) => nested(c)).join(", ")}]`);
      return nullable(`${wrap(nested(s.items))}[]`);
    }
    case "object":
      return nullable(objectType(s, walk));
    default:
      return "unknown";
  }
}

function objectType(s: Schema, walk: Walk): string {
  const properties = (s.properties ?? {}) as Record<string, unknown>;
  const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
  const inner = `${walk.indent}  `;
  const lines: string[] = [];
  const entries = Object.entries(properties);
  for (const [index, [name, child]] of entries.entries()) {
    if (walk.budget.chars <= 0) {
      lines.push(`${inner}// ${entries.length - index} more properties: describeTool() shows them`);
      break;
    }
    const type = typeOf(child, { ...walk, depth: walk.depth + 1, indent: inner });
    const description = (child as Schema | undefined)?.description;
    const optional = required.has(name) ? "" : "?";
    const line = `${typeof description === "string" ? doc(description, inner) : ""}${inner}${propertyKey(name)}${optional}: ${type};`;
    walk.budget.chars -= line.length;
    lines.push(line);
  }
  const extra = s.additionalProperties;
  if (extra !== undefined && extra !== false && (extra !== true || lines.length === 0)) {
    const type =
      extra === true ? "unknown" : typeOf(extra, { ...walk, depth: walk.depth + 1, indent: inner });
    lines.push(`${inner}[key: string]: ${type};`);
  }
  if (lines.length === 0) return s.additionalProperties === false ? "{}" : "Record<string, unknown>";
  return `{\n${lines.join("\n")}\n${walk.indent}}`;
}

function resolveRef(root: unknown, ref: string): unknown {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (typeof node !== "object" || node === null || !(key in node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function union(parts: string[]): string {
  const unique = [...new Set(parts)];
  return unique.includes("unknown") ? "unknown" : unique.map(wrap).join(" | ");
}

/** Parenthesises a union or intersection used inside another type (`(a | b)[]`). */
function wrap(type: string): string {
  return /^[^{[]*[|&]/.test(type) ? `(${type})` : type;
}

function literal(value: unknown): string {
  return value === null || ["string", "number", "boolean"].includes(typeof value)
    ? JSON.stringify(value)
    : "unknown";
}

function propertyKey(name: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name);
}

/** A one-line JSDoc comment from a description's first line, shortened, with `*\/` made harmless. */
export function doc(description: string, indent: string): string {
  const line = description.trim().split("\n")[0]!.trim();
  if (line === "") return "";
  const short = line.length > MAX_DOC_CHARS ? `${line.slice(0, MAX_DOC_CHARS - 1)}…` : line;
  return `${indent}/** ${short.replace(/\*\//g, "*\\/")} */\n`;
}
