/** The options of `createAgentSession()`: what a host decides about the sessions a handle opens. */
import type {
  DiscoveredResources,
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
  /**
   * pi's `--session-id`: the session of this folder with exactly this id, created with it when there is none (with
   * `inMemory`, the in-memory session's id; with `fork`, the fork's id, which must not exist yet).
   */
  id?: string;
  /**
   * pi's `--fork`: a session file (a path) or id (or unique prefix, in any folder) whose entries, all branches,
   * start a new session of this folder.
   */
  fork?: string;
}

export interface CreateAgentSessionOptions {
  cwd?: string;
  /** Defaults to `$KNIGHTCODE_AGENT_DIR` or `~/.knightcode/agent`. */
  agentDir?: string;
  mode?: HostMode;
  provider?: string;
  /** A model id, or `provider/model`. */
  model?: string;
  /**
   * pi's `max` is the model's highest level: itself for a routed model that offers it, else the highest the model
   * offers (`xhigh` for a reasoning model, `off` otherwise).
   */
  thinkingLevel?: ThinkingLevel | "max";
  /** The exact set of active tools (`--tools`); `[]` for none. */
  tools?: string[];
  /** Tools left inactive at start, by name or `*` pattern, whatever else chose them (`--exclude-tools`). */
  excludeTools?: string[];
  /** Leaves the tools of `builtin:core-tools` (read, bash, edit, write, ...) inactive at start (`--no-builtin-tools`). */
  withoutCoreTools?: boolean;
  /** Extra extensions: paths (origin `cli`), factories (origin `sdk`) or sources. */
  extensions?: (string | ExtensionFactory | ExtensionSource)[];
  /** Load no extension files from the extension folders and packages: only the built-ins and `extensions`. */
  noExtensions?: boolean;
  session?: SessionChoice;
  /** API keys by provider for these sessions only, ahead of auth.json and models.json (`--api-key`); never saved. */
  apiKeys?: Record<string, string>;
  /** Settings that beat every file. */
  settings?: Record<string, unknown>;
  /**
   * Built-in extensions this session leaves out, by name (`"themes"` for `builtin:themes`), as a
   * `-builtin:<name>` entry of the `extensions` setting does: pi's `--no-themes`, `--no-skills`, ... .
   */
  withoutBuiltins?: string[];
  /**
   * False: load no extension that is found rather than given (the personal and project folders, the `extensions`
   * setting, packages); built-ins and `extensions` given here (`-e`) still load (`--no-extensions`).
   */
  discoverExtensions?: boolean;
  /** False: no AGENTS.md or CLAUDE.md files in the system prompt (`--no-context-files`). */
  contextFiles?: boolean;
  /** Installs no missing package at start-up (`--offline`); the missing ones are reported. */
  offline?: boolean;
  /** Replaces the system prompt's base (as SYSTEM.md would; `--system-prompt`). */
  systemPrompt?: string;
  /** Text appended to the system prompt after APPEND_SYSTEM.md's, in order (`--append-system-prompt`). */
  appendSystemPrompt?: string[];
  /**
   * Skill, prompt template and theme files or folders to load besides the ones found (`--skill`,
   * `--prompt-template`, `--theme`), as a `resources_discover` handler would contribute them.
   */
  resourcePaths?: Partial<DiscoveredResources>;
  /**
   * Patterns of the models `cycleModel` moves through (`--models`): `provider/id` or an id, `*` as a wildcard,
   * otherwise a case-insensitive part of the id or name.
   */
  scopedModels?: string[];
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
