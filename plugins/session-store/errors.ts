/** Errors of the session store. Each has a stable code and a message that names the file involved. */
import { KernelError } from "../../kernel/index.js";

export type SessionErrorCode =
  /** Another process (or another SessionManager in this process) owns the file. */
  | "KC_ERR_SESSION_LOCKED"
  /** The file is not a session file: missing or invalid header, unsupported version, empty. */
  | "KC_ERR_SESSION_INVALID"
  /** No session file at that path, or no session with that id. */
  | "KC_ERR_SESSION_NOT_FOUND"
  /** An id prefix matches more than one session. */
  | "KC_ERR_SESSION_AMBIGUOUS"
  /** Reading, creating or writing a file failed (permissions, disk full, ...). */
  | "KC_ERR_SESSION_IO"
  /** A listing's cursor that no page gave out. */
  | "KC_ERR_SESSION_CURSOR"
  /** An append after `close()`. */
  | "KC_ERR_SESSION_CLOSED"
  /** An entry id given to branch/label/compaction/... does not exist or is not usable there. */
  | "KC_ERR_SESSION_ENTRY";

export class SessionStoreError extends KernelError {
  /** The session (or lock) file involved, when there is one. */
  readonly path: string | undefined;
  constructor(code: SessionErrorCode, message: string, options: { path?: string; cause?: unknown } = {}) {
    super(code, message, { cause: options.cause });
    this.path = options.path;
  }
}

export class SessionLockedError extends SessionStoreError {
  /** The pid written in the lock file (ours when another manager in this process holds it). */
  readonly pid: number | undefined;
  constructor(message: string, options: { path: string; pid: number | undefined }) {
    super("KC_ERR_SESSION_LOCKED", message, { path: options.path });
    this.pid = options.pid;
  }
}

/** `EACCES: permission denied` rather than a stack; for wrapping node errors into our messages. */
export function reason(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

export function errnoCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}
