/**
 * JSON for values an extension produced (tool details, custom entries and messages): it never throws. A value
 * JSON cannot write (a circular reference, a BigInt, a getter or `toJSON` that throws, a Proxy whose traps throw)
 * is written as a replacement, and each replacement is listed so the caller can warn and name who produced it.
 *
 * The common case costs one plain `JSON.stringify`; only a value that makes it throw is walked and copied.
 */
import { errorMessage } from "../../../kernel/index.js";

export interface SafeJson {
  text: string;
  /** One line per replaced value, e.g. `details.self: a circular reference, written as "[Circular]"`. */
  replaced: string[];
}

/** Deeper than this, a value is replaced: a structure this deep is a bug, and walking it would overflow the stack. */
const MAX_DEPTH = 500;

/** Like `JSON.stringify(value)` (`undefined` becomes `"null"`), but never throws. */
export function stringifySafely(value: unknown): SafeJson {
  try {
    return { text: JSON.stringify(value) ?? "null", replaced: [] };
  } catch {
    const { value: copy, replaced } = toJsonSafe(value);
    return { text: JSON.stringify(copy) ?? "null", replaced };
  }
}

/** `value` itself when JSON can write it; otherwise a plain copy with every unwritable part replaced. */
export function toJsonSafe<T>(value: T, root = "value"): { value: T; replaced: string[] } {
  try {
    JSON.stringify(value);
    return { value, replaced: [] };
  } catch {
    const replaced: string[] = [];
    const copy = copyValue(value, root, "", new Set(), 0, replaced);
    return { value: copy as T, replaced };
  }
}

function copyValue(
  value: unknown,
  path: string,
  key: string,
  ancestors: Set<object>,
  depth: number,
  replaced: string[],
): unknown {
  if (typeof value === "bigint") {
    replaced.push(`${path}: a BigInt, written as a string`);
    return value.toString();
  }
  if (typeof value !== "object" || value === null) return value;
  const replace = (what: string, marker: string) => {
    replaced.push(`${path}: ${what}, written as "${marker}"`);
    return marker;
  };
  if (ancestors.has(value)) return replace("a circular reference", "[Circular]");
  if (depth >= MAX_DEPTH) return replace(`nested deeper than ${MAX_DEPTH} levels`, "[Too deep]");
  ancestors.add(value);
  try {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") {
      return copyValue(toJSON.call(value, key), path, key, ancestors, depth + 1, replaced);
    }
    if (Array.isArray(value)) {
      return Array.from({ length: value.length }, (_, i) => {
        const item = readProperty(value, i, `${path}[${i}]`, ancestors, depth, replaced);
        // As JSON does: array holes and values it skips are written as null.
        return item === undefined || typeof item === "function" || typeof item === "symbol" ? null : item;
      });
    }
    const out: Record<string, unknown> = {};
    for (const name of Object.keys(value)) {
      out[name] = readProperty(value, name, `${path}.${name}`, ancestors, depth, replaced);
    }
    return out;
  } catch (error) {
    return replace(`unreadable (${errorMessage(error)})`, "[Unserializable]");
  } finally {
    ancestors.delete(value);
  }
}

function readProperty(
  holder: object,
  name: string | number,
  path: string,
  ancestors: Set<object>,
  depth: number,
  replaced: string[],
): unknown {
  let item: unknown;
  try {
    item = (holder as Record<string | number, unknown>)[name];
  } catch (error) {
    replaced.push(`${path}: reading it threw (${errorMessage(error)}), written as "[Unserializable]"`);
    return "[Unserializable]";
  }
  return copyValue(item, path, String(name), ancestors, depth + 1, replaced);
}
