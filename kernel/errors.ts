/** Errors with stable codes (kernel/api/error-codes.ts). Each says what went wrong, where, and what to do. */
import type { ErrorCode } from "./api/error-codes.js";

export class KernelError extends Error {
  readonly code: ErrorCode;
  /** What a program needs to act on the failure (e.g. `{reason: "version", path}`), when there is more than the code. */
  readonly data?: Readonly<Record<string, unknown>>;
  constructor(
    code: ErrorCode,
    message: string,
    options?: { cause?: unknown; data?: Readonly<Record<string, unknown>> },
  ) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.code = code;
    this.name = new.target.name;
    if (options?.data) this.data = options.data;
  }
}

/** A plugin or an API method needs a service token that nothing provides. */
export class MissingServiceError extends KernelError {
  constructor(message: string) {
    super("KC_ERR_MISSING_SERVICE", message);
  }
}

/** An extension file could not be loaded or its factory failed. */
export class ExtensionLoadError extends KernelError {
  readonly extension: string;
  constructor(extension: string, reason: string, cause?: unknown) {
    super("KC_ERR_EXTENSION_LOAD", `Extension ${extension} failed to load: ${reason}`, { cause });
    this.extension = extension;
  }
}

/** An API object or context was used after its session runtime was replaced, reloaded or shut down. */
export class StaleContextError extends KernelError {
  constructor(what: string) {
    super(
      "KC_ERR_STALE_CONTEXT",
      `${what} belongs to a session runtime that was reloaded, replaced or shut down. ` +
        "Capture plain data before switching and use the fresh context (withSession) afterwards.",
    );
  }
}

/** The session refused to start (an extension threw ExtensionStartupError) and has not been reloaded since. */
export class SessionStartupFailedError extends KernelError {
  constructor(reason: string, cause?: unknown) {
    super(
      "KC_ERR_STARTUP_FAILED",
      `This session cannot ${reason} because an extension refused to start it. Fix the cause and reload.`,
      { cause },
    );
  }
}

/**
 * Thrown by an extension from `session_start` to refuse an unsafe runtime. It propagates to the host and the
 * session cannot prompt until a successful reload.
 */
export class ExtensionStartupError extends Error {
  readonly code = "KC_ERR_EXTENSION_STARTUP";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "ExtensionStartupError";
  }
}

/** Recognises an ExtensionStartupError even when an extension bundled its own copy of the class. */
export function isExtensionStartupError(error: unknown): error is Error {
  try {
    return (
      error instanceof ExtensionStartupError ||
      (error instanceof Error && (error as { code?: unknown }).code === "KC_ERR_EXTENSION_STARTUP")
    );
  } catch {
    // A Proxy whose traps throw is no startup error; it is reported like any other failure.
    return false;
  }
}

/**
 * Describes anything that was thrown, in one line of text, and never throws itself: extensions can throw objects
 * whose getters, `toJSON` or `toString` throw, or Proxies whose every trap does, and reporting such a failure must
 * not become a second failure. Every place that reports an error takes its text from here.
 */
export function errorMessage(error: unknown): string {
  try {
    if (error instanceof Error) {
      const message: unknown = error.message;
      return typeof message === "string" ? message : describeValue(message);
    }
    return typeof error === "string" ? error : describeValue(error);
  } catch {
    return unreadable(error);
  }
}

function describeValue(value: unknown): string {
  let failure: unknown;
  try {
    const json = JSON.stringify(value);
    if (json !== undefined) return json;
  } catch (error) {
    // Circular, a BigInt, or a throwing getter: fall back to the value's own text, and say why.
    failure = error;
  }
  try {
    const text = String(value);
    if (failure === undefined || text !== "[object Object]") return text;
  } catch {}
  return unreadable(value, failure);
}

function unreadable(value: unknown, failure?: unknown): string {
  let why = "";
  try {
    // The failure may be the extension's own Error (thrown by its getter), so reading it is guarded too.
    if (failure instanceof Error && typeof failure.message === "string") why = `: ${failure.message}`;
  } catch {}
  return `an unreadable ${value === null ? "null" : typeof value} was thrown (reading it failed${why})`;
}
