/**
 * Settings: built-in defaults < global `<agentDir>/settings.json` < project `<cwd>/.knightcode/settings.json`
 * (read only in a trusted project) < overrides from the CLI or the SDK.
 *
 * Scopes are deep-merged: objects merge key by key, arrays and scalars from the later scope replace. The files are
 * plain JSON (no comments). Known keys are validated; unknown keys are kept as they are, because extensions read
 * their own settings from the same files.
 *
 * Known keys and their defaults (the names follow pi, the closest peer):
 *
 * | Key                    | Type               | Default | Meaning                                  |
 * | ---------------------- | ------------------ | ------- | ---------------------------------------- |
 * | `retry.enabled`        | boolean            | `true`  | retry failed provider requests           |
 * | `retry.maxRetries`     | integer >= 0       | `3`     | retries after the first attempt          |
 * | `retry.baseDelayMs`    | integer >= 0       | `2000`  | base of the exponential backoff          |
 * | `retry.maxDelayMs`     | integer >= 0       | `60000` | cap of one backoff delay                 |
 * | `compaction.enabled`   | boolean            | `true`  | compact before the context window fills  |
 * | `compaction.reserveTokens` | integer >= 0   | `16384` | tokens kept free for the next answer     |
 * | `compaction.keepRecentTokens` | integer >= 0 | `20000` | recent tokens a compaction keeps as is  |
 * | `doomLoop.enabled`     | boolean            | `true`  | stop a tool call the model keeps repeating |
 * | `doomLoop.threshold`   | integer >= 1       | `3`     | repeats in a row that count as a loop    |
 * | `gates.timeoutMs`      | integer >= 0       | `300000` | time a `tool_call`/`user_bash` handler has to answer (0: none) |
 * | `extensionLoad.timeoutMs` | integer >= 0   | `30000` | time an extension factory has to finish (0: none) |
 * | `toolResults.maxBytes` | integer >= 0       | `102400` | text one tool result may send to the model (0: no cap) |
 * | `codemode.timeoutMs`   | integer >= 1       | `30000` | wall-clock limit of a codemode script (builtin:codemode) |
 * | `codemode.memoryMb`    | integer >= 1       | `64`    | memory of a codemode script's sandbox    |
 * | `codemode.maxConcurrent` | integer >= 1     | `4`     | codemode sandboxes running in the process |
 * | `shellEnv.include`     | string[]           | `[]`    | let these names through to tool processes |
 * | `shellEnv.exclude`     | string[]           | `[]`    | keep these names from tool processes     |
 * | `worktrees.root`       | non-empty string   | unset   | managed worktrees' folder (default `<agentDir>/worktrees`) |
 * | `worktrees.keep`       | integer >= 1       | `15`    | managed worktrees kept before the least recently used go |
 * | `worktrees.branchPrefix` | string           | `knightcode/` | prefix of a handoff's branch named after the thread |
 * | `defaultProjectTrust`  | ask, always, never | `ask`   | no saved decision (global/override only) |
 * | `defaultTools`         | string[]           | `[]`    | `+name` / `-name` tool defaults          |
 * | `enableSkillCommands`  | boolean            | `true`  | `/skill:<name>` runs a skill (skills)    |
 * | `extensions`           | string[]           | `[]`    | extension paths, `-builtin:<name>`       |
 * | `skills`, `prompts`, `themes` | string[]    | unset   | resource paths and patterns (packages)   |
 * | `packages`             | (string or object)[] | unset | installed packages (plugins/packages)    |
 * | `theme`                | non-empty string   | unset   | theme name (builtin:themes)              |
 * | `defaultThinkingLevel` | ThinkingLevel      | unset   | thinking level of new sessions           |
 * | `defaultProvider`      | non-empty string   | unset   | provider of new sessions                 |
 * | `defaultModel`         | non-empty string   | unset   | model id of new sessions                 |
 * | `enabledModels`        | string[]           | unset   | models the cycling keys go through (`/scoped-models`) |
 * | `steeringMode`         | all, one-at-a-time | `all`   | steering messages one turn takes         |
 * | `followUpMode`         | all, one-at-a-time | `all`   | follow-up messages one turn takes        |
 * | `images.blockImages`   | boolean            | `false` | no image reaches a model (a text note instead) |
 * | `images.autoResize`    | boolean            | `true`  | pasted images scaled to fit 2000x2000 px |
 * | `transport`            | auto, sse, websocket, websocket-cached | `auto` | transport asked of providers |
 * | `terminal.showImages`  | boolean            | `true`  | images drawn in the terminal (interactive mode) |
 * | `terminal.imageWidthCells` | integer 1-200  | `60`    | width of a drawn image in columns        |
 * | `doubleEscapeAction`   | tree, fork, none   | `tree`  | esc twice on an empty editor (interactive mode) |
 * | `treeFilterMode`       | default, no-tools, user-only, labeled-only, all | `default` | `/tree`'s first filter |
 * | `quietStartup`         | boolean or `header` | `false` | hide the start-up listing (and header)   |
 *
 * A known key with a wrong type is reported (file and key) and dropped from that scope, so the value of the
 * lower scope (or the default) stays in force; the rest of the file still applies. A file that is not valid JSON,
 * or whose top level is not an object, is reported with its line and column and that whole scope is skipped.
 */
