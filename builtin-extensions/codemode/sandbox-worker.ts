/**
 * The codemode sandbox: a worker thread that runs scripts in QuickJS compiled to WebAssembly, one fresh QuickJS
 * runtime per script. The QuickJS side has no host objects at all: no `fetch`, timers, `process`, `require`,
 * module loader or `WebAssembly`. Its only way out are two functions the prelude captures and then deletes from the
 * global scope: one posts a tool call (or a catalogue search) to the host and returns a promise, one posts a
 * console line. So every effect of a script is a tool call the host runs through its normal pipeline.
 *
 * Limits: the worker's WebAssembly memory has the script's memory limit as its maximum (protocol.ts says why
 * QuickJS's own limit is not enough), a stack limit on the runtime, and an interrupt handler that stops the script
 * once the deadline passes or the host raises the shared interrupt flag. What leaves the sandbox (console lines,
 * tool-call arguments, the returned value, error text) is capped before it is copied out of QuickJS (`CROSSING`).
 * The worker writes its memory to a shared buffer the host watches; the host terminates the whole worker when the
 * script does not stop within a grace period or the worker goes past its memory, so nothing here has to be trusted.
 */
import { getHeapStatistics } from "node:v8";
import { parentPort, workerData } from "node:worker_threads";
import variant from "@jitl/quickjs-wasmfile-release-sync";
import {
  type CustomizeVariantOptions,
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSDeferredPromise,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSSyncVariant,
} from "quickjs-emscripten-core";
import {
  CROSSING,
  type HostToWorker,
  type LogLevel,
  type RunFailureKind,
  type RunOutcome,
  type SandboxWorkerData,
  STATS_HEAP_KB,
  STATS_WASM_PAGES,
  WASM_PAGE,
  type WorkerToHost,
  wasmMemoryPages,
} from "./protocol.js";

// The host gives this worker a stdout and stderr of its own and never reads them (a host reading a worker's streams
// is kept alive by them even after unref()), so what the wasm runtime might print is dropped here.
process.stdout.write = (() => true) as typeof process.stdout.write;
process.stderr.write = (() => true) as typeof process.stderr.write;

/** Stack frames kept in an error's message. */
const STACK_FRAMES = 6;

const port = parentPort;
if (!port) throw new Error("sandbox-worker.ts runs only as a worker thread");
const post = (message: WorkerToHost) => port.postMessage(message);

/**
 * Runs inside QuickJS before the script. It takes the two bridge functions and the data the host put on the global
 * object, removes them, and builds `tools`, `console` and the catalogue functions in closures.
 */
const PRELUDE = String.raw`
(() => {
  const g = globalThis;
  const call = g.__kc_call, log = g.__kc_log, toolList = JSON.parse(g.__kc_tools), catalogueText = g.__kc_catalogue;
  delete g.__kc_call; delete g.__kc_log; delete g.__kc_tools; delete g.__kc_catalogue;
  let catalogue;
  const data = () => (catalogue ??= JSON.parse(catalogueText));
  const request = async (kind, name, args) => {
    let text;
    try { text = JSON.stringify(args === undefined ? {} : args); }
    catch (e) { throw new TypeError("The arguments of " + name + " cannot be written as JSON: " + e.message); }
    const answer = JSON.parse(await call(kind, name, text === undefined ? "{}" : text));
    if ("error" in answer) throw new Error(answer.error);
    return answer.value;
  };
  const tool = (name) => (args) => request("tool", name, args);
  const missing = (where, key) => {
    throw new TypeError("No tool " + JSON.stringify(key) + where + ". listTools() and searchTools(query) show the tools there are.");
  };
  const guarded = (target, where) => new Proxy(target, {
    get(t, key) {
      if (typeof key !== "string" || key in t || key === "then" || key === "toJSON") return t[key];
      return missing(where, key);
    },
  });
  const root = {};
  const spaces = {};
  for (const t of toolList) {
    const fn = tool(t.name);
    root[t.name] = fn;
    root[t.name.replace(/[^A-Za-z0-9_$]/g, "_")] = fn;
    for (const ns of t.namespaces) {
      const space = (spaces[ns] ??= {});
      for (const key of t.keys) space[key] = fn;
    }
  }
  for (const [ns, space] of Object.entries(spaces)) {
    if (!(ns in root)) root[ns] = guarded(space, " in namespace " + ns);
  }
  const format = (v) => {
    if (typeof v === "string") return v;
    if (v instanceof Error) return v.name + ": " + v.message;
    try { const s = JSON.stringify(v); return s === undefined ? String(v) : s; } catch { return String(v); }
  };
  const logger = (level) => (...args) => log(level, args.map(format).join(" "));
  const summary = (t) => ({ name: t.name, namespace: t.namespace, description: (t.description || "").split("\n")[0] });
  const normal = (s) => String(s).toLowerCase().replace(/[^a-z0-9]+/g, "_");
  g.tools = guarded(root, "");
  g.console = { log: logger("log"), info: logger("info"), warn: logger("warn"), error: logger("error"), debug: logger("debug") };
  g.listTools = () => data().tools.filter((t) => t.listed).map(summary);
  g.searchTools = (query, limit) => request("search", "searchTools", { query: String(query), limit });
  g.describeTool = (name) => {
    const t = data().tools.find((x) => x.name === name || normal(x.name) === normal(name));
    if (!t) return missing("", name);
    return { name: t.name, namespace: t.namespace, description: t.description, parameters: t.parameters, outputSchema: t.outputSchema };
  };
  g.describeNamespace = (name) => {
    const wanted = normal(name);
    const ns = data().namespaces.find((n) => [n.name, ...n.aliases].some((a) => normal(a) === wanted));
    if (!ns) throw new TypeError("No namespace " + JSON.stringify(name) + ". Namespaces: " + data().namespaces.map((n) => n.name).join(", "));
    return ns;
  };
  g.__kc_start = (main) => {
    delete g.__kc_start;
    return main().then((value) => {
      if (value === undefined) return "";
      let text;
      try { text = JSON.stringify(value); } catch (e) { text = JSON.stringify(String(value)); }
      return text === undefined ? JSON.stringify(String(value)) : text;
    });
  };
})();
`;

