/**
 * The interactive mode's cost per streamed token with a long transcript: a real session resumed from a file of
 * 2,000 messages (user prompts, answers with tool calls, tool results; bench/session-resume.bench.ts writes it),
 * drawn by the mode's App on a terminal of 120×40 that counts what is written to it. Then an answer streams 1,000
 * tokens of markdown (prose, a list, a code block) and each token is one frame. Prints the frame time per token
 * (median, p95, max; and CPU time, which a busy machine inflates less) and the bytes written per token, against the
 * bytes of one full redraw: differential rendering rewrites the changed lines of the last message, not the screen
 * or the transcript. A 20-message transcript runs first, for comparison.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Terminal } from "@mariozechner/pi-tui";
import { App } from "../builtin-extensions/mode-interactive/app.js";
import { createAgentSession } from "../hosts/sdk/create-agent-session.js";
import { writeBenchSession } from "./session-resume.bench.js";

const MESSAGES = 2_000;
const TOKENS = 1_000;

/** A terminal that draws nothing and counts the bytes it is sent. */
class CountingTerminal implements Terminal {
  bytes = 0;
  constructor(
    readonly columns: number,
    readonly rows: number,
  ) {}
  start(): void {}
  stop(): void {}
  async drainInput(): Promise<void> {}
  write(data: string): void {
    this.bytes += Buffer.byteLength(data);
  }
  get kittyProtocolActive(): boolean {
    return false;
  }
  moveBy(): void {}
  hideCursor(): void {}
  showCursor(): void {}
  clearLine(): void {}
  clearFromCursor(): void {}
  clearScreen(): void {}
  setTitle(): void {}
  setProgress(): void {}
}

/** The answer's tokens: about four characters each, as a tokenizer cuts English. */
function answerTokens(): string[] {
  const paragraph =
    "The change touches the session store and the renderer, so both get a test. Streaming keeps the frame small. ";
  const text = [
    paragraph.repeat(6),
    "\n\n- first, read the file\n- then, edit it\n- last, run the tests\n\n",
    "```ts\nexport function frame(lines: string[]): string {\n  return lines.join('\\n');\n}\n```\n\n",
    paragraph.repeat(30),
  ].join("");
  return (text.match(/[\s\S]{1,4}/g) ?? []).slice(0, TOKENS);
}

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * q))]!;

export async function tuiBench(): Promise<void> {
  // A short transcript first: the difference to the long one is what the 2,000 messages cost each frame.
  for (const messages of [20, MESSAGES]) await streamInto(messages);
}

async function streamInto(messages: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "kc-bench-tui-"));
  const agentDir = join(dir, "agent");
  const cwd = join(dir, "project");
  mkdirSync(cwd, { recursive: true });
  const file = writeBenchSession(agentDir, cwd, messages, false);
  const session = await createAgentSession({ cwd, agentDir, session: { path: file }, warn: () => {} });
  const terminal = new CountingTerminal(120, 40);
  const app = new App(session, terminal);
  // draw() is what the renderer's 16 ms frame timer calls; calling it directly times one frame without the wait.
  const frame = () => app.tui.draw();
  try {
    const builtAt = performance.now();
    app.showHistory();
    frame();
    const firstMs = performance.now() - builtAt;
    const fullBytes = terminal.bytes;
    const transcriptLines = app.tui.render(terminal.columns).length;

    app.onEvent({ type: "message_start", message: { role: "assistant", content: [] } });
    frame();
    const times: number[] = [];
    const bytes: number[] = [];
    const redrawsBefore = app.tui.fullRedraws;
    const cpu = process.cpuUsage();
    for (const delta of answerTokens()) {
      const before = terminal.bytes;
      const started = performance.now();
      app.onEvent({
        type: "message_update",
        assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta },
      });
      frame();
      times.push(performance.now() - started);
      bytes.push(terminal.bytes - before);
    }
    const used = process.cpuUsage(cpu);
    const cpuPerToken = (used.user + used.system) / 1000 / times.length;
    const fullRedraws = app.tui.fullRedraws - redrawsBefore;
    const meanBytes = bytes.reduce((a, b) => a + b, 0) / bytes.length;
    const frozen = app.tui.frozenLines;
    const label = `tui ${messages} messages`;
    console.log(
      `${label}: ${transcriptLines} lines at 120 columns; first frame ${firstMs.toFixed(0)} ms, ${fullBytes} bytes`,
    );
    console.log(
      `${label}: per streamed token (${times.length}): frame median ${quantile(times, 0.5).toFixed(2)} ms, p95 ${quantile(times, 0.95).toFixed(2)} ms, max ${Math.max(...times).toFixed(1)} ms; CPU ${cpuPerToken.toFixed(2)} ms`,
    );
    console.log(
      `${label}: bytes written per token: mean ${meanBytes.toFixed(0)}, p95 ${quantile(bytes, 0.95)}, max ${Math.max(...bytes)} (a full redraw: ${fullBytes}); full redraws while streaming: ${fullRedraws}`,
    );
    console.log(
      `${label}: lines in the terminal's scrollback that frames leave out: ${frozen} of ${app.tui.render(terminal.columns).length}`,
    );
  } finally {
    app.stop();
    await session.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}
