/** `runUserBash`: the user_bash gate on a real hook bus, then operations, a handler's result, or a local shell. */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import {
  type BashOperations,
  type ExtensionContext,
  HookBus,
  type UserBashEvent,
} from "../../../kernel/index.js";
import { runUserBash } from "../../../plugins/process/user-bash.js";

const owner = (id: string, order = 0) => ({ id, order, origin: "user" as const });
const ctx = {} as ExtensionContext;

describe("user bash (runUserBash)", () => {
  let dir: string;
  let bus: HookBus;
  let reported: unknown[];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "kc-user-bash-"));
    reported = [];
    bus = new HookBus({ onHandlerError: (report) => reported.push(report.error) });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const marker = () => join(dir, "ran");
  const command = () => `touch ${marker()}; echo out; echo err >&2; exit 4`;

  it("runs locally without a handler, streaming the merged output", async () => {
    const chunks: string[] = [];
    const result = await runUserBash({
      bus,
      ctx,
      cwd: dir,
      command: `${command().replace(marker(), "ran")}`,
      excludeFromContext: false,
      onData: (c) => chunks.push(c),
    });
    expect(result).to.deep.equal({ output: "out\nerr\n", exitCode: 4, cancelled: false, truncated: false });
    expect(chunks.join("")).to.equal("out\nerr\n");
    expect(existsSync(marker())).to.equal(true);
  });

  it("runs locally when every handler passes, and hands handlers the command", async () => {
    const seen: UserBashEvent[] = [];
    bus.on(
      "user_bash",
      (event: UserBashEvent) => {
        seen.push(event);
        return undefined;
      },
      owner("user:watcher"),
    );
    bus.on("user_bash", () => ({ unrelated: true }), owner("user:odd", 1));
    const result = await runUserBash({ bus, ctx, cwd: dir, command: command(), excludeFromContext: true });
    expect(result.exitCode).to.equal(4);
    expect(seen).to.deep.equal([{ command: command(), excludeFromContext: true, cwd: dir }]);
    expect(existsSync(marker())).to.equal(true);
  });

  it("returns a handler's result without running the command", async () => {
    bus.on(
      "user_bash",
      () => ({ result: { output: "from handler", exitCode: 0, cancelled: false, truncated: false } }),
      owner("user:answer"),
    );
    const result = await runUserBash({ bus, ctx, cwd: dir, command: command(), excludeFromContext: false });
    expect(result).to.deep.equal({ output: "from handler", exitCode: 0, cancelled: false, truncated: false });
    expect(existsSync(marker())).to.equal(false);
  });

  it("runs the command through a handler's operations", async () => {
    const calls: { command: string; cwd: string; signal?: AbortSignal }[] = [];
    const operations: BashOperations = {
      async exec(cmd, cwd, options) {
        calls.push({ command: cmd, cwd, ...(options.signal ? { signal: options.signal } : {}) });
        options.onData("remote ");
        await new Promise((r) => setTimeout(r, 10));
        options.onData("output\n");
        return { exitCode: 7 };
      },
    };
    bus.on("user_bash", () => ({ operations }), owner("user:remote"));
    const controller = new AbortController();
    const chunks: string[] = [];
    const result = await runUserBash({
      bus,
      ctx,
      cwd: dir,
      command: command(),
      excludeFromContext: false,
      onData: (c) => chunks.push(c),
      signal: controller.signal,
    });
    expect(result).to.deep.equal({
      output: "remote output\n",
      exitCode: 7,
      cancelled: false,
      truncated: false,
    });
    expect(chunks).to.deep.equal(["remote ", "output\n"]);
    expect(calls).to.have.length(1);
    expect(calls[0]).to.include({ command: command(), cwd: dir, signal: controller.signal });
    expect(existsSync(marker())).to.equal(false);
  });

  it("keeps the operations' output bounded and spills the full output to a file", async () => {
    const line = `${"x".repeat(99)}\n`;
    bus.on(
      "user_bash",
      () => ({
        operations: {
          async exec(_cmd: string, _cwd: string, options: { onData(chunk: string): void }) {
            for (let i = 0; i < 3000; i++) options.onData(line);
            return { exitCode: 0 };
          },
        },
      }),
      owner("user:remote"),
    );
    const result = await runUserBash({ bus, ctx, cwd: dir, command: "big", excludeFromContext: false });
    try {
      expect(result.truncated).to.equal(true);
      expect(Buffer.byteLength(result.output)).to.be.at.most(50 * 1024);
      expect(readFileSync(result.fullOutputPath!, "utf8")).to.equal(line.repeat(3000));
    } finally {
      if (result.fullOutputPath) rmSync(result.fullOutputPath, { force: true });
    }
  });

  it("blocks the command when a handler throws: it does not run, and the result says who and why", async () => {
    bus.on(
      "user_bash",
      () => {
        throw new Error("policy says no");
      },
      owner("user:/ext/guard.ts"),
    );
    bus.on("user_bash", () => undefined, owner("user:later", 1));
    const result = await runUserBash({ bus, ctx, cwd: dir, command: command(), excludeFromContext: false });
    expect(result.cancelled).to.equal(true);
    expect(result.exitCode).to.equal(null);
    expect(result.output).to.include("user:/ext/guard.ts").and.to.include("policy says no");
    expect(existsSync(marker())).to.equal(false);
    expect(reported).to.have.length(1);
  });

  it("reports an aborted local command as cancelled", async () => {
    // Aborted once the first line is out, however long the shell took to start on a loaded machine.
    const controller = new AbortController();
    const started = Date.now();
    const result = await runUserBash({
      bus,
      ctx,
      cwd: dir,
      command: "echo begin; sleep 30",
      excludeFromContext: false,
      signal: controller.signal,
      onData: (chunk) => {
        if (chunk.includes("begin")) controller.abort();
      },
    });
    expect(Date.now() - started).to.be.below(5_000);
    expect(result).to.include({ cancelled: true, exitCode: null, output: "begin\n" });
  });

  it("reports an operations exec that fails or is aborted", async () => {
    bus.on(
      "user_bash",
      () => ({
        operations: {
          async exec(_cmd: string, _cwd: string, options: { onData(chunk: string): void }) {
            options.onData("partial");
            throw new Error("connection lost");
          },
        },
      }),
      owner("user:remote"),
    );
    const failed = await runUserBash({ bus, ctx, cwd: dir, command: "x", excludeFromContext: false });
    expect(failed).to.include({ cancelled: false, exitCode: null });
    expect(failed.output).to.equal("partial\nCommand failed: connection lost");
    const controller = new AbortController();
    controller.abort();
    const aborted = await runUserBash({
      bus,
      ctx,
      cwd: dir,
      command: "x",
      excludeFromContext: false,
      signal: controller.signal,
    });
    expect(aborted).to.include({ cancelled: true, output: "partial" });
  });
});
