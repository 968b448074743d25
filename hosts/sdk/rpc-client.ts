/**
 * A typed client for RPC mode: spawns `knightcode --mode rpc`, sends commands, matches responses by id, and hands
 * events and extension dialogs to the caller. For programs that want KnightCode in a separate process.
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type {
  AgentMessage,
  BashResult,
  CommandInfo,
  CompactionResult,
  ImageContent,
  ModelInfo,
  PromptDisposition,
  QueueMode,
  SessionEntry,
  SessionState,
  SessionStats,
  SessionStreamEvent,
  SessionTreeNode,
  ThinkingLevel,
} from "../../kernel/index.js";
import { RPC_MAX_FRAME_BYTES } from "../../plugins/kit/wire/frames.js";

export interface RpcClientOptions {
  /** Extra command-line arguments (`--provider`, `-e`, `--no-session`, ...). */
  args?: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** The `knightcode` entry point to run; defaults to this package's own. */
  bin?: string;
  /** Milliseconds a command may take before its promise rejects (default: no limit). */
  commandTimeoutMs?: number;
}

/** A dialog request from an extension; answer with `{value}`, `{confirmed}` or `{cancelled: true}`. */
export interface UiRequest {
  id: string;
  method: string;
  title?: string;
  options?: string[];
  message?: string;
  [key: string]: unknown;
}

export type UiAnswer = { value: unknown } | { confirmed: boolean } | { cancelled: true };

const DIALOGS = new Set(["select", "confirm", "input", "editor"]);

export class RpcClient {
  private readonly pending = new Map<string, { resolve(data: unknown): void; reject(error: Error): void }>();
  private readonly eventListeners = new Set<(event: SessionStreamEvent) => void>();
  private uiHandler: ((request: UiRequest) => UiAnswer | Promise<UiAnswer>) | undefined;
  private buffer = "";
  private readonly exited: Promise<number | null>;
  stderr = "";

