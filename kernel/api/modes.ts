/**
 * Host modes (print, JSON, RPC, interactive, ...) are extensions too: they register with `knightcode.registerMode()`
 * and the `knightcode` command runs the one `--mode` names. A mode drives the session through this controller.
 */
import type { ExtensionUIContext, ModelInfo, NavigateTreeOptions } from "./context.js";
import type { BashResult, CompactionResult } from "./events.js";
import type { CommandInfo, EntryRenderer, ExtensionFactory, MessageRenderer } from "./extension-api.js";
import type { HostServices } from "./host.js";
import type { ImageContent, ThinkingLevel, Usage } from "./messages.js";
import type { BranchSummaryEntry, ReadonlySessionManager } from "./session.js";
import type { ToolRenderers } from "./tools.js";

/** One event of the session stream (the events of json.md), as `{type, ...payload}`. */
export interface SessionStreamEvent {
  type: string;
  [key: string]: unknown;
}

export interface PromptOptions {
  images?: ImageContent[];
  streamingBehavior?: "steer" | "followUp";
  /**
   * Called once the prompt is taken, before it settles: its run started, it joined the run that was starting, it
   * was queued, or a command or `input` handler took it. A prompt refused before that (busy, no model) rejects
   * without this call. RPC answers `prompt` at this moment.
   */
  onAccepted?: () => void;
}

/** What a host can do with the running session. Survives session replacement (new, fork, switch). */
export interface SessionController {
  readonly cwd: string;
  readonly sessionManager: ReadonlySessionManager;
  prompt(text: string, options?: PromptOptions): Promise<void>;
  /** Every event of the session stream, in order; returns an unsubscribe function. */
  subscribe(listener: (event: SessionStreamEvent) => void): () => void;
  steer(text: string): void;
  followUp(text: string): void;
  abort(): { steering: string[]; followUp: string[] };
  waitForIdle(): Promise<void>;
  isIdle(): boolean;
  reload(): Promise<void>;
  newSession(): Promise<{ cancelled: boolean }>;
  dispose(): Promise<void>;
  getThinkingLevel(): ThinkingLevel;
  setThinkingLevel(level: ThinkingLevel): void;
  /** Replaces `ctx.ui` for the session's extensions (what a mode with a UI installs when it starts). */
  setUI(ui: ExtensionUIContext, hasUI: boolean): void;
  getState(): SessionState;
  /** Why the session refuses prompts (an extension threw `ExtensionStartupError`), until a reload succeeds. */
  startupFailure(): Error | undefined;
  /**
   * The extensions of the current session that failed to load or whose factory threw, each as the
   * `extension_error` record's fields (`event: "load"`), so a mode that writes records can tell its client.
   */
  extensionLoadFailures(): { extensionPath: string; event: "load"; error: string }[];
  getAvailableModels(): ModelInfo[];
  /** Selects a model; false when no such model is available. */
  setModel(provider: string, modelId: string): Promise<boolean>;
  /** Moves to the next available model; returns it (undefined when there is none). */
  cycleModel(): Promise<ModelInfo | undefined>;
  switchSession(path: string): Promise<{ cancelled: boolean }>;
  fork(entryId: string): Promise<{ cancelled: boolean }>;
  clone(): Promise<{ cancelled: boolean }>;
  /**
   * Makes an earlier entry of this session the active leaf, as `ctx.navigateTree()` does; the answer carries the
   * leaf afterwards and the branch summary entry when one was written.
   */
  navigateTree(entryId: string, options?: NavigateTreeOptions): Promise<TreeNavigation>;
  /** Labels an entry of the session; without a label, clears it. */
  setLabel(entryId: string, label: string | undefined): void;
  getCommands(): CommandInfo[];
  clearQueue(): { steering: string[]; followUp: string[] };
  /**
   * Compacts the session now (after the run in progress settles); rejects when no compaction entry was written
   * (nothing to compact, cancelled by a handler, or the summary failed).
   */
  compact(customInstructions?: string): Promise<CompactionResult>;
  setSessionName(name: string | undefined): void;
  getSessionStats(): SessionStats;
  /**
   * Runs a command a person typed (interactive `!cmd`, RPC `bash`): `user_bash` handlers may take it over. Unless
   * `excludeFromContext`, the command and its output enter the context with the next prompt. Each output chunk is
   * dispatched as `bash_execution_update` (carrying `id` when given) before the call resolves.
   */
  executeBash(
    command: string,
    options?: {
      excludeFromContext?: boolean;
      onData?(chunk: string): void;
      signal?: AbortSignal;
      id?: string;
    },
  ): Promise<BashResult>;
  /** Sessions of this folder, newest first (for a resume picker). */
  listSessions(): SessionSummary[];
  /** Renderers for a tool's calls and results, through the registered resolvers. */
  getToolRenderers(toolName: string): ToolRenderers | undefined;
  /** The agent folder of the session (where a mode reads `keybindings.json`). */
  readonly agentDir: string;
  /** The keyboard shortcuts extensions registered (`registerShortcut`), for a mode that reads keys. */
  getShortcuts(): ShortcutInfo[];
  /** Runs a registered shortcut's handler with an extension context; a failure is reported and rethrown. */
  runShortcut(key: string): Promise<void>;
  /** How custom messages of a type are drawn, when an extension registered a renderer for them. */
  getMessageRenderer(customType: string): MessageRenderer | undefined;
  /** How custom entries of a type are drawn, when an extension registered a renderer for them. */
  getEntryRenderer(customType: string): EntryRenderer | undefined;
  /**
   * Runs the `/name` command an extension registered, with a command context, as typing `/name args` would, and
   * resolves with what its handler returned. Rejects with `KC_ERR_NOT_AVAILABLE` when no such command is
   * registered (its extension is disabled, say), and with the handler's error when it fails.
   */
  runCommand(name: string, args?: string): Promise<unknown>;
}

