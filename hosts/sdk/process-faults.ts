/**
 * Process-level fault handlers: while a session is open, an exception nobody caught (a tool's timer that throws)
 * or a promise rejection nobody handled (a handler that forgot an `await`) no longer ends the process. Each is
 * blamed on the extension whose file is on the error's stack, reported as `extension_error` naming it and the
 * fault, and fails that extension's tool call in flight; the session keeps serving.
 *
 * An error no extension's file explains is reported against "unknown" in every open session, and the process
 * keeps serving too: it may come from an extension's dependency outside its folder as well as from KnightCode,
 * and ending an RPC process or an interactive session over it would lose more than the report does.
 *
 * The handlers are installed when the first session opens and removed when the last one is disposed, so the SDK
 * and tests never leave listeners behind, and a process with no session open keeps Node's own behaviour.
 */
import { realpathSync } from "node:fs";
import { basename, dirname, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { type ExtensionInfo, errorMessage, type HookBus } from "../../kernel/index.js";

/** What one open session offers the handlers: its extensions (with their files) and its bus. */
export interface FaultTarget {
  extensions(): readonly ExtensionInfo[];
  bus(): HookBus | undefined;
}

type FaultKind = "uncaughtException" | "unhandledRejection";

const targets = new Set<FaultTarget>();
const onException = (error: unknown) => guarded("uncaughtException", error);
const onRejection = (reason: unknown) => guarded("unhandledRejection", reason);

/** Routes process-level faults to `target` until the returned function is called (idempotent). */
export function watchProcessFaults(target: FaultTarget): () => void {
  if (targets.size === 0) {
    process.on("uncaughtException", onException);
    process.on("unhandledRejection", onRejection);
  }
  targets.add(target);
  return () => {
    if (!targets.delete(target) || targets.size > 0) return;
    process.off("uncaughtException", onException);
    process.off("unhandledRejection", onRejection);
  };
}

/** A listener that throws would end the process after all, so a failing report falls back to stderr. */
function guarded(kind: FaultKind, error: unknown): void {
  try {
    dispatch(kind, error);
  } catch (failure) {
    process.stderr.write(
      `knightcode: ${kind}: ${errorMessage(error)} (reporting it failed: ${errorMessage(failure)})\n`,
    );
  }
}

function dispatch(kind: FaultKind, error: unknown): void {
  const stack = stackOf(error);
  let reported = false;
  for (const target of targets) {
    const bus = target.bus();
    const owner = bus && stack ? blame(stack, target.extensions()) : undefined;
    if (!bus || !owner) continue;
    bus.fault(owner, kind, error);
    reported = true;
  }
  if (reported) return;
  const unknown = { id: "unknown", order: Number.MAX_SAFE_INTEGER };
  for (const target of targets) {
    const bus = target.bus();
    if (!bus) continue;
    bus.report(unknown, kind, error);
    reported = true;
  }
  // A session between two runtimes (being replaced, or shutting down) has no bus to report to; stderr does.
  if (!reported) process.stderr.write(`knightcode: ${kind}: ${errorMessage(error)}\n`);
}

/** The extension whose file appears first (innermost) on the stack. */
function blame(stack: string, extensions: readonly ExtensionInfo[]): ExtensionInfo | undefined {
  let best: { owner: ExtensionInfo; at: number } | undefined;
  for (const owner of extensions) {
    if (!owner.path) continue;
    for (const needle of needles(owner.path)) {
      const at = stack.indexOf(needle);
      if (at >= 0 && (!best || at < best.at)) best = { owner, at };
    }
  }
  return best?.owner;
}

/**
 * How an extension's code shows on a stack: its file (as a path or a file URL, also by its real path), or for an
 * `index` entry its whole folder, which holds the rest of its code.
 */
function needles(path: string): string[] {
  const paths = new Set([path]);
  try {
    paths.add(realpathSync(path));
  } catch {
    // The file is gone (deleted after loading); its recorded path is all there is.
  }
  const out: string[] = [];
  for (const p of paths) {
    const entry = /^index\.[cm]?[jt]sx?$/.test(basename(p)) ? dirname(p) + sep : p;
    out.push(entry, pathToFileURL(entry).href);
  }
  return out;
}

function stackOf(error: unknown): string | undefined {
  try {
    const stack = (error as { stack?: unknown } | null)?.stack;
    return typeof stack === "string" ? stack : undefined;
  } catch {
    return undefined;
  }
}
