/**
 * `appServerService`: the app-server's method table, for extensions that add JSON-RPC methods. The app-server mode
 * provides it while it serves (`builtin:mode-app-server`, or a replacement mode that provides the same reference);
 * a contributing extension watches for it and registers its methods when it appears:
 *
 *   knightcode.services.watch(appServerService, (server) => server?.register("demo/echo", spec, handler));
 *
 * A method's params are validated against its spec's TypeBox schemas like the server's own (the generated schema
 * files hold only the built-in methods).
 */

import type { SessionController } from "../../../kernel/index.js";
import { defineService } from "../../../kernel/index.js";
import type { Static, TSchema } from "../schema.js";

/** One request method: what it does, and the schemas of its params and result. */
export interface AppServerMethodSpec<P extends TSchema = TSchema, R extends TSchema = TSchema> {
  readonly description: string;
  readonly params: P;
  readonly result: R;
}

/** What a handler knows of the call besides its params. */
export interface AppServerCall {
  /** The connection the request came on (stable while it stays open). */
  readonly connectionId: string;
  /** Runs once the response has been written (for notifications that must follow it). */
  afterResponse(fn: () => void): void;
}

export type AppServerHandler<S extends AppServerMethodSpec> = (
  params: Static<S["params"]>,
  call: AppServerCall,
) => Static<S["result"]> | Promise<Static<S["result"]>>;

export interface AppServerMethods {
  /**
   * Adds a method; the returned function removes it. A name that is not `area/verb` (lower camel case parts) or is
   * taken already is refused.
   */
  register<S extends AppServerMethodSpec>(name: string, spec: S, handler: AppServerHandler<S>): () => void;
  /** The session of a loaded thread, for methods that act on one; undefined when it is not loaded. */
  threadSession(threadId: string): SessionController | undefined;
}

export const appServerService = defineService<AppServerMethods>("knightcode.appServer", {
  description: "the app-server's method table (add JSON-RPC methods)",
  providedBy: "builtin:mode-app-server",
});
