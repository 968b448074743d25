/**
 * Host modes (print, JSON, RPC, interactive, ...) are extensions too: they register with `knightcode.registerMode()`
 * and the `knightcode` command runs the one `--mode` names. A mode drives the session through this controller.
 */
import type { ExtensionUIContext, ModelInfo, NavigateTreeOptions } from "./context.js";
import type { BashResult, CompactionResult } from "./events.js";
import type {
  CommandInfo,
  EntryRenderer,
  ExtensionFactory,
  MessageRenderer,
  ProviderLoginMethod,
} from "./extension-api.js";
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
   * pi's RPC `steer` and `follow_up`: the message goes to the `streamingBehavior` queue (steering by default) after
   * the `input` handlers, whether or not a run is going; while idle it waits there for the next run (steering joins
   * its first request, a follow-up comes after it would stop). A `/name` of an extension's command is refused.
   */
  queue?: boolean;
  /**
   * Called once the prompt is taken, before it settles: its run started, it joined the run that was starting, it
   * was queued, or a command or `input` handler took it. A prompt refused before that (busy, no model) rejects
   * without this call. RPC answers `prompt` at this moment.
   */
  onAccepted?: (disposition: PromptDisposition) => void;
}

/**
 * How a prompt was taken: `started` (its run started, or it joined the run that was starting), `queued` (it went to
 * the steering or follow-up queue), `handled` (a `/command` or an `input` handler took it).
 */
export type PromptDisposition = "started" | "queued" | "handled";

/** How a queue delivers: every waiting message to the next turn at once, or one message per turn. */
export type QueueMode = "all" | "one-at-a-time";