import { type TSchema, Type } from "@sinclair/typebox";
import { Errors } from "@sinclair/typebox/errors";
import type { ThinkingLevel } from "../../kernel/api/messages.js";
import { writeFileAtomic } from "../kit/files/atomic-write.js";
import { isPlainObject, type JsonObject, readJsonObjectFile } from "../kit/files/json-file.js";
import { globalSettingsPath, projectSettingsPath } from "./agent-dir.js";

export type ProjectTrustDefault = "ask" | "always" | "never";

export interface RetrySettings {
  enabled: boolean;
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** The keys KnightCode itself reads, with the types they have after validation. */
/** Idle prompt-cache refreshes (`cache_warming_decision` handlers may override each one). */
export interface CacheWarmingSettings {
  enabled: boolean;
  intervalMs: number;
  maxRefreshes: number;
}

/** When and how much the agent loop compacts (plugins/agent-loop/compaction.ts). */
export interface CompactionSettings {
  enabled: boolean;
  reserveTokens: number;
  keepRecentTokens: number;
}

/** The guard against a tool call that fails the same way turn after turn (see the agent loop's loop-guard.ts). */
export interface DoomLoopSettings {
  enabled: boolean;
  threshold: number;
}

/** Time limits of gate handlers (`tool_call`, `user_bash`); one that does not answer in time fails closed. */
export interface GateSettings {
  timeoutMs: number;
}

/** How long an extension factory's promise may take to settle; one that does not stops the session's start. */
export interface ExtensionLoadSettings {
  timeoutMs: number;
}

/** The cap on what one tool result sends to the model (the agent loop's result-cap.ts). */
export interface ToolResultSettings {
  maxBytes: number;
}

/**
 * The environment of tool processes (plugins/kit/process/env-policy.ts): names that look like secrets are left out
 * unless `include` matches them; `exclude` leaves out more. Glob patterns, whole name, any case.
 */
export interface ShellEnvSettings {
  include: string[];
  exclude: string[];
}

/** Managed git worktrees (builtin-extensions/worktrees/git/worktrees.ts, docs/worktrees.md). */
export interface WorktreesSettings {
  /** Unset: `<agentDir>/worktrees`. */
  root?: string;
  keep: number;
  branchPrefix: string;
}

/** Images sent to models (the model service applies them to every request). */
export interface ImageSettings {
  /** Pasted images over 2000x2000 pixels are scaled down to fit (the interactive mode; PNG and JPEG). */
  autoResize: boolean;
  /** Every image becomes the text note `Image reading is disabled.` before a request leaves. */
  blockImages: boolean;
}

/** The transport asked of providers that speak more than one; the built-in ones speak SSE only. */
export type TransportSetting = "auto" | "sse" | "websocket" | "websocket-cached";

export interface KnownSettings {
  retry: RetrySettings;
  cacheWarming: CacheWarmingSettings;
  compaction: CompactionSettings;
  doomLoop: DoomLoopSettings;
  gates: GateSettings;
  extensionLoad: ExtensionLoadSettings;
  toolResults: ToolResultSettings;
  shellEnv: ShellEnvSettings;
  worktrees: WorktreesSettings;
  defaultProjectTrust: ProjectTrustDefault;
  defaultTools: string[];
  /** Read by builtin:skills. */
  enableSkillCommands: boolean;
  extensions: string[];
  defaultThinkingLevel?: ThinkingLevel;
  defaultProvider?: string;
  defaultModel?: string;
  /** `provider/id` patterns (`*` for any characters) the cycling keys go through. */
  enabledModels?: string[];
  steeringMode: "all" | "one-at-a-time";
  followUpMode: "all" | "one-at-a-time";
  images: ImageSettings;
  transport: TransportSetting;
}

/** Where the value in force comes from. */
export type SettingsScope = "default" | "global" | "project" | "override";

export const DEFAULT_SETTINGS: Readonly<KnownSettings> = deepFreeze({
  retry: { enabled: true, maxRetries: 3, baseDelayMs: 2000, maxDelayMs: 60000 },
  cacheWarming: { enabled: false, intervalMs: 240000, maxRefreshes: 3 },
  compaction: { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 },
  doomLoop: { enabled: true, threshold: 3 },
  gates: { timeoutMs: 300000 },
  extensionLoad: { timeoutMs: 30000 },
  toolResults: { maxBytes: 102400 },
  shellEnv: { include: [], exclude: [] },
  worktrees: { keep: 15, branchPrefix: "knightcode/" },
  defaultProjectTrust: "ask",
  defaultTools: [],
  enableSkillCommands: true,
  extensions: [],
  steeringMode: "all",
  followUpMode: "all",
  images: { autoResize: true, blockImages: false },
  transport: "auto",
});

const literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((v) => Type.Literal(v)));

