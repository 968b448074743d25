/** The options of `createAgentSession()`: what a host decides about the sessions a handle opens. */
import type {
  ExtensionFactory,
  ExtensionLogEntry,
  ExtensionSource,
  ExtensionUIContext,
  HostMode,
  Kernel,
  ThinkingLevel,
} from "../../kernel/index.js";
import type { AgentSessionHandle } from "./session-handle.js";

export interface SessionChoice {
  /** Open this session file (or id prefix). */
  path?: string;
  /** Continue the most recent session of the cwd. */
  continue?: boolean;
  /** Keep everything in memory (`--no-session`). */
  inMemory?: boolean;
  sessionDir?: string;
}

export interface CreateAgentSessionOptions {
  cwd?: string;
  /** Defaults to `$KNIGHTCODE_AGENT_DIR` or `~/.knightcode/agent`. */
  agentDir?: string;
  mode?: HostMode;
  provider?: string;
  /** A model id, or `provider/model`. */
  model?: string;
  thinkingLevel?: ThinkingLevel;
  /** The exact set of active tools (`--tools`); `[]` for none. */
  tools?: string[];
  /** Extra extensions: paths (origin `cli`), factories (origin `sdk`) or sources. */
  extensions?: (string | ExtensionFactory | ExtensionSource)[];
  /** Load no extension files from the extension folders and packages: only the built-ins and `extensions`. */
  noExtensions?: boolean;
  session?: SessionChoice;
  /** Settings that beat every file. */
  settings?: Record<string, unknown>;
  /** `--approve` (true) or `--no-approve` (false). */
  approve?: boolean;
  ui?: ExtensionUIContext;
  hasUI?: boolean;
  /** Values for flags extensions registered. */
  flags?: Record<string, boolean | string>;
  /**
   * A run that has taken this many turns and wants another ends with an error instead (`--max-turns`); a
   * positive integer.
   */
  maxTurns?: number;
  /**
   * Diagnostics: extension errors, settings warnings, trust notices, lines of the session file that were skipped
   * (file and line). Defaults to stderr.
   */
  warn?(message: string): void;
  /**
   * Every `knightcode.log` entry of the session's extensions. Without it, warnings and errors go to `warn` with
   * the extension's id in front, and info entries are dropped.
   */
  log?(entry: ExtensionLogEntry): void;
  /** Called when an extension asks to shut down (`ctx.shutdown()`). */
  onShutdownRequest?(): void;
  /**
   * Runs once, for the first session, when its extensions (project ones included) have registered and before
   * `session_start` is emitted: a host looks up the mode it runs, binds the mode's UI (`setUI`) and sets flag
   * values here, so `session_start` handlers already see them. A throw ends the start-up.
   */
  beforeStart?(session: AgentSessionHandle): void | Promise<void>;
  /** A kernel to share between sessions; one per process by default. */
  kernel?: Kernel;
}

/** One event of the session stream (the events of json.md), as `{type, ...payload}`. */
export interface SessionEvent {
  type: string;
  [key: string]: unknown;
}
