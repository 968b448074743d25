/**
 * The codemode sandbox: a worker thread that runs scripts in QuickJS compiled to WebAssembly, one fresh QuickJS
 * runtime per script. The QuickJS side has no host objects at all: no `fetch`, timers, `process`, `require`,
 * module loader or `WebAssembly`. Its only way out are two functions the prelude captures and then deletes from the
 * global scope: one posts a tool call (or a catalogue search) to the host and returns a promise, one posts a
 * console line. So every effect of a script is a tool call the host runs through its normal pipeline.
 *
 * Limits: a memory limit and a stack limit on the runtime, and an interrupt handler that stops the script once the
 * deadline passes or the host raises the shared interrupt flag. The host terminates the whole worker when the
 * script does not stop within a grace period, so nothing here has to be trusted to stop.
 */
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
import type { HostToWorker, RunFailureKind, RunOutcome, WorkerToHost } from "./protocol.js";

// The host gives this worker a stdout and stderr of its own and never reads them (a host reading a worker's streams
// is kept alive by them even after unref()), so what the wasm runtime might print is dropped here.
process.stdout.write = (() => true) as typeof process.stdout.write;
process.stderr.write = (() => true) as typeof process.stderr.write;

/** Console output one script may produce; past it, lines are dropped and one note says so. */
const MAX_LOG_BYTES = 1024 * 1024;
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
  main?: QuickJSHandle;
  calls: Map<number, QuickJSDeferredPromise>;
  nextCall: number;
  logBytes: number;
  deadline: number;
  flag: Int32Array;
  finished: boolean;
}

// The package's CommonJS typings type its default export as the module object; at run time it is the variant. The
// host compiled the wasm once for every worker (sandbox.ts).
const quickjs = await newQuickJSWASMModuleFromVariant(
  newVariant(variant as unknown as QuickJSSyncVariant, {
    wasmModule: (workerData as { wasm: CustomizeVariantOptions["wasmModule"] }).wasm,
  }),
);
let current: ActiveRun | undefined;

port.on("message", (message: HostToWorker) => {
  if (message.type === "run") start(message);
  else if (!current || current.runId !== message.runId) return;
  else if (message.type === "settle") settle(current, message.callId, message.json);
  else finish(current, { ok: false, kind: "aborted", message: "cancelled" });
});
post({ type: "ready" });

function start(message: Extract<HostToWorker, { type: "run" }>): void {
  const runtime = quickjs.newRuntime();
  const flag = new Int32Array(message.interrupt);
  const { memoryBytes, stackBytes, deadline } = message.limits;
  runtime.setMemoryLimit(memoryBytes);
  runtime.setMaxStackSize(stackBytes);
  runtime.setInterruptHandler(() => Atomics.load(flag, 0) !== 0 || Date.now() > deadline);
  const vm = runtime.newContext();
  const run: ActiveRun = {
    runId: message.runId,
    runtime,
    vm,
    calls: new Map(),
    nextCall: 1,
    logBytes: 0,
    deadline,
    flag,
    finished: false,
  };
  current = run;
  vm.newFunction("__kc_call", (kind, name, args) => {
    const callId = run.nextCall++;
    const deferred = vm.newPromise();
    run.calls.set(callId, deferred);
    post({
      type: "call",
      runId: run.runId,
      callId,
      kind: vm.getString(kind) === "search" ? "search" : "tool",
      name: vm.getString(name),
      args: vm.getString(args),
    });
    // The library disposes the returned handle; the deferred's resolvers stay usable.
    return deferred.handle;
  }).consume((fn) => vm.setProp(vm.global, "__kc_call", fn));
  vm.newFunction("__kc_log", (level, text) => {
    const line = vm.getString(text);
    if (run.logBytes > MAX_LOG_BYTES) return;
    run.logBytes += line.length;
    const over = run.logBytes > MAX_LOG_BYTES;
    post({
      type: "log",
      runId: run.runId,
      level: over ? "warn" : (vm.getString(level) as "log"),
      text: over ? "[console output over 1 MB; later lines dropped]" : line,
    });
  }).consume((fn) => vm.setProp(vm.global, "__kc_log", fn));
  vm.newString(JSON.stringify(message.tools)).consume((s) => vm.setProp(vm.global, "__kc_tools", s));
  vm.newString(message.catalogue).consume((s) => vm.setProp(vm.global, "__kc_catalogue", s));

  const prelude = vm.evalCode(PRELUDE, "prelude.js");
  if (prelude.error) {
    const error = prelude.error.consume((e) => vm.dump(e));
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
        started.error.consume((e) => vm.dump(e)),
      ),
    );
    return;
  }
  run.main = started.value;
  drive(run);
}

function settle(run: ActiveRun, callId: number, json: string): void {
  const deferred = run.calls.get(callId);
  if (!deferred) return;
  run.calls.delete(callId);
  run.vm.newString(json).consume((value) => deferred.resolve(value));
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
      jobs.error.consume((e) => run.vm.dump(e)),
    );
  const state = run.vm.getPromiseState(run.main!);
  if (state.type === "fulfilled") {
    const text = state.value.consume((v) => run.vm.getString(v));
    return text === "" ? { ok: true } : { ok: true, json: text };
  }
  if (state.type === "rejected")
    return failure(
      run,
      state.error.consume((e) => run.vm.dump(e)),
    );
  if (run.calls.size > 0 || run.runtime.hasPendingJob()) return undefined;
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
  if (/\binterrupted\b/.test(text)) {
    const kind: RunFailureKind = Atomics.load(run.flag, 0) !== 0 ? "aborted" : "timeout";
    return { ok: false, kind: Date.now() > run.deadline ? "timeout" : kind, message: text };
  }
  if (/out of memory/i.test(text)) return { ok: false, kind: "memory", message: text };
  return { ok: false, kind: "script", message: text };
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
  try {
    for (const deferred of run.calls.values()) deferred.dispose();
    run.calls.clear();
    run.main?.dispose();
    run.vm.dispose();
    run.runtime.dispose();
  } catch {
    // A runtime that cannot be freed cleanly (its memory limit hit mid-allocation) leaves this worker's wasm
    // memory in doubt: report the outcome, then end the worker so the host starts a fresh one.
    post({ type: "done", runId: run.runId, outcome, retire: true });
    process.exit(1);
  }
  post({ type: "done", runId: run.runId, outcome });
}
