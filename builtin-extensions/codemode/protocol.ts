/**
 * Messages between the codemode host (the tool's `execute`) and a sandbox worker. Values cross as JSON text, so
 * nothing but strings and numbers ever reaches the QuickJS side.
 */

/** The tools a script may name, as the prelude builds `tools` from them. */
export interface SandboxTool {
  /** The registered name, used to dispatch. */
  name: string;
  /** Script identifiers it is reachable under inside its namespace object (`tools.<ns>.<key>`). */
  keys: string[];
  /** Namespace object identifiers (`tools.<ns>`): the namespace name and aliases as identifiers. */
  namespaces: string[];
}

/** What `listTools`, `describeTool` and `describeNamespace` read, as JSON text parsed inside the VM on first use. */
export interface SandboxCatalogue {
  tools: {
    name: string;
    namespace?: string;
    description: string;
    parameters: unknown;
    outputSchema?: unknown;
    /** Listed by `listTools`/`searchTools` (deferred tools are callable but not listed). */
    listed: boolean;
  }[];
  namespaces: {
    name: string;
    aliases: string[];
    description?: string;
    instructions?: string;
    tools: string[];
  }[];
}

export interface SandboxLimits {
  memoryBytes: number;
  stackBytes: number;
  /** Wall-clock deadline, as `Date.now()` milliseconds. */
  deadline: number;
}

export type HostToWorker =
  | {
      type: "run";
      runId: number;
      code: string;
      tools: SandboxTool[];
      /** JSON text of a {@link SandboxCatalogue}. */
      catalogue: string;
      limits: SandboxLimits;
      /** Set to non-zero by the host to stop the script: the interrupt handler reads it between bytecodes. */
      interrupt: SharedArrayBuffer;
    }
  /** Answer to a `call`: JSON text of `{value}` or `{error}`. */
  | { type: "settle"; runId: number; callId: number; json: string }
  /** Stop the run now (deadline, abort): the worker disposes it and answers `done`. */
  | { type: "cancel"; runId: number };

export type RunFailureKind = "script" | "timeout" | "memory" | "aborted" | "stalled" | "sandbox";

export type RunOutcome =
  | { ok: true /** JSON text of the returned value; absent for `undefined`. */; json?: string }
  | { ok: false; kind: RunFailureKind; message: string };

export type WorkerToHost =
  | { type: "ready" }
  /** A script calls a tool (`kind: "tool"`) or searches the catalogue (`kind: "search"`, args `{query, limit}`). */
  | { type: "call"; runId: number; callId: number; kind: "tool" | "search"; name: string; args: string }
  | { type: "log"; runId: number; level: "log" | "info" | "warn" | "error" | "debug"; text: string }
  /** `retire`: the worker ends after this message (its wasm memory is in doubt); the host must not reuse it. */
  | { type: "done"; runId: number; outcome: RunOutcome; retire?: boolean };