/** What one scope may contain: every known key optional, unknown keys allowed. */
export const SettingsFileSchema = Type.Object({
  retry: Type.Optional(
    Type.Object({
      enabled: Type.Optional(Type.Boolean()),
      maxRetries: Type.Optional(Type.Integer({ minimum: 0 })),
      baseDelayMs: Type.Optional(Type.Integer({ minimum: 0 })),
      maxDelayMs: Type.Optional(Type.Integer({ minimum: 0 })),
    }),
  ),
  cacheWarming: Type.Optional(
    Type.Object({
      enabled: Type.Optional(Type.Boolean()),
      intervalMs: Type.Optional(Type.Integer({ minimum: 1 })),
      maxRefreshes: Type.Optional(Type.Integer({ minimum: 0 })),
    }),
  ),
  compaction: Type.Optional(
    Type.Object({
      enabled: Type.Optional(Type.Boolean()),
      reserveTokens: Type.Optional(Type.Integer({ minimum: 0 })),
      keepRecentTokens: Type.Optional(Type.Integer({ minimum: 0 })),
    }),
  ),
  doomLoop: Type.Optional(
    Type.Object({
      enabled: Type.Optional(Type.Boolean()),
      threshold: Type.Optional(Type.Integer({ minimum: 1 })),
    }),
  ),
  gates: Type.Optional(Type.Object({ timeoutMs: Type.Optional(Type.Integer({ minimum: 0 })) })),
  extensionLoad: Type.Optional(Type.Object({ timeoutMs: Type.Optional(Type.Integer({ minimum: 0 })) })),
  toolResults: Type.Optional(Type.Object({ maxBytes: Type.Optional(Type.Integer({ minimum: 0 })) })),
  // Read by builtin:codemode, which holds the defaults.
  codemode: Type.Optional(
    Type.Object({
      timeoutMs: Type.Optional(Type.Integer({ minimum: 1 })),
      memoryMb: Type.Optional(Type.Integer({ minimum: 1 })),
      maxConcurrent: Type.Optional(Type.Integer({ minimum: 1 })),
    }),
  ),
  shellEnv: Type.Optional(
    Type.Object({
      include: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
      exclude: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    }),
  ),
  worktrees: Type.Optional(
    Type.Object({
      root: Type.Optional(Type.String({ minLength: 1 })),
      keep: Type.Optional(Type.Integer({ minimum: 1 })),
      branchPrefix: Type.Optional(Type.String()),
    }),
  ),
  defaultProjectTrust: Type.Optional(literals(["ask", "always", "never"] as const)),
  defaultTools: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  enableSkillCommands: Type.Optional(Type.Boolean()),
  extensions: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  // Resources (plugins/packages): paths and patterns per kind, and packages with optional filters.
  skills: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  prompts: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  themes: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  /** Read by builtin:themes. */
  theme: Type.Optional(Type.String({ minLength: 1 })),
  packages: Type.Optional(
    Type.Array(
      Type.Union([
        Type.String({ minLength: 1 }),
        Type.Object({
          source: Type.String({ minLength: 1 }),
          extensions: Type.Optional(Type.Array(Type.String())),
          skills: Type.Optional(Type.Array(Type.String())),
          prompts: Type.Optional(Type.Array(Type.String())),
          themes: Type.Optional(Type.Array(Type.String())),
        }),
      ]),
    ),
  ),
  defaultThinkingLevel: Type.Optional(
    literals(["off", "minimal", "low", "medium", "high", "xhigh", "max"] as const),
  ),
  defaultProvider: Type.Optional(Type.String({ minLength: 1 })),
  defaultModel: Type.Optional(Type.String({ minLength: 1 })),
  enabledModels: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
  steeringMode: Type.Optional(literals(["all", "one-at-a-time"] as const)),
  followUpMode: Type.Optional(literals(["all", "one-at-a-time"] as const)),
  images: Type.Optional(
    Type.Object({
      autoResize: Type.Optional(Type.Boolean()),
      blockImages: Type.Optional(Type.Boolean()),
    }),
  ),
  transport: Type.Optional(literals(["auto", "sse", "websocket", "websocket-cached"] as const)),
  // Read by the interactive mode (builtin:mode-interactive), which holds the defaults.
  terminal: Type.Optional(
    Type.Object({
      showImages: Type.Optional(Type.Boolean()),
      imageWidthCells: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
    }),
  ),
  doubleEscapeAction: Type.Optional(literals(["tree", "fork", "none"] as const)),
  treeFilterMode: Type.Optional(
    literals(["default", "no-tools", "user-only", "labeled-only", "all"] as const),
  ),
  quietStartup: Type.Optional(Type.Union([Type.Boolean(), Type.Literal("header")])),
});

