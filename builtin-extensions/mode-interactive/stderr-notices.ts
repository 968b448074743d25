/**
 * What is written to stderr while the terminal UI runs (the host's warnings, MCP servers', a provider's "still
 * waiting" notice, an extension's console.error) would land on top of the frame, cut at the pane's edge, and be
 * overdrawn by the next frame. While the UI owns the terminal, stderr lines become notices in the transcript,
 * wrapped to the width like any other. A stderr that is not the terminal (`2>log`) keeps getting them.
 */

import type { Terminal } from "@knightcodeai/cli/tui";

/**
 * The CLI sends what is written to `process.stdout` to stderr while a session runs (stdout belongs to the mode),
 * and pi-tui's terminal writes to `process.stdout`: so the UI's own output reaches stderr too. Writes made while
 * the terminal is at work pass, as do control sequences it writes from its own input handlers.
 */
let passing = 0;

/** The terminal, its writes let through to the screen. */
export function passThrough(terminal: Terminal): Terminal {
  return new Proxy(terminal, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        passing++;
        try {
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        } finally {
          passing--;
        }
      };
    },
  });
}

/** Sends each whole line written to stderr to `show`; the returned function puts stderr back. */
export function stderrToNotices(show: (line: string) => void): () => void {
  const stream = process.stderr;
  if (!stream.isTTY) return () => {};
  const original = stream.write;
  let pending = "";
  stream.write = function (this: NodeJS.WriteStream, chunk: unknown, ...rest: unknown[]): boolean {
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk as Uint8Array).toString("utf8");
    if (passing > 0 || (pending === "" && text.startsWith("\x1b")))
      return (original as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    pending += text;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      // The host's own prefix says where it comes from on a shared stderr; in the UI it is noise.
      const text = line.replace(/^knightcode: /, "").trimEnd();
      if (text) show(text);
    }
    const done = rest.find((r): r is (error?: Error | null) => void => typeof r === "function");
    if (done) process.nextTick(done);
    return true;
  } as typeof stream.write;
  return () => {
    stream.write = original;
    if (pending) original.call(stream, pending);
  };
}