export interface ShortcutInfo {
  /** The key as registered, e.g. `"ctrl+shift+x"`. */
  key: string;
  description?: string;
  /** Owner id of the extension that registered it. */
  owner: string;
}

export interface TreeNavigation {
  cancelled: boolean;
  /** The active leaf afterwards (unchanged when cancelled). */
  leafId: string | null;
  summaryEntry?: BranchSummaryEntry;
}

export interface SessionSummary {
  path: string;
  id: string;
  name?: string;
  modified: Date;
  messageCount: number;
  firstMessage: string;
  /** Labels set on the session's entries (the latest ten). */
  labels?: string[];
}

export interface SessionState {
  model: ModelInfo | undefined;
  thinkingLevel: ThinkingLevel;
  isStreaming: boolean;
  sessionFile: string | undefined;
  sessionId: string;
  sessionName: string | undefined;
  messageCount: number;
  pendingMessageCount: number;
}

export interface SessionStats {
  sessionFile: string | undefined;
  sessionId: string;
  userMessages: number;
  assistantMessages: number;
  toolCalls: number;
  toolResults: number;
  totalMessages: number;
  tokens: Omit<Usage, "cost">;
  cost: number;
  contextUsage: { tokens: number | null; contextWindow: number; percent: number | null } | undefined;
}

export interface ModeIO {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  isTTY: boolean;
}

export interface ModeContext {
  session: SessionController;
  /** What the mode's `ui()` returned, already bound to the session (absent for a mode without one). */
  ui?: ExtensionUIContext;
  /**
   * Requests from the command line for the mode, e.g. `{resume: true}` for `--resume`, or the app-server's
   * `--listen` address.
   */
  options: { resume?: boolean; listen?: string };
  /** Prompts from the command line, with `@file` contents and piped stdin already inlined (not for RPC). */
  prompts: string[];
  io: ModeIO;
  /** Aborted on SIGINT or SIGTERM. */
  signal: AbortSignal;
  /**
   * Aborted when an extension asks the process to end (`ctx.shutdown()`). The mode ends at its next idle point:
   * RPC once the commands in progress have answered and the session is idle, print and JSON after the current
   * run, the interactive mode at once (a run in progress is stopped). A host that offers no shutdown leaves it out.
   */
  shutdown?: AbortSignal;
  /**
   * Opens another session in this process, through the same SDK the host used for `session`: what a mode that
   * serves many sessions at once needs (the app-server, one session per thread). Absent when the host offers none.
   */
  openSession?(options: ModeSessionOptions): Promise<SessionController>;
  /** The agent directory the host's sessions use (settings, sessions, models.json). */
  agentDir?: string;
  /**
   * The stores and configuration of any folder: sessions, settings, trust, packages, MCP and tool settings, through
   * the same services the host's sessions use. Absent when the host offers none.
   */
  host?: HostServices;
}

export interface ModeSessionOptions {
  cwd: string;
  /** Opens this session file (its owner lock is taken); without it, a new session in `cwd`'s folder. */
  sessionFile?: string;
  /** Keeps the session in memory (nothing is written), e.g. to ask what a session in `cwd` would offer. */
  inMemory?: boolean;
  /** Extensions loaded after the others (origin `sdk`), e.g. one that reads what the session registered. */
  extensions?: ExtensionFactory[];
  /** A model id, or `provider/model`. */
  model?: string;
  /** Bound as `ctx.ui` (with `ctx.hasUI` true) before `session_start`, project trust included. */
  ui?: ExtensionUIContext;
  /** The session's diagnostics (settings, extension errors, skipped lines); stderr otherwise. */
  warn?(message: string): void;
}

export interface ModeDefinition {
  description?: string;
  /** Whether the command line may pipe stdin into the prompt (RPC reads commands from stdin instead). */
  readsStdin?: boolean;
  /**
   * Builds the mode's UI before the session starts. The host calls it once the session's extensions have
   * registered, binds what it returns as `ctx.ui` (with `ctx.hasUI` true), and only then emits `session_start`,
   * so handlers there can already show status, widgets and dialogs; `run` gets the same object as `ctx.ui`.
   * Dialogs opened from `session_start` need their answers read already, so a mode that reads answers from its
   * input starts reading here; one that writes events may subscribe here too. A mode without one runs without a
   * UI unless `run` calls `session.setUI`.
   */
  ui?(ctx: Pick<ModeContext, "session" | "io" | "host">): ExtensionUIContext | Promise<ExtensionUIContext>;
  /** Runs the mode; resolves with the process exit code. */
  run(ctx: ModeContext): Promise<number>;
}