export interface LoadSettingsOptions {
  agentDir: string;
  cwd: string;
  /** The project file is read only when true (see trust.ts). */
  projectTrusted: boolean;
  /** CLI/SDK values; they beat every file. */
  overrides?: object;
}

export interface Settings {
  /** The value in force at a dotted key path (`"retry.maxRetries"`); frozen when it is an object or array. */
  get<K extends keyof KnownSettings>(key: K): Readonly<KnownSettings[K]>;
  get(keyPath: string): unknown;
  /** Every merged setting as a deep-frozen plain object (the same object until `saveGlobal`). */
  all(): Readonly<Record<string, unknown>>;
  /**
   * The scope the value in force comes from, or undefined when the key is not set. For an object value made of
   * several scopes (e.g. `retry` with one key set globally), the highest scope that contributes.
   */
  origin(keyPath: string): SettingsScope | undefined;
  /** SHA-256 hex of each file as read; absent when the file does not exist (or was not read). */
  readonly versions: Readonly<{ global?: string; project?: string }>;
  readonly warnings: readonly string[];
  readonly paths: Readonly<{ global: string; project: string }>;
  readonly projectTrusted: boolean;
  /**
   * Read-modify-write of the global file: `patch` is deep-merged into what the file holds now (not into the
   * merged settings), a key whose patch value is `undefined` is removed, and the file is replaced atomically with
   * its mode kept. Throws when the patch gives a known key a wrong type or when the file is not valid JSON (it is
   * not overwritten then). The loaded settings are updated too.
   */
  saveGlobal(patch: Record<string, unknown>): void;
}

export function loadSettings(options: LoadSettingsOptions): Settings {
  return new LoadedSettings(options);
}

interface Layer {
  scope: SettingsScope;
  values: JsonObject;
}

