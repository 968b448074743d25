/** A `knightcode --mode rpc` child process: send lines, wait for records (bounded), end its input. */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";

export type Record_ = {
  type: string;
  id?: string;
  command?: string;
  success?: boolean;
  [k: string]: unknown;
};

export class RpcProcess {
  readonly records: Record_[] = [];
  stderr = "";
  private buffer = "";
  private readonly exited: Promise<number | null>;
  constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      this.buffer += chunk;
      let i = this.buffer.indexOf("\n");
      while (i >= 0) {
        this.records.push(JSON.parse(this.buffer.slice(0, i)));
        this.buffer = this.buffer.slice(i + 1);
        i = this.buffer.indexOf("\n");
      }
    });
    child.stderr.on("data", (d) => {
      this.stderr += d;
    });
    this.exited = new Promise((resolve) => child.on("close", (code) => resolve(code)));
  }
  send(record: unknown): void {
    this.child.stdin.write(`${typeof record === "string" ? record : JSON.stringify(record)}\n`);
  }
  async waitFor(predicate: (r: Record_) => boolean, timeoutMs = 15_000): Promise<Record_> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.records.find(predicate);
      if (found) return found;
      if (Date.now() > deadline) {
        throw new Error(`timed out; got ${this.records.map((r) => r.type).join(",")}\n${this.stderr}`);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  response(id: string, timeoutMs?: number): Promise<Record_> {
    return this.waitFor((r) => r.type === "response" && r.id === id, timeoutMs);
  }
  async request(
    id: string,
    type: string,
    params: Record<string, unknown> = {},
    timeoutMs?: number,
  ): Promise<Record_> {
    this.send({ id, type, ...params });
    return this.response(id, timeoutMs);
  }
  /** Writes raw bytes (not valid UTF-8, or a huge line) and waits while the pipe is full. */
  async sendBytes(bytes: Buffer | string): Promise<void> {
    if (!this.child.stdin.write(bytes)) await once(this.child.stdin, "drain");
  }
  /** Waits for the process to end by itself, stdin left open; -1 when it is still running after `ms`. */
  async exit(ms = 15_000): Promise<number | null> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<number>((resolve) => {
      timer = setTimeout(() => resolve(-1), ms);
    });
    const code = await Promise.race([this.exited, late]);
    clearTimeout(timer);
    return code;
  }
  async end(timeoutMs = 15_000): Promise<number | null> {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), timeoutMs);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }
  kill(): void {
    if (this.child.exitCode === null) this.child.kill("SIGKILL");
  }
}