interface ActiveRun {
  runId: number;
  runtime: QuickJSRuntime;
  vm: QuickJSContext;
  /** `String.prototype.slice` and `JSON.stringify` as they were before the script ran (it may replace them). */
  slice: QuickJSHandle;
  stringify: QuickJSHandle;
  main?: QuickJSHandle;
  calls: Map<number, { deferred: QuickJSDeferredPromise; chars: number }>;
  nextCall: number;
  /** Characters of call arguments in flight. */
  inFlight: number;
  log: {
    headChars: number;
    tail: { level: LogLevel; text: string }[];
    tailChars: number;
    droppedLines: number;
    droppedChars: number;
  };
  deadline: number;
  flag: Int32Array;
  finished: boolean;
}

const data = workerData as SandboxWorkerData;
const stats = new Int32Array(data.stats);
// The memory is the worker's own, with the limit it was made for as its maximum (protocol.ts: wasmMemoryPages).
const memory = new (
  globalThis as unknown as {
    WebAssembly: { Memory: new (limits: { initial: number; maximum: number }) => { buffer: ArrayBuffer } };
  }
).WebAssembly.Memory(wasmMemoryPages(data.memoryBytes));
const maxPages = wasmMemoryPages(data.memoryBytes).maximum;

// The package's CommonJS typings type its default export as the module object; at run time it is the variant. The
// host compiled the wasm once for every worker (sandbox.ts).
const quickjs = await newQuickJSWASMModuleFromVariant(
  newVariant(variant as unknown as QuickJSSyncVariant, {
    wasmModule: data.wasm as CustomizeVariantOptions["wasmModule"],
    wasmMemory: memory as CustomizeVariantOptions["wasmMemory"],
  }),
);
// Fail closed: a build that made a memory of its own would not be bounded by ours.
if (quickjs.getWasmMemory() !== (memory as unknown))
  throw new Error("the QuickJS build ignored the sandbox's memory");
let current: ActiveRun | undefined;
let reportedAt = 0;

/** Writes this worker's memory where the host reads it; at most every 20 ms unless `now`. */
function reportMemory(now = false): void {
  const time = Date.now();
  if (!now && time - reportedAt < 20) return;
  reportedAt = time;
  Atomics.store(stats, STATS_WASM_PAGES, memory.buffer.byteLength / WASM_PAGE);
  Atomics.store(stats, STATS_HEAP_KB, Math.round(getHeapStatistics().used_heap_size / 1024));
}