class LoadedSettings implements Settings {
  readonly paths: Readonly<{ global: string; project: string }>;
  readonly projectTrusted: boolean;
  readonly warnings: string[] = [];
  /** Each file's version, taken when asked for: the digest loads node:crypto (see json-file.ts). */
  private readonly versionOf: { global?: () => string; project?: () => string } = {};
  private globalLayer: JsonObject = {};
  private readonly projectLayer: JsonObject = {};
  private readonly overrideLayer: JsonObject = {};
  private merged: Readonly<Record<string, unknown>> = {};

  constructor(options: LoadSettingsOptions) {
    this.paths = Object.freeze({
      global: globalSettingsPath(options.agentDir),
      project: projectSettingsPath(options.cwd),
    });
    this.projectTrusted = options.projectTrusted;
    this.globalLayer = this.readScope("global", this.paths.global);
    if (options.projectTrusted) {
      this.projectLayer = this.readScope("project", this.paths.project);
      if (Object.hasOwn(this.projectLayer, "defaultProjectTrust")) {
        delete this.projectLayer.defaultProjectTrust;
        this.warnings.push(
          `${this.paths.project}: "defaultProjectTrust" is ignored in project settings (a project cannot trust ` +
            `itself); set it in ${this.paths.global}.`,
        );
      }
    }
    if (options.overrides !== undefined) {
      if (!isPlainObject(options.overrides)) {
        this.warnings.push("settings overrides: must be an object; ignored.");
      } else {
        this.overrideLayer = this.validated("settings overrides", structuredClone(options.overrides));
      }
    }
    this.recompute();
  }

  get(keyPath: string): any {
    return keyPath === "" ? this.merged : lookup(this.merged, keyPath);
  }

  all(): Readonly<Record<string, unknown>> {
    return this.merged;
  }

  origin(keyPath: string): SettingsScope | undefined {
    if (this.get(keyPath) === undefined) return undefined;
    for (const layer of [...this.layers()].reverse()) {
      if (lookup(layer.values, keyPath) !== undefined) return layer.scope;
    }
    return undefined;
  }

  saveGlobal(patch: Record<string, unknown>): void {
    if (!isPlainObject(patch)) throw new TypeError("saveGlobal: the patch must be an object");
    const problems = schemaProblems(stripUndefined(patch));
    if (problems.length > 0) {
      throw new TypeError(
        `saveGlobal: ${problems.map((p) => `"${p.key}" ${p.message}`).join("; ")} (${this.paths.global} not changed)`,
      );
    }
    const current = readJsonObjectFile(this.paths.global);
    if (current.status === "invalid") {
      throw new Error(`Cannot update ${current.message}. Fix or remove the file first; it was not changed.`);
    }
    const next = applyPatch(current.status === "ok" ? current.value : {}, patch);
    writeFileAtomic(this.paths.global, `${JSON.stringify(next, null, 2)}\n`);
    const written = readJsonObjectFile(this.paths.global);
    if (written.status === "ok") {
      this.versionOf.global = () => written.version;
      this.globalLayer = this.validated(this.paths.global, written.value);
    }
    this.recompute();
  }

  get versions(): Readonly<{ global?: string; project?: string }> {
    const { global, project } = this.versionOf;
    return { ...(global ? { global: global() } : {}), ...(project ? { project: project() } : {}) };
  }

  private *layers(): Iterable<Layer> {
    yield { scope: "default", values: DEFAULT_SETTINGS as unknown as JsonObject };
    yield { scope: "global", values: this.globalLayer };
    yield { scope: "project", values: this.projectLayer };
    yield { scope: "override", values: this.overrideLayer };
  }

  private recompute(): void {
    let merged: JsonObject = {};
    for (const layer of this.layers()) merged = deepMerge(merged, layer.values);
    this.merged = deepFreeze(structuredClone(merged));
  }

  private readScope(scope: "global" | "project", file: string): JsonObject {
    const read = readJsonObjectFile(file);
    if (read.status === "missing") return {};
    if ("version" in read) this.versionOf[scope] = () => read.version!;
    if (read.status === "invalid") {
      this.warnings.push(`${read.message} (the ${scope} settings were not loaded)`);
      return {};
    }
    return this.validated(file, read.value);
  }

  /** Drops known keys with a wrong type, with one warning per key. */
  private validated(source: string, values: JsonObject): JsonObject {
    const problems = schemaProblems(values);
    if (problems.length === 0) return values;
    const kept = structuredClone(values);
    for (const problem of problems) {
      deleteAt(kept, problem.key);
      this.warnings.push(`${source}: setting "${problem.key}" ignored: ${problem.message}`);
    }
    return kept;
  }
}

