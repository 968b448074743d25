/**
 * Every error the app-server answers with, in one table: the spec's name (`data.code`) and its numeric JSON-RPC
 * code. Handlers throw `AppServerError`; anything else a handler throws becomes `internal` (-32603).
 */

export const ERROR_CODES = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  overloaded: -32001,
  notInitialized: -32600,
  alreadyInitialized: -32600,
  threadNotFound: -32600,
  threadLocked: -32600,
  turnMismatch: -32600,
  turnInProgress: -32600,
  noActiveTurn: -32600,
  versionConflict: -32600,
  authRequired: -32600,
  toolMissing: -32600,
  notGitRepo: -32600,
  gitConflict: -32600,
  loginInProgress: -32600,
} as const;

export type ErrorName = keyof typeof ERROR_CODES;

export class AppServerError extends Error {
  constructor(
    readonly name_: ErrorName,
    message: string,
    readonly data: Record<string, unknown> = {},
  ) {
    super(message);
  }

  toWire(): { code: number; message: string; data: Record<string, unknown> } {
    return { code: ERROR_CODES[this.name_], message: this.message, data: { code: this.name_, ...this.data } };
  }
}

export function invalidParams(message: string, data: Record<string, unknown> = {}): AppServerError {
  return new AppServerError("invalidParams", message, data);
}

export function threadNotFound(threadId: string): AppServerError {
  return new AppServerError("threadNotFound", `No thread with id "${threadId}"`, { threadId });
}
