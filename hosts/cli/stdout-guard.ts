/**
 * Stdout belongs to the mode. While a session runs, anything else that writes to `process.stdout` (an extension's
 * `console.log`, a library's progress output) goes to stderr instead, so the JSON and RPC streams carry only their
 * records and a print run's answer stays clean for a pipe. The mode writes through the stream this returns.
 */
import { Writable } from "node:stream";

export interface StdoutGuard {
  /** The real stdout, for the mode. */
  readonly stdout: NodeJS.WritableStream;
  /** Gives `process.stdout.write` back. */
  restore(): void;
  /** Settles once everything written to `stdout` so far has been handed to the real stdout (or failed). */
  flush(): Promise<void>;
}

export function guardStdout(): StdoutGuard {
  const real = process.stdout;
  const write = real.write;
  const stdout = new Writable({
    write(chunk: Buffer | string, encoding: BufferEncoding, callback: (error?: Error | null) => void) {
      write.call(real, chunk, encoding, callback);
    },
  });
  // A failed write (EPIPE when the reader left) is reported by process.stdout itself, which the CLI watches.
  stdout.on("error", () => {});
  real.write = ((chunk: Uint8Array | string, ...rest: unknown[]) =>
    (process.stderr.write as (c: Uint8Array | string, ...r: unknown[]) => boolean)(
      chunk,
      ...rest,
    )) as typeof real.write;
  return {
    stdout,
    restore: () => {
      real.write = write;
    },
    flush: () => new Promise<void>((resolve) => stdout.write("", () => resolve())),
  };
}
