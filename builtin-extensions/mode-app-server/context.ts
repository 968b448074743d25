/**
 * What a method handler may use, and the table form every method is written in. A handler gets the server context
 * (the host face, the thread registry, the git service, the log), its params and the call; it returns its result,
 * typed from the protocol (`ResultOf<M>`), so the compiler checks every result against the schema's type.
 */
import type {
  ExtensionContext,
  GitService,
  HostServices,
  McpClient,
  ModeSessionOptions,
  SessionController,
} from "@knightcodeai/cli/kit";
import type { ParamsOf, RequestName, ResultOf } from "./protocol.js";
import { requestSpecs } from "./protocol.js";
import type { CallContext, MethodRegistry } from "./registry.js";
import type { AppServer } from "./server.js";

/** The threads of the server: loaded ones, loading, listing and reading stored ones, moving their files. */
export type ThreadRegistry = Pick<
  AppServer,
  | "threads"
  | "loaded"
  | "requireLoaded"
  | "load"
  | "openThread"
  | "unload"
  | "findSession"
  | "writing"
  | "summarize"
  | "threadInfo"
  | "newestHistory"
  | "pageHistory"
  | "readPayload"
  | "moveSessionFile"
  | "deleteFile"
  | "storeChange"
  | "statusOf"
  | "worktreesRoot"
  | "worktrees"
  | "connections"
  | "startedAt"
  | "userAgent"
>;

export interface ServerContext {
  /** The stores and configuration of any folder (`ModeContext.host`). */
  readonly host: HostServices;
  readonly threads: ThreadRegistry;
  /** The git service of the server's own session; an `internal` error when no extension provides one. */
  git(): GitService;
  /** The server's log (stderr), never a protocol stream. */
  log(message: string): void;
  readonly agentDir: string;
  /** Opens another session (the in-memory ones `tool/list` and `command/list` ask). */
  openSession(options: ModeSessionOptions): Promise<SessionController>;
  /** The server's own session (its commands), when the host gave it. */
  readonly session: SessionController | undefined;
  /** The server's own session's extension context (its `tools.json` declarations, its models), once it started. */
  hostContext(): ExtensionContext | undefined;
  /** The MCP client of the server's own session, when an extension provides one. */
  mcpClient(): McpClient | undefined;
}

export type MethodHandler<M extends RequestName> = (
  ctx: ServerContext,
  params: ParamsOf<M>,
  call: CallContext,
) => ResultOf<M> | Promise<ResultOf<M>>;

/** One row of a method table: a protocol method and its handler. */
export interface MethodRow {
  readonly name: RequestName;
  install(methods: MethodRegistry, ctx: ServerContext): () => void;
}

/** A row of a method table; its handler's params and result are the method's, from protocol.ts. */
export function method<M extends RequestName>(name: M, handler: MethodHandler<M>): MethodRow {
  return {
    name,
    install: (methods, ctx) =>
      methods.register(name, requestSpecs[name], (params, call) => handler(ctx, params, call)),
  };
}

/** Registers every row of `table`. */
export function installMethods(server: AppServer, table: readonly MethodRow[]): void {
  const ctx = server.context();
  for (const row of table) row.install(server.methods, ctx);
}
