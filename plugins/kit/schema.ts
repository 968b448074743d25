/**
 * Schema helpers for tool parameters. `Type` is TypeBox's builder (the same module extensions get for
 * `@sinclair/typebox`); `StringEnum` is a string with a fixed set of values written as `{type, enum}`, which every
 * provider accepts (some reject the `anyOf` of literals that `Type.Union` produces).
 */
import { type TUnsafe, Type } from "@sinclair/typebox";

export type { Static, TSchema } from "@sinclair/typebox";
export { Type };

export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: { description?: string; default?: T[number] } = {},
): TUnsafe<T[number]> {
  if (!Array.isArray(values) || values.length === 0 || values.some((v) => typeof v !== "string")) {
    throw new TypeError("StringEnum needs a non-empty array of strings");
  }
  return Type.Unsafe<T[number]>({ type: "string", enum: [...values], ...options });
}