port.on("message", (message: HostToWorker) => {
  try {
    if (message.type === "run") start(message);
    else if (!current || current.runId !== message.runId) return;
    else if (message.type === "settle") settle(current, message.callId, message.json);
    else finish(current, { ok: false, kind: "aborted", message: "cancelled" });
  } catch (error) {
    // QuickJS failed outside a script's own error (its memory exhausted inside the engine or a bridge function):
    // report it and end the worker, whose wasm memory is now in doubt.
    const run = current;
    reportMemory(true);
    if (run) {
      // Emscripten grows the memory in steps of 5% or more, so a full memory may stop a little under its maximum.
      const full = memory.buffer.byteLength / WASM_PAGE >= maxPages * 0.9;
      post({
        type: "done",
        runId: run.runId,
        outcome: full
          ? {
              ok: false,
              kind: "memory",
              message: `out of memory (${String((error as Error)?.message ?? error)})`,
            }
          : {
              ok: false,
              kind: "sandbox",
              message: `the sandbox failed: ${String((error as Error)?.message ?? error)}`,
            },
        retire: true,
      });
    }
    process.exit(1);
  }
});
reportMemory(true);
post({ type: "ready" });

/**
 * A string handle's text, at most `max` characters of it: a longer string is sliced inside QuickJS first, so the
 * whole never reaches this thread. `length` is the full length.
 */
function boundedText(run: ActiveRun, handle: QuickJSHandle, max: number): { text: string; length: number } {
  const { vm } = run;
  if (vm.typeof(handle) !== "string") return { text: "", length: 0 };
  const length = vm.getProp(handle, "length").consume((h) => vm.getNumber(h));
  if (length <= max) return { text: vm.getString(handle), length };
  const part = vm.callFunction(run.slice, handle, vm.newNumber(0), vm.newNumber(max));
  if (part.error) {
    part.error.dispose();
    return { text: "", length };
  }
  return { text: part.value.consume((h) => vm.getString(h)), length };
}

/** Megabytes, for messages. */
const mb = (chars: number) => `${(chars / (1024 * 1024)).toFixed(1)} MB`;

function start(message: Extract<HostToWorker, { type: "run" }>): void {
  const runtime = quickjs.newRuntime();
  const flag = new Int32Array(message.interrupt);
  const { memoryBytes, stackBytes, deadline } = message.limits;
  // Still useful: it refuses one allocation over the limit at once. The wasm memory's maximum bounds the total.
  runtime.setMemoryLimit(memoryBytes);
  runtime.setMaxStackSize(stackBytes);
  const halted = () => Atomics.load(flag, 0) !== 0 || Date.now() > deadline;
  runtime.setInterruptHandler(() => {
    reportMemory();
    return halted();
  });
  // QuickJS asks the interrupt handler only every few thousand steps; a loop of heavy bridge calls (a large console
  // line each) would take seconds between asks. The bridge functions stop such a script at once.
  const checkHalted = () => {
    reportMemory();
    if (halted()) throw new Error("interrupted");
  };
  const vm = runtime.newContext();
  const intrinsic = (code: string) => {
    const result = vm.evalCode(code, "intrinsics.js");
    if (result.error) {
      result.error.dispose();
      throw new Error(`cannot read ${code}`);
    }
    return result.value;
  };
  const run: ActiveRun = {
    runId: message.runId,
    runtime,
    vm,
    slice: intrinsic("String.prototype.slice"),
    stringify: intrinsic("JSON.stringify"),
    calls: new Map(),
    nextCall: 1,
    inFlight: 0,
    log: { headChars: 0, tail: [], tailChars: 0, droppedLines: 0, droppedChars: 0 },
    deadline,
    flag,
    finished: false,
  };
  current = run;
  vm.newFunction("__kc_call", (kind, name, args) => {
    checkHalted();
    const callId = run.nextCall++;
    const deferred = vm.newPromise();
    const callName = boundedText(run, name, 256).text;
    const { text, length } = boundedText(run, args, CROSSING.messageChars);
    const refuse = (why: string) => {
      // Rejecting disposes the resolvers; the library disposes the returned handle.
      vm.newError(why).consume((e) => deferred.reject(e));
      return deferred.handle;
    };
    if (length > CROSSING.messageChars) {
      return refuse(
        `The arguments of ${callName} are ${mb(length)} as JSON, over the ${mb(CROSSING.messageChars)} a tool call may pass.`,
      );
    }
    if (run.inFlight + length > CROSSING.inFlightChars) {
      return refuse(
        `The tool calls running hold ${mb(run.inFlight)} of arguments; ${callName} would pass the ${mb(CROSSING.inFlightChars)} allowed at once. Await some calls first.`,
      );
    }
    run.inFlight += length;
    run.calls.set(callId, { deferred, chars: length });
    post({
      type: "call",
      runId: run.runId,
      callId,
      kind: boundedText(run, kind, 16).text === "search" ? "search" : "tool",
      name: callName,
      args: text,
    });
    // The library disposes the returned handle; the deferred's resolvers stay usable.
    return deferred.handle;
  }).consume((fn) => vm.setProp(vm.global, "__kc_call", fn));
  vm.newFunction("__kc_log", (level, text) => {
    checkHalted();
    const name = boundedText(run, level, 16).text;
    const line = boundedText(run, text, CROSSING.logLineChars);
    const shown =
      line.length > CROSSING.logLineChars
        ? `${line.text}… [line cut: ${line.length} characters in all]`
        : line.text;
    log(run, (["log", "info", "warn", "error", "debug"].includes(name) ? name : "log") as LogLevel, shown);
  }).consume((fn) => vm.setProp(vm.global, "__kc_log", fn));
  vm.newString(JSON.stringify(message.tools)).consume((s) => vm.setProp(vm.global, "__kc_tools", s));
  vm.newString(message.catalogue).consume((s) => vm.setProp(vm.global, "__kc_catalogue", s));

  const prelude = vm.evalCode(PRELUDE, "prelude.js");
  if (prelude.error) {
    const error = prelude.error.consume((e) => errorValue(run, e));
    finish(run, { ok: false, kind: "sandbox", message: `prelude failed: ${describe(error)}` });
    return;
  }
  prelude.value.dispose();
  // The script's first line shares the wrapper's line, so line numbers in its errors are its own.
  const started = vm.evalCode(`__kc_start(async () => {${message.code}\n});`, "script.js");
  if (started.error) {
    finish(
      run,
      failure(
        run,
        started.error.consume((e) => errorValue(run, e)),
      ),
    );
    return;
  }
  run.main = started.value;
  drive(run);
}

