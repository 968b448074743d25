/**
 * The YAML half of `parseFrontmatter` (frontmatter.ts), on the `yaml` package. It is a module of its own, loaded by
 * `import()` on the first frontmatter that has a block to read, so a run without skills or prompt templates never
 * loads the parser; the build makes it a chunk of its own and, in the `knightcode` command, a side bundle with its
 * own code cache (`sideEntries` in scripts/build.ts). Positions here are offsets into the block's text; frontmatter.ts
 * turns them into lines and columns of the file.
 */
import { parseDocument, type YAMLError } from "yaml";

export interface YamlProblem {
  /** Offset into the block's text. */
  offset: number;
  message: string;
}

export interface YamlBlock {
  /** The mapping the block holds; undefined when there are errors. */
  data: Record<string, unknown> | undefined;
  errors: YamlProblem[];
  warnings: YamlProblem[];
}

/** Reads one frontmatter block: YAML 1.2 (core schema), unique keys, and a mapping (or nothing) at the top. */
export function readYamlBlock(source: string): YamlBlock {
  const doc = parseDocument(source, { prettyErrors: false, uniqueKeys: true });
  const warnings = doc.warnings.map((warning) => ({ offset: warning.pos[0], message: warning.message }));
  if (doc.errors.length > 0) return { data: undefined, errors: doc.errors.map(invalid), warnings };
  let value: unknown;
  try {
    value = doc.toJS();
  } catch (error) {
    // An alias without its anchor, or more alias expansions than the parser allows, is found only here.
    return {
      data: undefined,
      errors: [{ offset: 0, message: `invalid YAML: ${(error as Error).message}` }],
      warnings,
    };
  }
  if (value === null || value === undefined) return { data: {}, errors: [], warnings };
  if (typeof value !== "object" || Object.getPrototypeOf(value) !== Object.prototype) {
    const found = Array.isArray(value)
      ? "a list"
      : typeof value === "string"
        ? "plain text"
        : typeof value === "object"
          ? "a tagged value"
          : `a ${typeof value}`;
    return {
      data: undefined,
      errors: [
        {
          offset: doc.contents?.range[0] ?? 0,
          message: `the frontmatter must be \`key: value\` lines (a YAML mapping), found ${found}`,
        },
      ],
      warnings,
    };
  }
  return { data: value as Record<string, unknown>, errors: [], warnings };
}

function invalid(error: YAMLError): YamlProblem {
  return { offset: error.pos[0], message: `invalid YAML: ${error.message}${hint(error)}` };
}

/** A pointer for the mistakes frontmatter written by hand makes most. */
function hint(error: YAMLError): string {
  if (error.code === "BLOCK_AS_IMPLICIT_KEY") return ' (a value that contains ": " must be quoted)';
  if (
    error.code === "MULTILINE_IMPLICIT_KEY" ||
    /^Implicit map keys need to be followed by map values/.test(error.message)
  )
    return " (each line of the block is `key: value`)";
  return "";
}