  private constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly options: RpcClientOptions,
  ) {
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => this.read(chunk));
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-64 * 1024);
    });
    this.exited = new Promise((resolve) => {
      child.on("close", (code) => {
        for (const { reject } of this.pending.values())
          reject(new Error(`knightcode exited (${code}): ${this.stderr.trim()}`));
        this.pending.clear();
        resolve(code);
      });
    });
  }

  static start(options: RpcClientOptions = {}): RpcClient {
    const bin = options.bin ?? defaultBin();
    // Looked up here, not imported: every run of the CLI loads the SDK, and only RPC clients spawn.
    const { spawn } = process.getBuiltinModule("node:child_process");
    const child = spawn(process.execPath, [bin, "--mode", "rpc", ...(options.args ?? [])], {
      cwd: options.cwd ?? process.cwd(),
      env: options.env ?? process.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    return new RpcClient(child, options);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Every session event; returns an unsubscribe function. */
  onEvent(listener: (event: SessionStreamEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  /** Answers extension dialogs. Without a handler, dialogs are dismissed. */
  onUiRequest(handler: (request: UiRequest) => UiAnswer | Promise<UiAnswer>): void {
    this.uiHandler = handler;
  }

  /** Sends a raw command and resolves with its `data` (rejects with its `error`). */
  send<T = unknown>(type: string, params: Record<string, unknown> = {}): Promise<T> {
    // Looked up here, not imported, for the same reason: node:crypto is thirty-odd modules a print run never needs.
    const id = process.getBuiltinModule("node:crypto").randomUUID();
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      this.pending.set(id, {
        resolve: (data) => {
          if (timer) clearTimeout(timer);
          resolve(data as T);
        },
        reject: (error) => {
          if (timer) clearTimeout(timer);
          reject(error);
        },
      });
      if (this.options.commandTimeoutMs) {
        timer = setTimeout(() => {
          this.pending.delete(id);
          reject(new Error(`${type} got no response within ${this.options.commandTimeoutMs} ms`));
        }, this.options.commandTimeoutMs);
      }
      const line = `${JSON.stringify({ id, type, ...params })}\n`;
      const bytes = Buffer.byteLength(line) - 1;
      if (bytes > RPC_MAX_FRAME_BYTES) {
        // The process would drop the line unread and could not answer it with its id.
        this.pending.delete(id);
        reject(
          new Error(
            `${type} is ${bytes} bytes as a JSON line; RPC mode reads at most ${RPC_MAX_FRAME_BYTES} (see docs/rpc.md)`,
          ),
        );
        return;
      }
      this.child.stdin.write(line);
    });
  }

  prompt(
    message: string,
    options: { images?: ImageContent[]; streamingBehavior?: "steer" | "followUp" } = {},
  ) {
    return this.send<{ disposition: PromptDisposition }>("prompt", { message, ...options });
  }
  /** Sends a prompt and resolves when the run settles. */
  async promptAndWait(message: string): Promise<{ aborted: boolean }> {
    const settled = new Promise<{ aborted: boolean }>((resolve) => {
      const off = this.onEvent((event) => {
        if (event.type === "agent_settled") {
          off();
          resolve({ aborted: event.aborted === true });
        }
      });
    });
    await this.prompt(message);
    return settled;
  }
  steer(message: string, images?: ImageContent[]) {
    return this.send<{ disposition: PromptDisposition }>("steer", { message, ...(images ? { images } : {}) });
  }
  followUp(message: string, images?: ImageContent[]) {
    return this.send<{ disposition: PromptDisposition }>("follow_up", {
      message,
      ...(images ? { images } : {}),
    });
  }
  abort() {
    return this.send<{ steering: string[]; followUp: string[] }>("abort");
  }
  newSession(options: { parentSession?: string } = {}) {
    return this.send<{ cancelled: boolean }>("new_session", options);
  }
  switchSession(sessionPath: string) {
    return this.send<{ cancelled: boolean }>("switch_session", { sessionPath });
  }
  /** Forks just before a user message (see `getForkMessages`); its text comes back. */
  fork(entryId: string) {
    return this.send<{ text: string; cancelled: boolean }>("fork", { entryId });
  }
  getForkMessages() {
    return this.send<{ messages: { entryId: string; text: string }[] }>("get_fork_messages");
  }
  clone() {
    return this.send<{ cancelled: boolean }>("clone");
  }
  getState() {
    return this.send<SessionState>("get_state");
  }
  setModel(provider: string, modelId: string) {
    return this.send<ModelInfo>("set_model", { provider, modelId });
  }
  /** null when there is no other model to move to. */
  cycleModel() {
    return this.send<{ model: ModelInfo; thinkingLevel: ThinkingLevel; isScoped: boolean } | null>(
      "cycle_model",
    );
  }
  getAvailableModels() {
    return this.send<{ models: ModelInfo[] }>("get_available_models");
  }
  setThinkingLevel(level: ThinkingLevel) {
    return this.send<void>("set_thinking_level", { level });
  }
  /** null when the model has no reasoning. */
  cycleThinkingLevel() {
    return this.send<{ level: ThinkingLevel } | null>("cycle_thinking_level");
  }
  getAvailableThinkingLevels() {
    return this.send<{ levels: ThinkingLevel[] }>("get_available_thinking_levels");
  }
  setSteeringMode(mode: QueueMode) {
    return this.send<void>("set_steering_mode", { mode });
  }
  setFollowUpMode(mode: QueueMode) {
    return this.send<void>("set_follow_up_mode", { mode });
  }
  setAutoCompaction(enabled: boolean) {
    return this.send<void>("set_auto_compaction", { enabled });
  }
  setAutoRetry(enabled: boolean) {
    return this.send<void>("set_auto_retry", { enabled });
  }
  abortRetry() {
    return this.send<void>("abort_retry");
  }
  bash(command: string, options: { excludeFromContext?: boolean } = {}) {
    return this.send<BashResult>("bash", { command, ...options });
  }
  abortBash() {
    return this.send<{ aborted: boolean }>("abort_bash");
  }
  getSessionStats() {
    return this.send<SessionStats>("get_session_stats");
  }
  getMessages() {
    return this.send<{ messages: AgentMessage[] }>("get_messages");
  }
  /** Every entry after `since`, however many responses that takes (a response holds at most 8 MiB of them). */
  async getEntries(since?: string): Promise<{ entries: SessionEntry[]; leafId: string | null }> {
    const entries: SessionEntry[] = [];
    let after = since;
    for (;;) {
      const page = await this.send<{ entries: SessionEntry[]; leafId: string | null; hasMore?: boolean }>(
        "get_entries",
        after ? { since: after } : {},
      );
      entries.push(...page.entries);
      if (!page.hasMore || page.entries.length === 0) return { entries, leafId: page.leafId };
      after = page.entries.at(-1)!.id;
    }
  }
  getTree() {
    return this.send<{ tree: SessionTreeNode[]; leafId: string | null }>("get_tree");
  }
  getCommands() {
    return this.send<{ commands: CommandInfo[] }>("get_commands");
  }
  clearQueue() {
    return this.send<{ steering: string[]; followUp: string[] }>("clear_queue");
  }
  exportHtml(path?: string) {
    return this.send<{ path: string }>("export_html", path !== undefined ? { path } : {});
  }

  compact(customInstructions?: string) {
    return this.send<CompactionResult>("compact", customInstructions ? { customInstructions } : {});
  }

  setSessionName(name: string) {
    return this.send<void>("set_session_name", { name });
  }
  getLastAssistantText() {
    return this.send<{ text: string | null }>("get_last_assistant_text");
  }
  reload() {
    return this.send<void>("reload");
  }

  /** Ends stdin (letting work in progress finish) and resolves with the exit code. */
  async close(timeoutMs = 30_000): Promise<number | null> {
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill("SIGKILL"), timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops the process at once (SIGTERM: it aborts the run, then exits). */
  kill(): Promise<number | null> {
    this.child.kill("SIGTERM");
    return this.exited;
  }

  private read(chunk: string): void {
    this.buffer += chunk;
    let newline = this.buffer.indexOf("\n");
    while (newline >= 0) {
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      if (line.trim() !== "") this.handle(JSON.parse(line) as Record<string, unknown>);
      newline = this.buffer.indexOf("\n");
    }
  }

  private handle(record: Record<string, unknown>): void {
    if (record.type === "response") {
      const waiter = typeof record.id === "string" ? this.pending.get(record.id) : undefined;
      if (!waiter) return;
      this.pending.delete(record.id as string);
      if (record.success) waiter.resolve(record.data);
      else waiter.reject(new Error(String(record.error)));
      return;
    }
    if (record.type === "extension_ui_request") {
      const request = record as UiRequest;
      if (!DIALOGS.has(request.method)) return;
      void Promise.resolve(this.uiHandler ? this.uiHandler(request) : { cancelled: true as const })
        .catch(() => ({ cancelled: true as const }))
        .then((answer) => {
          this.child.stdin.write(
            `${JSON.stringify({ type: "extension_ui_response", id: request.id, ...answer })}\n`,
          );
        });
      return;
    }
    for (const listener of this.eventListeners) listener(record as SessionStreamEvent);
  }
}

/** This package's `knightcode`: the built file next to the compiled SDK, or dist/ when running from source. */
function defaultBin(): string {
  for (const candidate of ["../../hosts/cli/main.js", "../../dist/hosts/cli/main.js"]) {
    const path = fileURLToPath(new URL(candidate, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new Error("Cannot find the knightcode entry point; build the package (npm run build) or pass `bin`");
}