/** What a host can do with the running session. Survives session replacement (new, fork, switch). */
export interface SessionController {
  readonly cwd: string;
  readonly sessionManager: ReadonlySessionManager;
  prompt(text: string, options?: PromptOptions): Promise<void>;
  /** Every event of the session stream, in order; returns an unsubscribe function. */
  subscribe(listener: (event: SessionStreamEvent) => void): () => void;
  steer(text: string, images?: ImageContent[]): void;
  followUp(text: string, images?: ImageContent[]): void;
  abort(): { steering: string[]; followUp: string[] };
  waitForIdle(): Promise<void>;
  isIdle(): boolean;
  reload(): Promise<void>;
  /** Replaces the session with a new one; `parentSession` is recorded in its header. */
  newSession(options?: { parentSession?: string }): Promise<{ cancelled: boolean }>;
  dispose(): Promise<void>;
  getThinkingLevel(): ThinkingLevel;
  setThinkingLevel(level: ThinkingLevel): void;
  /** The levels the current model takes: `["off"]` for a model without reasoning, every level otherwise. */
  getAvailableThinkingLevels(): ThinkingLevel[];
  /** Moves to the next available level; undefined (and nothing changes) when the model has no reasoning. */
  cycleThinkingLevel(): ThinkingLevel | undefined;
  /**
   * Sets how many queued steering (or follow-up) messages one turn takes, and saves it as the `steeringMode`
   * (`followUpMode`) setting in the personal settings file, as a user's choice.
   */
  setQueueMode(queue: "steering" | "followUp", mode: QueueMode): void;
  /** Turns automatic compaction on or off (the `compaction.enabled` setting, saved in the personal file). */
  setAutoCompactionEnabled(enabled: boolean): void;
  /** Turns automatic retries on or off (the `retry.enabled` setting, saved in the personal file). */
  setAutoRetryEnabled(enabled: boolean): void;
  /** Cancels an automatic retry waiting for its delay; the run ends with the failure it would have retried. */
  abortRetry(): void;
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
  /**
   * The models that can be used now, each saying why: a key (auth.json, an environment variable, models.json), a
   * server that takes none, or a provider that needs none. Test-only providers (the scripted one) are left out.
   */
  getUsableModels(): UsableModel[];
  /**
   * The models the cycling keys go through: the usable ones the `enabledModels` setting matches (all usable ones
   * when it is unset or matches none).
   */
  getScopedModels(): UsableModel[];
  /** What the session loaded, for a start screen: extensions, skills, prompt templates, MCP servers, packages. */
  getLoaded(): LoadedSummary;
  /** The provider credentials of `auth.json`: list, store an API key, remove one. */
  readonly credentials: CredentialStore;
  /** Selects a model; false when no such model is available. */
  setModel(provider: string, modelId: string): Promise<boolean>;
  /**
   * Moves to the next model: of the models the host named (`--models`) when it limited cycling, else of the scoped
   * models (`getScopedModels`); returns it (undefined when there is none).
   */
  cycleModel(): Promise<ModelInfo | undefined>;
  /** Whether model cycling is limited to the models the host named (`--models`). */
  isModelScoped(): boolean;
  switchSession(path: string): Promise<{ cancelled: boolean }>;
  /**
   * Continues from an entry in a new session file: with `position: "at"` (the default) the entry is kept; with
   * `"before"` the new session ends just before it (pi's fork from a user message, whose text the caller gets back).
   */
  fork(entryId: string, options?: { position?: "before" | "at" }): Promise<{ cancelled: boolean }>;
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

/** `getLoaded()`: names, in load order. */
export interface LoadedSummary {
  extensions: { id: string; origin: string }[];
  /** Extensions that failed to load, with why. */
  failed: string[];
  skills: string[];
  prompts: string[];
  mcpServers: string[];
  /** The package sources whose resources loaded. */
  packages: string[];
}

/** A model that can be used now, with why (`access`) and what it takes in. */
export interface UsableModel {
  model: ModelInfo;
  /** Why it can be used, for people: `auth.json`, `$ANTHROPIC_API_KEY`, `models.json key`, `server http://…`, ... */
  access: string;
  /** Whether it takes images. */
  images: boolean;
}

/** `auth.json`: the stored provider credentials (the file is written atomically and kept private, mode 0600). */
export interface CredentialStore {
  readonly path: string;
  /**
   * The providers with a stored credential: its type (`api_key`, `oauth`, or a login method's), the key masked
   * (`****` and its last four characters) and, for a sign-in, when its access token expires (epoch ms).
   */
  list(): { provider: string; type: string; masked?: string; expires?: number }[];
  /** Stores an API key for the provider (replacing what was stored). */
  saveApiKey(provider: string, key: string): void;
  /** Stores what a login method returned. */
  save(provider: string, credential: { type: string; key: string; [field: string]: unknown }): void;
  /** Removes the provider's credential; false when there was none. */
  remove(provider: string): boolean;
  /**
   * The login methods the provider offers besides an API key (`ProviderConfig.login`), each with its `id` set:
   * its own, else its label in lower case with runs of other characters as `-` (`-2`, `-3` added to repeats).
   * `knightcode login --method` and the app-server's `account/login/start` take these ids.
   */
  loginMethods(provider: string): (ProviderLoginMethod & { id: string })[];
  /** The providers one can sign in to: every registered one but the test-only ones. */
  providers(): string[];
  /**
   * What the provider's requests need, and where the key they would carry comes from now; undefined for a
   * provider nobody registered.
   */
  keyStatus(provider: string): ProviderKeyStatus | undefined;
}

/** `CredentialStore.keyStatus`: whether a provider takes a key, and where the one in use comes from. */
export interface ProviderKeyStatus {
  /**
   * Whether the provider names a key (`ProviderConfig.apiKey`, a variable or a literal): false for a local server
   * or any provider that needs none (a key stored for it is still sent).
   */
  needsKey: boolean;
  /** The environment variable the key is read from, when the provider names one (`ANTHROPIC_API_KEY`). */
  keyVariable?: string;
  /**
   * Where the key requests carry comes from now: one the host gave (`sdk`), `auth.json`, the environment variable,
   * or a literal in models.json; absent when no key resolves.
   */
  source?: "sdk" | "auth.json" | "environment" | "models.json";
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
  /** A compaction (manual or automatic) is running. */
  isCompacting: boolean;
  steeringMode: QueueMode;
  followUpMode: QueueMode;
  autoCompactionEnabled: boolean;
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
