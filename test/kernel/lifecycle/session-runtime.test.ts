/**
 * Session runtimes with real extension files: factories per session, isolation between sessions, reload without
 * leftovers, startup refusal, broken extensions reported while the rest load.
 */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { packageModules } from "../../../hosts/sdk/package-modules.js";
import type { ExtensionAPI, ExtensionContext } from "../../../kernel/api/index.js";
import { definePlugin } from "../../../kernel/container/container.js";
import { coreTokens } from "../../../kernel/container/core-tokens.js";
import {
  ExtensionStartupError,
  SessionStartupFailedError,
  StaleContextError,
} from "../../../kernel/errors.js";
import { createKernel, type Kernel } from "../../../kernel/kernel.js";
import type { ExtensionErrorReport, SessionRuntime } from "../../../kernel/lifecycle/session-runtime.js";
import { CommandRegistry } from "../../../plugins/command-registry/command-registry.js";
import { FlagRegistry } from "../../../plugins/flag-registry/flag-registry.js";
import { ensureNoDisposablesLeaked } from "../../helpers/leak-check.js";
import { useTempDir } from "../../helpers/temp-dir.js";

/** An extension that keeps per-factory state in its closure and exposes it through a command and an event. */
const COUNTER_EXTENSION = `
import type { ExtensionAPI } from "@knightcodeai/cli";
let moduleEvaluations = (globalThis as any).__kcModuleEvaluations = ((globalThis as any).__kcModuleEvaluations ?? 0) + 1;
export default function (kc: ExtensionAPI) {
  let count = 0;
  kc.registerCommand("count", { description: "count", handler: async () => { count++; } });
  kc.on("agent_start", () => { count++; });
  kc.events.on("ping", (data) => { (globalThis as any).__kcPings.push({ data, count }); });
  (globalThis as any).__kcApis.push({ kc, get count() { return count; } });
}
`;

