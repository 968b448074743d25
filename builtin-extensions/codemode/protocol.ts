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

/**
 * What may cross from the sandbox to the host. A script's memory is bounded (see `wasmMemoryPages`), but copies of
 * its strings outside the sandbox are not, so each thing that leaves is capped before it is copied out of QuickJS.
 */
export const CROSSING = {
  /** One tool call's arguments, one call's answer, and the returned value, as JSON text (characters). */
  messageChars: 4 * 1024 * 1024,
  /** Arguments of the tool calls a script has running at once, together. */
  inFlightChars: 16 * 1024 * 1024,
  /** Console output shown from the start of a run; past it lines go to the tail. */
  logHeadChars: 768 * 1024,
  /** Console output kept from the end of a run once the head is full; older tail lines are dropped and counted. */
  logTailChars: 256 * 1024,
  /** One console line; a longer one keeps its start and says how long it was. */
  logLineChars: 128 * 1024,
  /** An error's name, message or stack as the host sees it. */
  errorChars: 16 * 1024,
} as const;

/** The size of a WebAssembly page. */
export const WASM_PAGE = 64 * 1024;
/** The QuickJS build's own initial memory: its smallest possible memory. */
export const WASM_MIN_BYTES = 16 * 1024 * 1024;

/**
 * The WebAssembly memory of a sandbox worker, whose maximum is the script's memory limit: QuickJS's own limit
 * (`setMemoryLimit`) counts 8 bytes per allocation in the Emscripten build (it has no `malloc_usable_size`), so it
 * stops only single allocations over the limit. The wasm memory cannot grow past its maximum, so malloc fails there
 * and QuickJS throws "out of memory", whatever the script allocates. The engine's own data (about 1 MB) counts too.
 */
export function wasmMemoryPages(memoryBytes: number): { initial: number; maximum: number } {
  const initial = WASM_MIN_BYTES / WASM_PAGE;
  return { initial, maximum: Math.max(initial, Math.ceil(memoryBytes / WASM_PAGE)) };
}

/**
 * What a worker reports of its memory, in a shared buffer the host reads while the worker is busy in a script (a
 * busy worker answers no messages). Int32 slots: its wasm memory in pages, its V8 heap in use in KB.
 */
export const STATS_WASM_PAGES = 0;
export const STATS_HEAP_KB = 1;
export const STATS_SLOTS = 2;

export interface SandboxWorkerData {
  /** QuickJS compiled once by the host (a WebAssembly.Module). */
  wasm: object;
  /** The memory limit this worker was made for: its wasm memory's maximum. */
  memoryBytes: number;
  /** `STATS_SLOTS` Int32 slots the worker writes and the host reads. */
  stats: SharedArrayBuffer;
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

export type LogLevel = "log" | "info" | "warn" | "error" | "debug";

export type WorkerToHost =
  | { type: "ready" }
  /** A script calls a tool (`kind: "tool"`) or searches the catalogue (`kind: "search"`, args `{query, limit}`). */
  | { type: "call"; runId: number; callId: number; kind: "tool" | "search"; name: string; args: string }
  | { type: "log"; runId: number; level: LogLevel; text: string }
  /** `retire`: the worker ends after this message (its wasm memory is in doubt); the host must not reuse it. */
  | { type: "done"; runId: number; outcome: RunOutcome; retire?: boolean };