/**
 * Console output: the first `logHeadChars` go to the host as they come; after that the latest `logTailChars` are
 * kept here and sent when the run ends, after a note of what was dropped between the two.
 */
function log(run: ActiveRun, level: LogLevel, text: string): void {
  const { log } = run;
  if (log.headChars + text.length <= CROSSING.logHeadChars && log.tail.length === 0) {
    log.headChars += text.length;
    post({ type: "log", runId: run.runId, level, text });
    return;
  }
  log.tail.push({ level, text });
  log.tailChars += text.length;
  while (log.tailChars > CROSSING.logTailChars && log.tail.length > 1) {
    const dropped = log.tail.shift()!;
    log.tailChars -= dropped.text.length;
    log.droppedLines++;
    log.droppedChars += dropped.text.length;
  }
}

/** The tail of the console output, with a note of the lines dropped before it. */
function flushLog(run: ActiveRun): void {
  const { log } = run;
  if (log.droppedLines > 0) {
    post({
      type: "log",
      runId: run.runId,
      level: "warn",
      text: `[console output over ${mb(CROSSING.logHeadChars + CROSSING.logTailChars)}: ${log.droppedLines} line(s), ${mb(log.droppedChars)}, dropped here; the first and the last lines are shown]`,
    });
  }
  for (const line of log.tail) post({ type: "log", runId: run.runId, level: line.level, text: line.text });
  log.tail = [];
}

function settle(run: ActiveRun, callId: number, json: string): void {
  const call = run.calls.get(callId);
  if (!call) return;
  run.calls.delete(callId);
  run.inFlight -= call.chars;
  const { deferred } = call;
  let value: QuickJSHandle | undefined;
  try {
    value = run.vm.newString(json);
  } catch {
    // The answer does not fit in the script's memory.
  }
  if (value) value.consume((v) => deferred.resolve(v));
  else {
    run.vm
      .newError(`The answer (${mb(json.length)}) does not fit in the script's memory.`)
      .consume((e) => deferred.reject(e));
  }
  deferred.dispose();
  drive(run);
}

/** Runs the jobs the last event queued, then finishes the run if the script settled or can never settle. */
function drive(run: ActiveRun): void {
  if (run.finished) return;
  const outcome = settledOutcome(run);
  if (outcome) finish(run, outcome);
}

