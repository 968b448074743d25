/**
 * The method table: each request method with its TypeBox schemas and its handler. The server registers its own
 * methods here at start; other built-ins add theirs through the same call (see docs/app-server.md, "Adding
 * methods"), so a method is always defined once, validated the same way and written into the generated schema.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import type { Connection } from "./connection.js";
import { invalidParams } from "./errors.js";
import type { MethodSpec } from "./protocol.js";

export interface CallContext {
  connection: Connection;
  /** Runs once the response has been written (notifications that must follow it). */
  afterResponse(fn: () => void): void;
}

export type Handler<S extends MethodSpec> = (
  params: Static<S["params"]>,
  call: CallContext,
) => Static<S["result"]> | Promise<Static<S["result"]>>;

export interface RegisteredMethod {
  name: string;
  spec: MethodSpec;
  handler: (params: unknown, call: CallContext) => unknown;
}

const METHOD_NAME = /^[a-z][A-Za-z0-9]*(\/[a-z][A-Za-z0-9]*)*$/;

export class MethodRegistry {
  private readonly methods = new Map<string, RegisteredMethod>();

  /** Adds a method; returns a function that removes it. A name already taken is refused. */
  register<S extends MethodSpec>(name: string, spec: S, handler: Handler<S>): () => void {
    if (!METHOD_NAME.test(name))
      throw new Error(`App-server method name "${name}" must look like "area/verb"`);
    if (this.methods.has(name)) throw new Error(`App-server method "${name}" is already registered`);
    const entry: RegisteredMethod = {
      name,
      spec,
      handler: handler as (params: unknown, call: CallContext) => unknown,
    };
    this.methods.set(name, entry);
    return () => {
      if (this.methods.get(name) === entry) this.methods.delete(name);
    };
  }

  get(name: string): RegisteredMethod | undefined {
    return this.methods.get(name);
  }

  list(): RegisteredMethod[] {
    return [...this.methods.values()];
  }
}

/** Checks params against the method's schema; the first problem becomes an `invalidParams` error. */
export function checkParams(spec: MethodSpec, params: unknown): unknown {
  const value = params === undefined ? {} : params;
  if (Value.Check(spec.params as TSchema, value)) return value;
  const first = Value.Errors(spec.params as TSchema, value).First();
  const where = first?.path ? `${first.path}: ` : "";
  throw invalidParams(`Invalid params: ${where}${first?.message ?? "does not match the schema"}`, {
    ...(first?.path ? { path: first.path } : {}),
  });
}
