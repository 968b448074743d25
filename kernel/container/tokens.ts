/** Typed service tokens with dotted ids and a scope (Backstage-style service refs). */
import { KernelError } from "../errors.js";

export type TokenScope = "root" | "session";

export interface Token<T> {
  readonly id: string;
  readonly scope: TokenScope;
  readonly description?: string;
  /** Phantom field that carries the service type; never set at run time. */
  readonly __service?: T;
  toString(): string;
}

export type ServiceOf<K> = K extends Token<infer T> ? T : never;

const TOKEN_ID = /^[a-z][a-zA-Z0-9]*(\.[a-z][a-zA-Z0-9]*)+$/;

export function createToken<T>(id: string, options: { scope: TokenScope; description?: string }): Token<T> {
  if (!TOKEN_ID.test(id)) {
    throw new KernelError(
      "KC_ERR_INVALID_TOKEN",
      `Token id "${id}" must be dotted lower camel case, for example "core.sessionStore"`,
    );
  }
  return Object.freeze({
    id,
    scope: options.scope,
    ...(options.description ? { description: options.description } : {}),
    toString: () => `token{${id}}`,
  });
}

/** A token with one instance per session scope. */
export const sessionToken = <T>(id: string, description: string): Token<T> =>
  createToken<T>(id, { scope: "session", description });

/** A token with one instance per process (the container's root). */
export const rootToken = <T>(id: string, description: string): Token<T> =>
  createToken<T>(id, { scope: "root", description });
