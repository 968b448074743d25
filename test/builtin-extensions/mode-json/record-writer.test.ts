/**
 * builtin:mode-json's RecordWriter: what JSON mode holds for a reader slower than the model. A 4 MB tool-call
 * argument streamed in 4-byte deltas queued over a million records (1.1 GB peak) behind a slow pipe.
 */
import { Writable } from "node:stream";
import { expect } from "chai";
import { type JsonRecord, RecordWriter } from "../../../builtin-extensions/mode-json/record-writer.js";

/** A stdout whose reader takes each write only when `release()` is called. */
function slowStdout() {
  const lines: string[] = [];
  const pending: Array<() => void> = [];
  const out = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
      pending.push(() => callback());
    },
  });
  return {
    out,
    records: () => lines.map((line) => JSON.parse(line) as JsonRecord),
    /** Lets the reader take everything, until nothing more is written. */
    async drainAll() {
      for (let rounds = 0; rounds < 10_000 && pending.length > 0; rounds++) {
        for (const done of pending.splice(0)) done();
        await new Promise((resolve) => setImmediate(resolve));
      }
    },
  };
}

const usage = (output: number) => ({ input: 1, output });
const delta = (type: string, contentIndex: number, text: string, output: number): JsonRecord => ({
  type: "message_update",
  usage: usage(output),
  assistantMessageEvent: { type, contentIndex, delta: text },
});

describe("builtin:mode-json RecordWriter", () => {
  it("merges the deltas of one block while stdout has not drained, keeping order and the latest usage", async () => {
    const stdout = slowStdout();
    const writer = new RecordWriter(stdout.out);
    const args = JSON.stringify({ path: "big.txt", content: "x".repeat(40_000) });
    writer.write({ type: "message_start", message: { role: "assistant" } });
    const pieces: string[] = [];
    for (let at = 0; at < args.length; at += 4) pieces.push(args.slice(at, at + 4));
    for (const [n, piece] of pieces.entries()) writer.write(delta("toolcall_delta", 0, piece, n + 1));
    writer.write(delta("text_delta", 1, "after", pieces.length + 1));
    writer.write({ type: "message_end", message: { role: "assistant" } });
    const flushed = writer.flushed();
    await stdout.drainAll();
    await flushed;

    const records = stdout.records();
    expect(records.length, "one record per delta would be over 10,000").to.be.lessThan(20);
    expect(records[0]!.type).to.equal("message_start");
    expect(records.at(-1)!.type).to.equal("message_end");
    const updates = records.filter((r) => r.type === "message_update") as unknown as Array<{
      usage: unknown;
      assistantMessageEvent: { type: string; contentIndex: number; delta: string };
    }>;
    const toolDeltas = updates.filter((u) => u.assistantMessageEvent.type === "toolcall_delta");
    expect(toolDeltas.map((u) => u.assistantMessageEvent.delta).join("")).to.equal(args);
    expect(toolDeltas.at(-1)!.usage).to.deep.equal(usage(pieces.length));
    expect(updates.at(-1)!.assistantMessageEvent).to.deep.equal({
      type: "text_delta",
      contentIndex: 1,
      delta: "after",
    });
    for (const update of updates)
      expect(Object.keys(update)).to.deep.equal(["type", "usage", "assistantMessageEvent"]);
  });

  it("writes one record per delta while the reader keeps up", async () => {
    const lines: string[] = [];
    const out = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(chunk.toString("utf8"));
        callback();
      },
    });
    const writer = new RecordWriter(out);
    for (let n = 0; n < 5; n++) {
      writer.write(delta("text_delta", 0, `p${n}`, n));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await writer.flushed();
    expect(lines.map((line) => (JSON.parse(line) as any).assistantMessageEvent.delta)).to.deep.equal([
      "p0",
      "p1",
      "p2",
      "p3",
      "p4",
    ]);
  });

  it("merges a burst of deltas past a block's first 64 although the reader keeps up", async () => {
    const lines: string[] = [];
    const out = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        lines.push(chunk.toString("utf8"));
        callback();
      },
    });
    const writer = new RecordWriter(out);
    for (let n = 0; n < 1000; n++) writer.write(delta("toolcall_delta", 0, "abcd", n));
    writer.write({ type: "turn_end" });
    for (let n = 0; n < 3; n++) writer.write(delta("text_delta", 1, `t${n}`, 1000 + n));
    await new Promise((resolve) => setImmediate(resolve));
    for (let n = 0; n < 100; n++) writer.write(delta("toolcall_delta", 0, "efgh", 2000 + n));
    await new Promise((resolve) => setImmediate(resolve));
    writer.write(delta("toolcall_delta", 0, "late", 3000));
    await writer.flushed();
    const records = lines.map((line) => JSON.parse(line) as any);
    expect(records.map((r) => r.assistantMessageEvent?.delta ?? r.type)).to.deep.equal([
      ...Array(64).fill("abcd"),
      "abcd".repeat(936),
      "turn_end",
      "t0",
      "t1",
      "t2",
      ...Array(64).fill("efgh"),
      "efgh".repeat(36),
      "late",
    ]);
    expect(records[64].usage.output).to.equal(999);
    expect(records.at(-2).usage.output).to.equal(2099);
  });

  it("settles flushed() and drops the queue when the reader goes away", async () => {
    const out = new Writable({ highWaterMark: 16, write: () => {} });
    const writer = new RecordWriter(out);
    for (let n = 0; n < 10; n++) writer.write({ type: "turn_start" });
    const flushed = writer.flushed();
    out.destroy(new Error("EPIPE"));
    await flushed;
  });
});