describe("session runtime", () => {
  const tmp = useTempDir("kc-runtime-");
  let kernel: Kernel;
  let runtimes: SessionRuntime[] = [];
  let errors: ExtensionErrorReport[] = [];
  const g = globalThis as unknown as {
    __kcApis: { kc: ExtensionAPI; count: number }[];
    __kcPings: unknown[];
  };

  beforeEach(async () => {
    g.__kcApis = [];
    g.__kcPings = [];
    errors = [];
    kernel = createKernel({
      plugins: [
        definePlugin({
          id: "test:commands",
          provides: coreTokens.commands,
          create: () => new CommandRegistry(),
        }),
        definePlugin({ id: "test:flags", provides: coreTokens.flags, create: () => new FlagRegistry() }),
      ],
      cacheDir: join(tmp.path, "cache"),
      virtualModules: packageModules,
    });
  });

  afterEach(async () => {
    for (const runtime of runtimes) await runtime.shutdown();
    runtimes = [];
    await kernel.dispose();
  });
  // Registered after the shutdown hook, so it checks what the shutdown left behind.
  ensureNoDisposablesLeaked();

  async function open(sources: { path?: string; factory?: (kc: ExtensionAPI) => unknown; name?: string }[]) {
    const result = await kernel.createSession({
      sources: sources.map((s) => ({ origin: s.factory ? "sdk" : "cli", ...s }) as never),
      cwd: tmp.path,
      mode: "sdk",
      onExtensionError: (report) => errors.push(report),
    });
    runtimes.push(result.runtime);
    return result;
  }

  const commands = (runtime: SessionRuntime) =>
    runtime.scope.resolve(coreTokens.commands) as unknown as CommandRegistry;

  it("stops a start whose factory does not finish within factoryTimeoutMs; on reload it is only reported", async () => {
    const slow = () => new Promise((resolve) => setTimeout(resolve, 5_000).unref());
    const start = kernel.createSession({
      sources: [{ origin: "sdk", name: "slow", factory: slow }],
      cwd: tmp.path,
      mode: "sdk",
      factoryTimeoutMs: () => 100,
      onExtensionError: (report) => errors.push(report),
    });
    const error = await start.then(
      () => undefined,
      (e: unknown) => e as Error & { code?: string },
    );
    expect(error?.code).to.equal("KC_ERR_EXTENSION_LOAD");
    expect(error?.message).to.equal(
      "Extension sdk:slow failed to load: it never finished loading: its factory's promise did not settle " +
        "within 0.1 s (setting extensionLoad.timeoutMs)",
    );

    // A factory that hangs only the second time: the reload goes on without it, reporting why.
    let calls = 0;
    const result = await kernel.createSession({
      sources: [{ origin: "sdk", name: "second", factory: () => (++calls === 1 ? undefined : slow()) }],
      cwd: tmp.path,
      mode: "sdk",
      factoryTimeoutMs: () => 100,
      onExtensionError: (report) => errors.push(report),
    });
    runtimes.push(result.runtime);
    await result.runtime.reload();
    expect(result.runtime.state).to.equal("ready");
    expect(result.runtime.loadFailures.map((f) => f.message)).to.deep.equal([
      "Extension sdk:second failed to load: it never finished loading: its factory's promise did not settle " +
        "within 0.1 s (setting extensionLoad.timeoutMs)",
    ]);
  });

  it("calls every factory once per session, so closure state is never shared", async () => {
    const file = tmp.write("counter.ts", COUNTER_EXTENSION);
    const a = await open([{ path: file }]);
    const b = await open([{ path: file }]);
    expect(g.__kcApis).to.have.length(2);
    await a.runtime.bus.emit("agent_start", {}, a.runtime.context());
    await a.runtime.bus.emit("agent_start", {}, a.runtime.context());
    await b.runtime.bus.emit("agent_start", {}, b.runtime.context());
    expect(g.__kcApis.map((x) => x.count)).to.deep.equal([2, 1]);
    // The module itself was evaluated once: evaluation is shared, factories are not.
    expect(
      (globalThis as unknown as { __kcModuleEvaluations: number }).__kcModuleEvaluations,
    ).to.be.greaterThan(0);
    expect(g.__kcApis[0]!.kc).not.to.equal(g.__kcApis[1]!.kc);
  });

  it("never lets an action through one session's API reach the other session", async () => {
    const file = tmp.write("counter.ts", COUNTER_EXTENSION);
    const a = await open([{ path: file }]);
    const b = await open([{ path: file }]);
    const [apiA] = g.__kcApis;
    apiA!.kc.registerCommand("only-in-a", { handler: () => {} });
    apiA!.kc.events.emit("ping", "from a");
    expect(commands(a.runtime).get("only-in-a")).to.not.equal(undefined);
    expect(commands(b.runtime).get("only-in-a")).to.equal(undefined);
    expect(g.__kcPings).to.deep.equal([{ data: "from a", count: 0 }]);
    expect(commands(a.runtime)).not.to.equal(commands(b.runtime));
  });

  it("leaves no handler or registration behind after reload, and makes the old API and ctx stale", async () => {
    const file = tmp.write("counter.ts", COUNTER_EXTENSION);
    const { runtime } = await open([{ path: file }]);
    const handlersBefore = runtime.bus.count();
    const registrationsBefore = runtime.liveRegistrations();
    const oldCtx = runtime.context();
    const oldApi = g.__kcApis[0]!.kc;
    await runtime.reload();
    await runtime.reload();
    expect(g.__kcApis).to.have.length(3);
    expect(runtime.bus.count()).to.equal(handlersBefore);
    expect(runtime.liveRegistrations()).to.equal(registrationsBefore);
    expect(
      commands(runtime)
        .getCommands()
        .map((c) => c.name),
    ).to.deep.equal(["count"]);
    expect(() => oldApi.registerCommand("x", { handler: () => {} })).to.throw(StaleContextError);
    expect(() => oldApi.on("agent_start", () => {})).to.throw(/reloaded, replaced or shut down/);
    expect(() => oldCtx.cwd).to.throw(StaleContextError);
    expect(runtime.context().cwd).to.equal(tmp.path);
  });

  it("re-imports edited extension files on reload", async () => {
    const file = tmp.write(
      "edit.ts",
      `export default (kc: any) => kc.registerCommand("before", { handler() {} });`,
    );
    const { runtime } = await open([{ path: file }]);
    writeFileSync(file, `export default (kc: any) => kc.registerCommand("after", { handler() {} });`);
    await runtime.reload();
    expect(
      commands(runtime)
        .getCommands()
        .map((c) => c.name),
    ).to.deep.equal(["after"]);
  });

  it("emits session_start and session_shutdown with their reasons, and shutdown is idempotent", async () => {
    const events: string[] = [];
    const { runtime } = await open([
      {
        name: "lifecycle",
        factory: (kc) => {
          kc.on("session_start", (e) => void events.push(`start:${e.reason}`));
          kc.on("session_shutdown", (e) => void events.push(`shutdown:${e.reason}`));
        },
      },
    ]);
    await runtime.reload();
    await runtime.shutdown();
    await runtime.shutdown();
    expect(events).to.deep.equal(["start:startup", "shutdown:reload", "start:reload", "shutdown:quit"]);
    expect(runtime.state).to.equal("disposed");
  });

  it("awaits an async factory before startup continues", async () => {
    const file = tmp.write(
      "async.ts",
      `export default async function (kc: any) {
        await new Promise((resolve) => setTimeout(resolve, 30));
        kc.registerCommand("late", { handler() {} });
      }`,
    );
    const { runtime } = await open([{ path: file }]);
    expect(commands(runtime).get("late")).to.not.equal(undefined);
  });

  it("reports a broken extension with its file and reason and still loads the others", async () => {
    const good = tmp.write(
      "good.ts",
      `export default (kc: any) => kc.registerCommand("good", { handler() {} });`,
    );
    const broken = tmp.write("broken.ts", `export default function (kc) { const = 1 }`);
    const throwing = tmp.write(
      "throwing.ts",
      `export default (kc: any) => { kc.registerCommand("half", { handler() {} }); throw new Error("factory failed"); };`,
    );
    const after = tmp.write(
      "after.ts",
      `export default (kc: any) => kc.registerCommand("after", { handler() {} });`,
    );
    const { runtime, failures } = await open([
      { path: good },
      { path: broken },
      { path: throwing },
      { path: after },
    ]);
    expect(failures.map((f) => f.path)).to.deep.equal([broken]);
    expect(failures[0]!.error.message).to.contain(broken);
    expect(runtime.loadFailures.map((f) => f.extension)).to.deep.equal([broken, throwing]);
    expect(runtime.loadFailures[1]!.message).to.contain("factory failed");
    // The throwing factory's half-done registration was removed.
    expect(
      commands(runtime)
        .getCommands()
        .map((c) => c.name),
    ).to.deep.equal(["good", "after"]);
    expect(runtime.extensionInfos.map((i) => i.path)).to.deep.equal([good, after]);
    expect(errors.map((e) => e.event)).to.deep.equal(["load", "load"]);
  });

  it("keeps a session that an extension refused unable to prompt until a successful reload", async () => {
    const flag = join(tmp.path, "refuse");
    writeFileSync(flag, "");
    const file = tmp.write(
      "guard.ts",
      `import { ExtensionStartupError } from "@knightcodeai/cli";
       import { existsSync } from "node:fs";
       export default function (kc: any) {
         kc.on("session_start", () => {
           if (existsSync(${JSON.stringify(flag)})) throw new ExtensionStartupError("unsafe workspace");
         });
       }`,
    );
    const { runtime } = await open([{ path: file }]);
    expect(runtime.startupFailure?.message).to.contain("unsafe workspace");
    expect(runtime.startupFailure?.message).to.contain(file);
    expect(() => runtime.assertCanPrompt()).to.throw(SessionStartupFailedError, /cannot prompt/);
    let reloadError: unknown;
    await runtime.reload().catch((e: unknown) => {
      reloadError = e;
    });
    expect(String(reloadError)).to.contain("unsafe workspace");
    expect(() => runtime.assertCanPrompt()).to.throw(SessionStartupFailedError);
    const { rmSync } = await import("node:fs");
    rmSync(flag);
    await runtime.reload();
    expect(runtime.startupFailure).to.equal(undefined);
    expect(() => runtime.assertCanPrompt()).not.to.throw();
  });

  it("recognises the package's ExtensionStartupError class thrown by an inline extension", async () => {
    const { runtime } = await open([
      {
        name: "inline",
        factory: (kc) => {
          kc.on("session_start", () => {
            throw new ExtensionStartupError("no");
          });
        },
      },
    ]);
    expect(runtime.startupFailure).to.not.equal(undefined);
  });

  it("turns a throwing handler into an extension_error event naming the extension and the event", async () => {
    const seen: unknown[] = [];
    const file = tmp.write(
      "throws.ts",
      `export default (kc: any) => kc.on("agent_start", () => { throw new Error("handler broke"); });`,
    );
    const { runtime } = await open([
      { name: "watcher", factory: (kc) => void kc.on("extension_error", (e) => void seen.push(e)) },
      { path: file },
    ]);
    await runtime.bus.emit("agent_start", {}, runtime.context());
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).to.deep.equal([{ extensionPath: file, event: "agent_start", error: "handler broke" }]);
    expect(errors.map((e) => `${e.extension}|${e.event}`)).to.deep.equal([`cli:${file}|agent_start`]);
  });

  it("allows load-only registrations only while the factory runs", async () => {
    let api: ExtensionAPI | undefined;
    await open([
      {
        name: "flags",
        factory: (kc) => {
          api = kc;
          kc.registerFlag("dry-run", { type: "boolean", default: false });
        },
      },
    ]);
    expect(api!.getFlag("dry-run")).to.equal(false);
    expect(() => api!.registerFlag("later", { type: "boolean" })).to.throw(
      /only allowed while the extension factory runs/,
    );
  });

  it("names the missing service when an API method has no plugin behind it", async () => {
    let api: ExtensionAPI | undefined;
    await open([
      {
        name: "tools",
        factory: (kc) => {
          api = kc;
        },
      },
    ]);
    expect(() => api!.registerTool({} as never)).to.throw(/registerTool\(\) needs token\{core\.tools\}/);
  });

  it("gives handlers a fallback ctx with the session's cwd and mode when no context plugin exists", async () => {
    let ctx: ExtensionContext | undefined;
    await open([
      {
        name: "ctx",
        factory: (kc) => {
          kc.on("session_start", (_e, c) => {
            ctx = c;
          });
        },
      },
    ]);
    expect(ctx!.cwd).to.equal(tmp.path);
    expect(ctx!.mode).to.equal("sdk");
    expect(ctx!.hasUI).to.equal(false);
    expect(() => ctx!.ui).to.throw(/ctx\.ui needs a context plugin \(core\.context\)/);
  });
});