function settledOutcome(run: ActiveRun): RunOutcome | undefined {
  const jobs = run.runtime.executePendingJobs();
  if (jobs.error)
    return failure(
      run,
      jobs.error.consume((e) => errorValue(run, e)),
    );
  const state = run.vm.getPromiseState(run.main!);
  if (state.type === "fulfilled") {
    const { text, length } = state.value.consume((v) => boundedText(run, v, CROSSING.messageChars));
    if (length > CROSSING.messageChars) {
      return {
        ok: false,
        kind: "script",
        message: `The returned value is ${mb(length)} as JSON, over the ${mb(CROSSING.messageChars)} a script may return. Return less, or write the data to a file with a tool.`,
      };
    }
    return text === "" ? { ok: true } : { ok: true, json: text };
  }
  if (state.type === "rejected")
    return failure(
      run,
      state.error.consume((e) => errorValue(run, e)),
    );
  if (run.calls.size > 0 || run.runtime.hasPendingJob()) return undefined;
  // An interrupt that lands inside a pending job drops that job's promise, which then looks stalled: the deadline
  // or the host's stop is the cause.
  const halted = haltedKind(run);
  if (halted) return { ok: false, kind: halted, message: "interrupted" };
  return {
    ok: false,
    kind: "stalled",
    message:
      "The script waits on a promise that nothing can settle: no tool call and no job is pending. " +
      "There are no timers or events in the sandbox; await tool calls only.",
  };
}

/** What a thrown value means: the interrupt (deadline or host), the memory limit, or the script's own error. */
function failure(run: ActiveRun, error: unknown): RunOutcome & { ok: false } {
  const text = describe(error);
  if (/out of memory/i.test(text)) return { ok: false, kind: "memory", message: text };
  // Past the deadline or after the host's stop, whatever the engine threw on the way out (the interrupt itself, or
  // an error of a job the interrupt cut short) is the stop.
  const halted = haltedKind(run);
  if (halted) return { ok: false, kind: halted, message: text };
  if (/\binterrupted\b/.test(text)) return { ok: false, kind: "timeout", message: text };
  return { ok: false, kind: "script", message: text };
}

/** `timeout` once the deadline has passed, `aborted` once the host raised the stop flag; otherwise undefined. */
function haltedKind(run: ActiveRun): RunFailureKind | undefined {
  if (Date.now() > run.deadline) return "timeout";
  if (Atomics.load(run.flag, 0) !== 0) return "aborted";
  return undefined;
}

/**
 * A thrown value as plain data, each part of it at most `errorChars` long: `vm.dump` would copy all of it (and
 * JSON-encode an object), however large.
 */
function errorValue(run: ActiveRun, handle: QuickJSHandle): unknown {
  const { vm } = run;
  const kind = vm.typeof(handle);
  if (kind === "string") return boundedText(run, handle, CROSSING.errorChars).text;
  if (kind !== "object") return vm.dump(handle);
  const part = (key: string) =>
    vm
      .getProp(handle, key)
      .consume((h) =>
        vm.typeof(h) === "string" ? boundedText(run, h, CROSSING.errorChars).text : undefined,
      );
  const message = part("message");
  if (message !== undefined) return { name: part("name"), message, stack: part("stack") };
  const json = vm.callFunction(run.stringify, vm.undefined, handle);
  if (json.error) {
    json.error.dispose();
    return "[object]";
  }
  return json.value.consume((h) => boundedText(run, h, CROSSING.errorChars).text) || "[object]";
}

function describe(error: unknown): string {
  if (typeof error === "object" && error !== null) {
    const e = error as { name?: unknown; message?: unknown; stack?: unknown };
    if (typeof e.message === "string") {
      const head = `${typeof e.name === "string" ? e.name : "Error"}: ${e.message}`;
      // Frames of the prelude are the sandbox's, not the script's; a deep recursion repeats one frame.
      const frames = typeof e.stack === "string" ? e.stack.split("\n").map((l) => l.trim()) : [];
      const own = frames.filter(
        (l) => l.startsWith("at ") && !l.includes("prelude.js") && !l.includes("<eval>"),
      );
      const shown = [...new Set(own)].slice(0, STACK_FRAMES).map((l) => `    ${l}`);
      return [head, ...shown].join("\n");
    }
  }
  return String(error);
}

function finish(run: ActiveRun, outcome: RunOutcome): void {
  if (run.finished) return;
  run.finished = true;
  if (current === run) current = undefined;
  flushLog(run);
  try {
    for (const call of run.calls.values()) call.deferred.dispose();
    run.calls.clear();
    run.main?.dispose();
    run.slice.dispose();
    run.stringify.dispose();
    run.vm.dispose();
    run.runtime.dispose();
    reportMemory(true);
  } catch {
    // A runtime that cannot be freed cleanly (its memory limit hit mid-allocation) leaves this worker's wasm
    // memory in doubt: report the outcome, then end the worker so the host starts a fresh one.
    post({ type: "done", runId: run.runId, outcome, retire: true });
    process.exit(1);
  }
  post({ type: "done", runId: run.runId, outcome });
}
