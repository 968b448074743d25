/**
 * RPC framing under hostile input, against the built `knightcode --mode rpc` as a child process: every malformed
 * frame gets one error response (with its id when the id is a string) and the process keeps serving; a line over
 * the frame cap is answered without being read whole.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { RPC_MAX_FRAME_BYTES } from "../../../kit.js";
import { cliBin } from "../../helpers/cli.js";
import { RpcProcess } from "../../helpers/rpc-process.js";
import { useTempDir } from "../../helpers/temp-dir.js";

/** A small deterministic generator, so a failing case can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe("RPC framing", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-rpc-frames-");
  const running: RpcProcess[] = [];
  afterEach(() => {
    for (const p of running.splice(0)) p.kill();
  });

  function start(): RpcProcess {
    const script = join(tmp.path, "script.json");
    writeFileSync(script, JSON.stringify({ steps: [] }));
    const child = spawn(
      process.execPath,
      [cliBin, "--mode", "rpc", "--provider", "scripted", "--script", script, "--no-session"],
      { cwd: tmp.path, env: { ...process.env, KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") } },
    );
    const p = new RpcProcess(child);
    running.push(p);
    return p;
  }

  it("answers a type without a usable toString, and other hostile shapes, with errors and keeps serving", async () => {
    const p = start();
    const cases: [string, { id?: string; command: string; error: string | RegExp }][] = [
      ['{"type":{"toString":1}}', { command: "unknown", error: '"type" must be a string naming a command' }],
      [
        '{"id":"t1","type":{"toString":1}}',
        { id: "t1", command: "unknown", error: /"type" must be a string/ },
      ],
      ['{"id":{"toString":1},"type":"get_state"}', { command: "get_state", error: '"id" must be a string' }],
      ['{"id":{"toString":1},"type":{"valueOf":1}}', { command: "unknown", error: '"id" must be a string' }],
      ['{"id":"c","type":"constructor"}', { id: "c", command: "constructor", error: /Unknown command/ }],
      ['{"id":"p","type":"__proto__"}', { id: "p", command: "__proto__", error: /Unknown command/ }],
      [
        '{"id":"h","type":"hasOwnProperty"}',
        { id: "h", command: "hasOwnProperty", error: /Unknown command/ },
      ],
      [
        '{"id":"n","type":"set_thinking_level","level":1e400}',
        { id: "n", command: "set_thinking_level", error: /level/ },
      ],
      [
        '{"id":"m","type":"prompt","message":123456789012345678901234567890}',
        { id: "m", command: "prompt", error: /message/ },
      ],
      ["1e999", { command: "parse", error: "A command must be a JSON object" }],
      ["null", { command: "parse", error: "A command must be a JSON object" }],
      ["[1,2]", { command: "parse", error: "A command must be a JSON object" }],
      ['"get_state"', { command: "parse", error: "A command must be a JSON object" }],
      ["{not json", { command: "parse", error: /Malformed JSON/ }],
      [`${"[".repeat(200_000)}`, { command: "parse", error: /Malformed JSON/ }],
    ];
    for (const [line] of cases) p.send(line);
    // Invalid UTF-8: read as U+FFFD, so the command name no longer matches.
    await p.sendBytes(
      Buffer.concat([
        Buffer.from('{"id":"u","type":"get_'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('state"}\n'),
      ]),
    );
    // Prototype keys are plain data: this get_state is valid and must not touch Object.prototype in the child.
    p.send('{"id":"pp","type":"get_state","__proto__":{"polluted":true},"constructor":{"prototype":1}}');
    const state = await p.response("pp");
    expect(state.success, String(state.error)).to.equal(true);
    const responses = p.records.filter((r) => r.type === "response" && r.id !== "pp");
    expect(responses).to.have.length(cases.length + 1);
    cases.forEach(([line, want], i) => {
      const got = responses[i]!;
      expect(got.success, line.slice(0, 60)).to.equal(false);
      expect(got.command, line.slice(0, 60)).to.equal(want.command);
      expect(got.id, line.slice(0, 60)).to.equal(want.id);
      if (typeof want.error === "string") expect(got.error).to.equal(want.error);
      else expect(String(got.error)).to.match(want.error);
    });
    expect(responses.at(-1)).to.deep.include({ id: "u", success: false });
    expect(String(responses.at(-1)!.error)).to.contain("Unknown command");
    expect(p.stderr).to.equal("");
    expect(await p.end()).to.equal(0);
  });

  it("survives 3,000 fuzzed frames and then answers get_state", async () => {
    const p = start();
    const next = random(20261201);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    const keys = [
      "type",
      "id",
      "__proto__",
      "constructor",
      "prototype",
      "toString",
      "valueOf",
      "message",
      "x",
    ];
    // No `type` here names a command or a dialog answer, so every frame must get exactly one error response.
    const badTypes: unknown[] = [
      { toString: 1 },
      { valueOf: null, toString: null },
      [],
      ["get_state"],
      0,
      -1e308,
      1e308,
      2 ** 70,
      true,
      null,
      "",
      "__proto__",
      "constructor",
      "toString",
      "valueOf",
      "get_state\u0000",
      "\u2028",
    ];
    const value = (depth: number): unknown => {
      const r = next();
      if (depth > 3 || r < 0.3) return pick([0, 1e308, -0, "x", "", true, null, "\uD800", 2 ** 53 + 1]);
      if (r < 0.5) return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
      const object: Record<string, unknown> = {};
      for (let i = 0; i < 3; i++)
        Object.defineProperty(object, pick(keys), {
          value: value(depth + 1),
          enumerable: true,
          configurable: true,
          writable: true,
        });
      return object;
    };
    let sent = 0;
    for (let i = 0; i < 3000; i++) {
      const kind = next();
      let line: Buffer;
      if (kind < 0.4) {
        const frame: Record<string, unknown> = {};
        for (let k = 0; k < 3; k++)
          Object.defineProperty(frame, pick(keys), {
            value: value(0),
            enumerable: true,
            configurable: true,
            writable: true,
          });
        Object.defineProperty(frame, "type", {
          value: pick(badTypes),
          enumerable: true,
          configurable: true,
          writable: true,
        });
        if (next() < 0.5) frame.id = pick(["a", { toString: 1 }, 7, null, "__proto__"]);
        line = Buffer.from(JSON.stringify(frame));
      } else if (kind < 0.6) {
        line = Buffer.from(JSON.stringify(value(0)) ?? "undefined");
        // A JSON object without a string `type` is an error too; keep the frame from being blank.
      } else {
        // Random bytes, no LF, starting with a printable byte so the line is not blank.
        const bytes = Buffer.alloc(1 + Math.floor(next() * 200));
        for (let b = 0; b < bytes.length; b++) {
          let byte = Math.floor(next() * 256);
          if (byte === 10) byte = 11;
          bytes[b] = byte;
        }
        bytes[0] = 0x7b;
        line = bytes;
      }
      await p.sendBytes(Buffer.concat([line, Buffer.from("\n")]));
      sent++;
    }
    const state = await p.request("alive", "get_state");
    expect(state.success).to.equal(true);
    const errors = p.records.filter((r) => r.type === "response" && r.id !== "alive");
    expect(errors).to.have.length(sent);
    expect(errors.every((r) => r.success === false)).to.equal(true);
    expect(await p.end()).to.equal(0);
  });

  it("answers a line over the frame cap with an error, without reading it whole, and serves the next command", async () => {
    const p = start();
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    await p.sendBytes('{"id":"big","type":"prompt","message":"');
    for (let sent = 0; sent <= RPC_MAX_FRAME_BYTES + chunk.length; sent += chunk.length)
      await p.sendBytes(chunk);
    await p.sendBytes('"}\n');
    const after = await p.request("after", "get_state");
    expect(after.success).to.equal(true);
    const tooLong = p.records.find((r) => r.type === "response" && r.command === "parse");
    expect(tooLong, "the over-long line was answered").to.not.equal(undefined);
    expect(tooLong!.success).to.equal(false);
    expect(String(tooLong!.error)).to.match(
      /^Line too long: \d+ bytes; a line may have at most 16777216 bytes/,
    );
    expect(p.records.indexOf(tooLong!)).to.be.below(p.records.indexOf(after));
    expect(await p.end()).to.equal(0);
  });
});