interface SchemaProblem {
  /** Dotted path of the known key that is wrong (an array counts as one key). */
  key: string;
  message: string;
}

function schemaProblems(values: unknown): SchemaProblem[] {
  const byKey = new Map<string, string>();
  for (const error of Errors(SettingsFileSchema, values)) {
    const key = knownKeyOf(error.path);
    if (!key || byKey.has(key)) continue;
    byKey.set(key, describe(lookupSchema(key) ?? error.schema, lookup(values, key)));
  }
  // A wrong parent (retry: 5) hides its children.
  const keys = [...byKey.keys()].sort();
  return keys
    .filter((key) => !keys.some((other) => other !== key && key.startsWith(`${other}.`)))
    .map((key) => ({ key, message: byKey.get(key)! }));
}

/** `/retry/maxRetries` → `retry.maxRetries`; `/defaultTools/1` → `defaultTools` (stops below objects). */
function knownKeyOf(pointer: string): string | undefined {
  const segments = pointer
    .split("/")
    .slice(1)
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
  const kept: string[] = [];
  let schema: TSchema | undefined = SettingsFileSchema;
  for (const segment of segments) {
    if (schema?.type !== "object" || !schema.properties || !Object.hasOwn(schema.properties, segment)) break;
    kept.push(segment);
    schema = schema.properties[segment];
  }
  return kept.length > 0 ? kept.join(".") : undefined;
}

function lookupSchema(key: string): TSchema | undefined {
  let schema: TSchema | undefined = SettingsFileSchema;
  for (const segment of key.split(".")) schema = schema?.properties?.[segment];
  return schema;
}

function describe(schema: TSchema, value: unknown): string {
  return `expected ${expected(schema)}, found ${JSON.stringify(value) ?? String(value)}`;
}

function expected(schema: TSchema): string {
  if (Array.isArray(schema.anyOf) && schema.anyOf.every((s: TSchema) => s.const !== undefined)) {
    return `one of ${schema.anyOf.map((s: TSchema) => JSON.stringify(s.const)).join(", ")}`;
  }
  switch (schema.type) {
    case "integer":
      return schema.minimum !== undefined ? `an integer >= ${schema.minimum}` : "an integer";
    case "array":
      return `an array of ${schema.items?.type === "string" ? "non-empty strings" : "values"}`;
    case "string":
      return "a non-empty string";
    case "object":
      return "an object";
    default:
      return `a ${schema.type}`;
  }
}

// ---- plain-object helpers --------------------------------------------------------------------------

/** Objects merge recursively; arrays and scalars from `over` replace. Neither input is modified. */
export function deepMerge(base: JsonObject, over: JsonObject): JsonObject {
  const out: JsonObject = { ...base };
  for (const [key, value] of Object.entries(over)) {
    if (key === "__proto__") continue;
    const current = out[key];
    out[key] = isPlainObject(current) && isPlainObject(value) ? deepMerge(current, value) : value;
  }
  return out;
}

/** Like `deepMerge`, but a patch value of `undefined` removes the key. */
function applyPatch(base: JsonObject, patch: JsonObject): JsonObject {
  const out: JsonObject = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (key === "__proto__") continue;
    if (value === undefined) {
      delete out[key];
      continue;
    }
    const current = out[key];
    out[key] = isPlainObject(current) && isPlainObject(value) ? applyPatch(current, value) : value;
  }
  return out;
}

function stripUndefined(patch: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    out[key] = isPlainObject(value) ? stripUndefined(value) : value;
  }
  return out;
}

function lookup(root: unknown, keyPath: string): unknown {
  let node: unknown = root;
  for (const segment of keyPath.split(".")) {
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, segment)) return undefined;
    node = (node as JsonObject)[segment];
  }
  return node;
}

function deleteAt(root: JsonObject, keyPath: string): void {
  const segments = keyPath.split(".");
  const last = segments.pop()!;
  const parent = segments.length === 0 ? root : lookup(root, segments.join("."));
  if (isPlainObject(parent)) delete parent[last];
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
