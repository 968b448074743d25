/**
 * `knightcode import pi`: brings a pi user's setup into KnightCode's agent folder (or, with `--project`, a project's
 * `.pi/` into its `.knightcode/`). Every item of pi's files is planned first, as imported, skipped (KnightCode
 * already has it and `--force` was not given, or KnightCode has no such setting) or not importable (with why);
 * then each KnightCode file that changes is written once, atomically (auth.json with mode 0600). `--dry-run`
 * prints the plan and writes nothing. Keys and tokens are only ever printed masked.
 *
 * A pi file that cannot be read or parsed is reported with its line and column and the other files still import;
 * a KnightCode file that cannot be parsed is never overwritten (its items are reported as errors). See
 * docs/switching-from-pi.md for the mapping.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, relative, resolve } from "node:path";
import { importPiSessions } from "./import-pi-sessions.js";

export const IMPORT_USAGE = `Usage:
  knightcode import pi [--dry-run] [--from <pi agent dir>] [--force] [--no-sessions]
  knightcode import pi --project [--dry-run] [--force] [--trust-project]

Copies pi's setup into KnightCode: credentials (auth.json), settings, models.json, mcp.json, keybindings.json,
AGENTS.md/SYSTEM.md/APPEND_SYSTEM.md, pi's extensions/skills/prompts/themes folders (added to the settings by
path, not copied) and pi's sessions (copied into the sessions of the same project folder). An entry KnightCode
already has is kept unless --force is given; a session KnightCode already has is always kept.

  --dry-run        Print what would be imported; write nothing
  --from <dir>     pi's agent folder (default $PI_CODING_AGENT_DIR, else ~/.pi/agent)
  --project        Import this project's .pi/ into .knightcode/ (only in a trusted project)
  --trust-project  Count this project as trusted for --project (as the session option does)
  --force          Replace entries KnightCode already has (never a session)
  --no-sessions    Leave pi's sessions out (--sessions, the default, imports them)

See docs/switching-from-pi.md.
`;

interface Output {
  out(text: string): void;
  err(text: string): void;
}

export type Outcome = "imported" | "skipped" | "not-importable" | "error";

export interface ImportItem {
  /** The pi file (or folder) the item comes from, as shown in the report. */
  source: string;
  what: string;
  outcome: Outcome;
  detail?: string;
}

interface Options {
  dryRun: boolean;
  /** Import pi's sessions too (the default without --project). */
  sessions?: boolean;
  force: boolean;
  project: boolean;
  from?: string;
  trustProject?: boolean;
}

type Json = Record<string, unknown>;

type Plugin = typeof import("@knightcodeai/cli/plugin");
type Kit = typeof import("@knightcodeai/cli/kit");

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** pi's agent folder: `--from`, `$PI_CODING_AGENT_DIR`, or `~/.pi/agent`. */
export function piAgentDir(from: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (from) return resolve(from.replace(/^~(?=\/|$)/, homedir()));
  const dir = env.PI_CODING_AGENT_DIR;
  return dir ? resolve(dir.replace(/^~(?=\/|$)/, homedir())) : join(homedir(), ".pi", "agent");
}

function parse(argv: string[]): Options | string {
  const options: Options = { dryRun: false, force: false, project: false };
  const [what, ...rest] = argv;
  if (what === undefined) return "name what to import: knightcode import pi";
  if (what !== "pi")
    return `cannot import from "${what}": only pi's setup can be imported (knightcode import pi)`;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === "--dry-run" || arg === "-n") options.dryRun = true;
    else if (arg === "--force" || arg === "-f") options.force = true;
    else if (arg === "--sessions") options.sessions = true;
    else if (arg === "--no-sessions") options.sessions = false;
    else if (arg === "--project" || arg === "-l") options.project = true;
    else if (arg === "--trust-project" || arg === "--approve") options.trustProject = true;
    else if (arg === "--no-trust-project" || arg === "--no-approve") options.trustProject = false;
    else if (arg === "--from") {
      const value = rest[++i];
      if (value === undefined || value === "") return "--from needs pi's agent folder";
      options.from = value;
    } else if (arg.startsWith("--from=")) options.from = arg.slice("--from=".length);
    else if (arg.startsWith("-")) return `unknown option ${arg}`;
    else return `unexpected ${arg}`;
  }
  if (options.project && options.from !== undefined) {
    return "--project reads the project's .pi/ folder; --from names pi's agent folder, so give one of them";
  }
  if (options.project && options.sessions === true) {
    return "--sessions imports the sessions of pi's agent folder, which --project does not read";
  }
  return options;
}

/** `knightcode import ...`; returns the exit code (1 when a file could not be imported, 2 for usage). */
export async function importCommand(argv: string[], io: Output, cwd = process.cwd()): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    io.out(IMPORT_USAGE);
    return 0;
  }
  const options = parse(argv);
  if (typeof options === "string") {
    io.err(`knightcode import: ${options}\n${IMPORT_USAGE}`);
    return 2;
  }
  const plugin = await import("@knightcodeai/cli/plugin");
  const kit = await import("@knightcodeai/cli/kit");
  await loadImportHelpers();
  const agentDir = plugin.resolveAgentDir();
  let plan: Plan;
  if (options.project) {
    const piDir = join(resolve(cwd), ".pi");
    if (!isDirectory(piDir)) {
      io.err(`knightcode import: this folder has no .pi/ folder (${piDir}); nothing to import\n`);
      return 1;
    }
    const trusted = plugin.knownProjectTrust({
      agentDir,
      cwd,
      ...(options.trustProject !== undefined ? { approve: options.trustProject } : {}),
    });
    if (!trusted) {
      io.err(
        `knightcode import: ${resolve(cwd)} is not a trusted project, so its .pi/ settings and resources are not ` +
          "imported (a project's settings run code and change KnightCode's behaviour). Trust it first: /trust in " +
          "the interactive mode (or open it once and choose to trust it), or run this command with " +
          "--trust-project.\n",
      );
      return 1;
    }
    plan = new Plan(plugin, kit, options, {
      piDir,
      targetDir: plugin.projectConfigDir(cwd),
      scope: "project",
      cwd,
    });
  } else {
    const piDir = piAgentDir(options.from);
    if (!isDirectory(piDir)) {
      io.err(
        `knightcode import: no pi agent folder at ${piDir}${options.from ? "" : " (give it with --from <dir>, or set PI_CODING_AGENT_DIR)"}\n`,
      );
      return 1;
    }
    if (resolve(piDir) === resolve(agentDir)) {
      io.err(
        `knightcode import: pi's folder ${piDir} is KnightCode's agent folder too; there is nothing to import\n`,
      );
      return 1;
    }
    plan = new Plan(plugin, kit, options, { piDir, targetDir: agentDir, scope: "global", cwd });
  }
  plan.build();
  if (!options.dryRun) plan.write();
  if (!options.project && options.sessions !== false) await plan.importSessions(agentDir);
  io.out(plan.report());
  const errors = plan.items.filter((i) => i.outcome === "error");
  if (errors.length === 0) return 0;
  io.err(
    `knightcode import: ${errors.length} item${errors.length === 1 ? "" : "s"} could not be imported: ${[
      ...new Set(errors.map((e) => e.source)),
    ].join(", ")} (see above); the rest was ${options.dryRun ? "planned" : "imported"}\n`,
  );
  return 1;
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

// ---- What maps to what ----------------------------------------------------------------------------------------

/** Settings whose meaning is the same in pi and KnightCode, taken whole. */
const SAME_SETTINGS = new Set([
  "defaultProvider",
  "defaultModel",
  "defaultThinkingLevel",
  "enabledModels",
  "theme",
  "steeringMode",
  "followUpMode",
  "transport",
  "enableSkillCommands",
  "defaultTools",
  "doubleEscapeAction",
  "treeFilterMode",
  "quietStartup",
  "defaultProjectTrust",
]);

/** Setting groups taken key by key: the sub-keys both have. Others in the group are reported. */
const SAME_GROUPS: Record<string, readonly string[]> = {
  compaction: ["enabled", "reserveTokens", "keepRecentTokens"],
  retry: ["enabled", "maxRetries", "baseDelayMs", "maxDelayMs"],
  images: ["autoResize", "blockImages"],
  terminal: ["showImages", "imageWidthCells"],
  cacheWarming: ["enabled", "intervalMs", "maxRefreshes"],
};

const RESOURCE_LISTS = ["extensions", "skills", "prompts", "themes"] as const;

/** pi's subscription sign-ins KnightCode can use, by pi's provider name. */
const OAUTH_PROVIDERS: Record<string, { provider: string; label: string }> = {
  anthropic: { provider: "anthropic", label: "Claude subscription" },
  "openai-codex": { provider: "openai", label: "ChatGPT subscription" },
  "github-copilot": { provider: "github-copilot", label: "GitHub Copilot subscription" },
};

/**
 * `defaultProvider` and `enabledModels` with pi's provider names that are another KnightCode provider's in
 * KnightCode's (`openai-codex/gpt-5.5` is `openai/gpt-5.5`); other settings and names as they are. The value itself
 * when nothing is renamed.
 */
function withKnightCodeProviders(key: string, value: unknown): unknown {
  const rename = (provider: string) => {
    const known = OAUTH_PROVIDERS[provider];
    return known && known.provider !== provider ? known.provider : provider;
  };
  if (key === "defaultProvider" && typeof value === "string") return rename(value);
  if (key === "enabledModels" && Array.isArray(value)) {
    const renamed = value.map((entry) => {
      if (typeof entry !== "string" || !entry.includes("/")) return entry;
      const slash = entry.indexOf("/");
      return `${rename(entry.slice(0, slash))}${entry.slice(slash)}`;
    });
    return renamed.some((entry, i) => entry !== value[i]) ? renamed : value;
  }
  return value;
}

/** The wire APIs KnightCode implements (a models.json provider with another has nothing to serve it). */
const KNOWN_APIS = new Set(["openai-completions", "openai-responses", "anthropic-messages"]);
/** The built-in providers (a models.json entry for one of them may leave out `api`). */
const BUILTIN_PROVIDERS = new Set(["anthropic", "openai", "github-copilot"]);

/** The interactive mode's own key bindings (builtin:mode-interactive's APP_KEYBINDINGS; a test holds them equal). */
export const KNIGHTCODE_APP_BINDINGS: readonly string[] = [
  "app.interrupt",
  "app.clear",
  "app.exit",
  "app.followUp",
  "app.tools.expand",
  "app.thinking.toggle",
  "app.thinking.cycle",
  "app.model.cycle",
  "app.clipboard.pasteImage",
  "app.editor.external",
  "app.suspend",
  "app.model.select",
  "app.message.dequeue",
];

/** pi's binding names that KnightCode spells differently. */
const RENAMED_BINDINGS: Record<string, string> = {
  "app.message.followUp": "app.followUp",
  "app.model.cycleForward": "app.model.cycle",
};

/** pi's names from before its bindings were namespaced (pi renames them itself at start) that are not a `tui.*` name. */
const LEGACY_APP_BINDINGS: Record<string, string> = {
  interrupt: "app.interrupt",
  clear: "app.clear",
  exit: "app.exit",
  suspend: "app.suspend",
  cycleThinkingLevel: "app.thinking.cycle",
  cycleModelForward: "app.model.cycle",
  selectModel: "app.model.select",
  expandTools: "app.tools.expand",
  toggleThinking: "app.thinking.toggle",
  externalEditor: "app.editor.external",
  followUp: "app.followUp",
  dequeue: "app.message.dequeue",
  pasteImage: "app.clipboard.pasteImage",
};

/**
 * KnightCode's name for a pi binding name: the same, a renamed one, or for pi's old plain names (`cursorUp`,
 * `selectConfirm`, `expandTools`) the namespaced name they stand for.
 */
function bindingName(name: string, tui: Record<string, unknown>): string {
  if (RENAMED_BINDINGS[name]) return RENAMED_BINDINGS[name];
  if (name.includes(".")) return name;
  if (LEGACY_APP_BINDINGS[name]) return LEGACY_APP_BINDINGS[name];
  for (const group of ["editor", "input"]) {
    if (Object.hasOwn(tui, `tui.${group}.${name}`)) return `tui.${group}.${name}`;
  }
  const select = /^select([A-Z].*)$/.exec(name)?.[1];
  if (select) {
    const candidate = `tui.select.${select[0]!.toLowerCase()}${select.slice(1)}`;
    if (Object.hasOwn(tui, candidate)) return candidate;
  }
  return name;
}

/** Text files of the agent folder (or `.pi/`) KnightCode reads under the same name. */
const TEXT_FILES_GLOBAL = ["AGENTS.md", "CLAUDE.md", "SYSTEM.md", "APPEND_SYSTEM.md"];
const TEXT_FILES_PROJECT = ["SYSTEM.md", "APPEND_SYSTEM.md"];

/** Masks a secret as the rest of KnightCode does (`****` and the last four characters). */
function masked(kit: Kit, value: unknown): string {
  return typeof value === "string" ? kit.maskSecret(value) : "****";
}

/** A value as the report shows it: secrets (keys ending in `Key`, tokens, secrets, passwords) masked. */
export function showValue(value: unknown, mask: (v: unknown) => string, key = ""): string {
  if (/(key|token|secret|password)$/i.test(key)) return mask(value);
  if (Array.isArray(value)) return `[${value.map((v) => showValue(v, mask)).join(", ")}]`;
  if (isObject(value)) {
    return `{${Object.entries(value)
      .map(([k, v]) => `${k}: ${showValue(v, mask, k)}`)
      .join(", ")}}`;
  }
  return JSON.stringify(value) ?? String(value);
}

interface Target {
  piDir: string;
  targetDir: string;
  scope: "global" | "project";
  cwd: string;
}

/** A KnightCode JSON file being changed: what it holds, whether it changed, or why it cannot be touched. */
class TargetFile {
  value: Json = {};
  changed = false;
  problem: string | undefined;
  existed = false;

  constructor(
    readonly path: string,
    kit: Kit,
    readonly mode?: number,
  ) {
    const read = kit.readJsonObjectFile(path);
    if (read.status === "ok") {
      this.value = read.value;
      this.existed = true;
    } else if (read.status === "invalid") this.problem = read.message;
  }
}

class Plan {
  readonly items: ImportItem[] = [];
  private readonly files = new Map<string, TargetFile>();
  private readonly copies: { from: string; to: string; source: string; what: string }[] = [];

  constructor(
    private readonly plugin: Plugin,
    private readonly kit: Kit,
    private readonly options: Options,
    private readonly target: Target,
  ) {}

  private add(source: string, what: string, outcome: Outcome, detail?: string): void {
    this.items.push({ source, what, outcome, ...(detail !== undefined ? { detail } : {}) });
  }

  private file(name: string, mode?: number): TargetFile {
    let file = this.files.get(name);
    if (!file) {
      file = new TargetFile(join(this.target.targetDir, name), this.kit, mode);
      this.files.set(name, file);
    }
    return file;
  }

  /** pi's JSON file, or undefined (missing, or reported as an error). */
  private readPi(name: string): Json | undefined {
    const path = join(this.target.piDir, name);
    const read = this.kit.readJsonObjectFile(path);
    if (read.status === "missing") return undefined;
    if (read.status === "invalid") {
      this.add(name, name, "error", `${read.message}; nothing of this file was imported`);
      return undefined;
    }
    return read.value;
  }

  private readonly reportedBroken = new Set<string>();

  /** An item whose KnightCode file cannot be changed: the file's problem in full the first time, briefly after. */
  private brokenTarget(source: string, what: string, file: TargetFile): void {
    const first = !this.reportedBroken.has(file.path);
    this.reportedBroken.add(file.path);
    this.add(
      source,
      what,
      "error",
      first
        ? `${file.problem}; KnightCode's file was left as it is`
        : `${file.path} cannot be changed (see above)`,
    );
  }

  /** Whether an entry of a KnightCode file may be written: not there yet, or `--force`. */
  private mayWrite(source: string, what: string, file: TargetFile, present: boolean, where: string): boolean {
    if (file.problem) {
      this.brokenTarget(source, what, file);
      return false;
    }
    if (present && !this.options.force) {
      this.add(source, what, "skipped", `already in ${where} (--force replaces it)`);
      return false;
    }
    return true;
  }

  build(): void {
    if (this.target.scope === "global") {
      this.importAuth();
      this.importModels();
    }
    this.importSettings();
    this.importResourceFolders();
    this.importMcp();
    if (this.target.scope === "global") {
      this.importKeybindings();
      this.reportTrust();
    }
    this.importTextFiles();
  }

  // ---- auth.json ----

  private importAuth(): void {
    const pi = this.readPi("auth.json");
    if (!pi) return;
    const auth = this.file("auth.json", 0o600);
    const filled = new Map<string, string>();
    for (const [name, entry] of Object.entries(pi)) {
      if (!isObject(entry)) {
        this.add("auth.json", name, "not-importable", "the entry is not an object");
        continue;
      }
      const mapped = this.mapCredential(name, entry);
      if ("reason" in mapped) {
        this.add("auth.json", name, "not-importable", mapped.reason);
        continue;
      }
      const { provider, credential, label, notes } = mapped;
      const shown = `${provider === name ? name : `${name} → ${provider}`}`;
      const earlier = filled.get(provider);
      if (earlier !== undefined) {
        this.add(
          "auth.json",
          shown,
          "skipped",
          `pi's "${earlier}" entry already gives ${provider} a credential`,
        );
        continue;
      }
      if (
        !this.mayWrite(
          "auth.json",
          shown,
          auth,
          Object.hasOwn(auth.value, provider),
          "KnightCode's auth.json",
        )
      ) {
        continue;
      }
      filled.set(provider, name);
      auth.value[provider] = credential;
      auth.changed = true;
      const expires =
        typeof credential.expires === "number"
          ? credential.expires > Date.now()
            ? `, expires ${new Date(credential.expires).toISOString()}`
            : ", expired (renewed on the next request)"
          : "";
      this.add(
        "auth.json",
        shown,
        "imported",
        `${label} ${masked(this.kit, credential.key)}${expires}${notes.length ? `; ${notes.join("; ")}` : ""}`,
      );
    }
  }

  private mapCredential(
    name: string,
    entry: Json,
  ):
    | { provider: string; credential: Json & { key: string }; label: string; notes: string[] }
    | { reason: string } {
    const type = entry.type ?? "api_key";
    if (type === "api_key") {
      const key = entry.key;
      if (typeof key !== "string" || key.trim() === "") return { reason: "the API key entry has no key" };
      if (key.startsWith("!")) {
        return {
          reason:
            "the key is a shell command (pi runs it for the key); KnightCode's auth.json holds the key itself: " +
            `store it with knightcode login ${name} --with-api-key`,
        };
      }
      if (/^[A-Z_][A-Z0-9_]*$/.test(key)) {
        return {
          reason:
            `the key names the environment variable ${key}; KnightCode's auth.json holds the key itself: keep the ` +
            `variable set and name it as the provider's apiKey in models.json, or store the key with knightcode login ${name}`,
        };
      }
      const notes: string[] = [];
      if (isObject(entry.env) && Object.keys(entry.env).length > 0) {
        notes.push(
          `its env values (${Object.keys(entry.env).join(", ")}) were not imported: KnightCode keeps no per-provider environment in auth.json`,
        );
      }
      if (!BUILTIN_PROVIDERS.has(name) && !this.modelProviders().has(name)) {
        notes.push(`KnightCode has no provider "${name}" yet: describe it in models.json to use the key`);
      }
      return { provider: name, credential: { type: "api_key", key }, label: "API key", notes };
    }
    if (type !== "oauth") return { reason: `unknown credential type ${JSON.stringify(type)}` };
    const mapping = OAUTH_PROVIDERS[name];
    if (!mapping) {
      return {
        reason: `KnightCode cannot sign in to ${name} or renew its tokens (its sign-ins: ${Object.values(
          OAUTH_PROVIDERS,
        )
          .map((m) => m.provider)
          .join(", ")})`,
      };
    }
    const access = typeof entry.key === "string" && entry.key ? entry.key : entry.access;
    if (typeof access !== "string" || !access) return { reason: "the sign-in has no access token" };
    const credential: Json & { key: string } = { type: "oauth", key: access };
    if (typeof entry.refresh === "string" && entry.refresh) credential.refresh = entry.refresh;
    if (typeof entry.expires === "number") credential.expires = entry.expires;
    const notes: string[] = [];
    if (mapping.provider === "openai") {
      let accountId = typeof entry.accountId === "string" && entry.accountId ? entry.accountId : undefined;
      if (!accountId) {
        const auth = this.kit.decodeJwtClaims(access)?.["https://api.openai.com/auth"];
        const id = isObject(auth) ? auth.chatgpt_account_id : undefined;
        accountId = typeof id === "string" && id ? id : undefined;
      }
      if (!accountId) {
        return {
          reason: "the ChatGPT sign-in names no account (no accountId); sign in with knightcode login openai",
        };
      }
      credential.accountId = accountId;
    }
    if (mapping.provider === "github-copilot") {
      const url = entry.enterpriseUrl ?? entry.enterpriseDomain;
      if (typeof url === "string" && url.trim()) {
        let host: string | undefined;
        try {
          host = new URL(url.includes("://") ? url : `https://${url.trim()}`).hostname;
        } catch {
          host = undefined;
        }
        if (!host) return { reason: `its enterprise address ${JSON.stringify(url)} is not a domain` };
        if (host !== "github.com") credential.enterpriseDomain = host;
      }
      // The models pi read for the account (KnightCode keeps them under the same name and reads them again at
      // the next renewal).
      const ids = entry.availableModelIds;
      if (Array.isArray(ids) && ids.every((id) => typeof id === "string")) credential.availableModelIds = ids;
    }
    if (!credential.refresh) notes.push("no refresh token: sign in again once it expires");
    return { provider: mapping.provider, credential, label: mapping.label, notes };
  }

  private modelProvidersCache: Set<string> | undefined;

  /** The providers KnightCode's models.json names (as it will be after this import). */
  private modelProviders(): Set<string> {
    if (!this.modelProvidersCache) {
      const names = new Set<string>();
      const ours = this.kit.readJsonObjectFile(join(this.target.targetDir, "models.json"));
      if (ours.status === "ok" && isObject(ours.value.providers)) {
        for (const n of Object.keys(ours.value.providers)) names.add(n);
      }
      const theirs = this.kit.readJsonObjectFile(join(this.target.piDir, "models.json"));
      if (theirs.status === "ok" && isObject(theirs.value.providers)) {
        for (const n of Object.keys(theirs.value.providers)) names.add(n);
      }
      this.modelProvidersCache = names;
    }
    return this.modelProvidersCache;
  }

  // ---- models.json ----

  private importModels(): void {
    const pi = this.readPi("models.json");
    if (!pi) return;
    const models = this.file("models.json");
    for (const key of Object.keys(pi)) {
      if (key !== "providers")
        this.add("models.json", key, "skipped", "KnightCode's models.json has no such key");
    }
    if (pi.providers === undefined) return;
    if (!isObject(pi.providers)) {
      this.add("models.json", "providers", "error", 'models.json: "providers" must be an object');
      return;
    }
    if (models.value.providers !== undefined && !isObject(models.value.providers)) {
      models.problem ??= `${models.path}: "providers" must be an object`;
    }
    const ours = isObject(models.value.providers) ? models.value.providers : {};
    for (const [name, raw] of Object.entries(pi.providers)) {
      if (!isObject(raw)) {
        this.add("models.json", `provider ${name}`, "not-importable", "the entry is not an object");
        continue;
      }
      const provider: Json = { ...raw };
      const notes: string[] = [];
      const apis = new Set<string>();
      if (typeof provider.api === "string") apis.add(provider.api);
      if (Array.isArray(provider.models)) {
        for (const m of provider.models) if (isObject(m) && typeof m.api === "string") apis.add(m.api);
      }
      const unknown = [...apis].filter((a) => !KNOWN_APIS.has(a));
      if (unknown.length > 0 && !BUILTIN_PROVIDERS.has(name)) {
        this.add(
          "models.json",
          `provider ${name}`,
          "not-importable",
          `KnightCode implements no ${unknown.join(", ")} API (only ${[...KNOWN_APIS].join(", ")})`,
        );
        continue;
      }
      if (typeof provider.apiKey === "string" && provider.apiKey.startsWith("!")) {
        delete provider.apiKey;
        notes.push(
          "its apiKey is a shell command, which KnightCode does not run: left out (store the key with knightcode login)",
        );
      }
      if (isObject(provider.headers)) {
        const headers = { ...provider.headers };
        for (const [h, v] of Object.entries(headers)) {
          if (typeof v === "string" && v.startsWith("!")) {
            delete headers[h];
            notes.push(`header ${h} is a shell command, which KnightCode does not run: left out`);
          }
        }
        provider.headers = headers;
      }
      const what = `provider ${name}`;
      if (
        !this.mayWrite("models.json", what, models, Object.hasOwn(ours, name), "KnightCode's models.json")
      ) {
        continue;
      }
      ours[name] = provider;
      models.value.providers = ours;
      models.changed = true;
      const count = Array.isArray(provider.models) ? provider.models.length : 0;
      const key =
        typeof provider.apiKey === "string"
          ? /^[A-Z_][A-Z0-9_]*$/.test(provider.apiKey)
            ? `, key from $${provider.apiKey}`
            : `, key ${masked(this.kit, provider.apiKey)}`
          : "";
      this.add(
        "models.json",
        what,
        "imported",
        `${count} model${count === 1 ? "" : "s"}${typeof provider.baseUrl === "string" ? ` at ${provider.baseUrl}` : ""}${key}${notes.length ? `; ${notes.join("; ")}` : ""}`,
      );
    }
  }

  // ---- settings.json ----

  private settingsFile(): TargetFile {
    return this.file("settings.json");
  }

  private checkSetting(value: Json): string | undefined {
    const { Value } = this.typebox;
    if (Value.Check(this.plugin.SettingsFileSchema, value)) return undefined;
    const first = Value.Errors(this.plugin.SettingsFileSchema, value).First();
    return `${first?.path ?? ""} ${first?.message ?? "has the wrong type"}`.trim();
  }

  private get typebox(): typeof import("@sinclair/typebox/value") {
    return typeboxValue;
  }

  private importSettings(): void {
    const pi = this.readPi("settings.json");
    if (!pi) return;
    const settings = this.settingsFile();
    const source = "settings.json";
    for (const [key, value] of Object.entries(pi)) {
      if (SAME_SETTINGS.has(key)) {
        if (key === "defaultProjectTrust" && this.target.scope === "project") {
          this.add(
            source,
            key,
            "not-importable",
            "a project cannot decide its own trust (global settings only)",
          );
          continue;
        }
        if (key === "defaultProjectTrust" && value === "always") {
          this.add(
            source,
            key,
            "not-importable",
            '"always" would trust every project without asking; set it yourself in KnightCode if you mean it',
          );
          continue;
        }
        // pi's provider names that are another KnightCode provider's (its ChatGPT sign-in is `openai` here).
        const imported = withKnightCodeProviders(key, value);
        const shown = (v: unknown) => showValue(v, (x) => masked(this.kit, x), key);
        const problem = this.checkSetting({ [key]: imported });
        if (problem) {
          this.add(source, key, "not-importable", `KnightCode does not take this value: ${problem}`);
          continue;
        }
        if (!this.mayWrite(source, key, settings, Object.hasOwn(settings.value, key), this.settingsWhere())) {
          continue;
        }
        settings.value[key] = imported;
        settings.changed = true;
        const note = imported === value ? "" : ` (pi's ${shown(value)})`;
        this.add(source, key, "imported", `${shown(imported)}${note}`);
      } else if (Object.hasOwn(SAME_GROUPS, key)) {
        this.importGroup(key, value);
      } else if ((RESOURCE_LISTS as readonly string[]).includes(key)) {
        this.importList(source, key as (typeof RESOURCE_LISTS)[number], value, this.target.piDir);
      } else if (key === "packages") {
        this.importPackages(value);
      } else {
        this.add(source, key, "skipped", "KnightCode has no such setting");
      }
    }
  }

  private settingsWhere(): string {
    return this.target.scope === "project"
      ? "the project's .knightcode/settings.json"
      : "KnightCode's settings.json";
  }

  private importGroup(group: string, value: unknown): void {
    const source = "settings.json";
    if (!isObject(value)) {
      this.add(source, group, "not-importable", "pi's value is not an object");
      return;
    }
    const settings = this.settingsFile();
    const known = SAME_GROUPS[group]!;
    for (const [sub, v] of Object.entries(value)) {
      const key = `${group}.${sub}`;
      if (!known.includes(sub)) {
        this.add(source, key, "skipped", "KnightCode has no such setting");
        continue;
      }
      const problem = this.checkSetting({ [group]: { [sub]: v } });
      if (problem) {
        this.add(source, key, "not-importable", `KnightCode does not take this value: ${problem}`);
        continue;
      }
      const ours = settings.value[group];
      if (ours !== undefined && !isObject(ours)) {
        this.add(
          source,
          key,
          "error",
          `KnightCode's ${group} setting is not an object; it was left as it is`,
        );
        continue;
      }
      const present = isObject(ours) && Object.hasOwn(ours, sub);
      if (!this.mayWrite(source, key, settings, present, this.settingsWhere())) continue;
      settings.value[group] = { ...(isObject(ours) ? ours : {}), [sub]: v };
      settings.changed = true;
      this.add(
        source,
        key,
        "imported",
        showValue(v, (x) => masked(this.kit, x), sub),
      );
    }
  }

  /**
   * A path of pi's settings as KnightCode's settings file must write it: relative paths are pi's (relative to its
   * agent folder or `.pi/`), so they become absolute (user settings) or relative to `.knightcode/` (a project's,
   * which stays movable with the checkout). Patterns keep their `!`/`+`/`-`; a glob without a folder matches file
   * names anywhere and stays as it is; `builtin:` entries and `~/` paths stay too.
   */
  private rebase(entry: string, base: string): string {
    const [, prefix = "", rest = ""] = /^([!+-]?)(.*)$/s.exec(entry) ?? [];
    if (rest.startsWith("builtin:") || rest.startsWith("~/") || rest === "~" || isAbsolute(rest))
      return entry;
    if ((rest.includes("*") || rest.includes("?")) && !rest.includes("/")) return entry;
    const absolute = resolve(base, rest);
    if (this.target.scope === "project") {
      const rel = relative(this.target.targetDir, absolute);
      return `${prefix}${rel === "" ? "." : rel}`;
    }
    return `${prefix}${absolute}`;
  }

  private importList(
    source: string,
    key: (typeof RESOURCE_LISTS)[number],
    value: unknown,
    base: string,
  ): void {
    if (!Array.isArray(value) || !value.every((v) => typeof v === "string" && v !== "")) {
      this.add(source, key, "not-importable", "pi's value is not a list of paths");
      return;
    }
    this.addToList(
      source,
      key,
      value.map((v) => this.rebase(v, base)),
    );
  }

  private addToList(source: string, key: string, entries: string[], detail?: string): void {
    const settings = this.settingsFile();
    if (settings.problem) {
      this.brokenTarget(source, key, settings);
      return;
    }
    if (settings.value[key] !== undefined && !Array.isArray(settings.value[key])) {
      this.add(source, key, "error", `KnightCode's ${key} setting is not a list; it was left as it is`);
      return;
    }
    const ours = Array.isArray(settings.value[key]) ? (settings.value[key] as unknown[]) : [];
    const added: string[] = [];
    const present: string[] = [];
    const list = [...ours];
    for (const entry of entries) {
      if (list.includes(entry)) present.push(entry);
      else {
        list.push(entry);
        added.push(entry);
      }
    }
    if (added.length > 0) {
      settings.value[key] = list;
      settings.changed = true;
      this.add(source, key, "imported", `${detail ? `${detail}: ` : ""}added ${added.join(", ")}`);
    }
    if (present.length > 0) {
      this.add(source, key, "skipped", `already listed: ${present.join(", ")}`);
    }
  }

  private importPackages(value: unknown): void {
    const source = "settings.json";
    if (!Array.isArray(value)) {
      this.add(source, "packages", "not-importable", "pi's value is not a list");
      return;
    }
    const settings = this.settingsFile();
    if (settings.problem) {
      this.brokenTarget(source, "packages", settings);
      return;
    }
    const base = this.target.piDir;
    const ourBase = this.target.targetDir;
    const identity = (raw: string, dir: string) => {
      try {
        return this.plugin.parsePackageSource(raw, dir).identity;
      } catch {
        return undefined;
      }
    };
    if (settings.value.packages !== undefined && !Array.isArray(settings.value.packages)) {
      this.add(
        source,
        "packages",
        "error",
        "KnightCode's packages setting is not a list; it was left as it is",
      );
      return;
    }
    const ours = Array.isArray(settings.value.packages) ? [...(settings.value.packages as unknown[])] : [];
    const have = new Set(
      ours
        .map((p) =>
          typeof p === "string" ? p : isObject(p) && typeof p.source === "string" ? p.source : undefined,
        )
        .filter((p): p is string => p !== undefined)
        .map((p) => identity(p, ourBase))
        .filter((p): p is string => p !== undefined),
    );
    for (const pkg of value) {
      const raw =
        typeof pkg === "string"
          ? pkg
          : isObject(pkg) && typeof pkg.source === "string"
            ? pkg.source
            : undefined;
      if (raw === undefined || raw.trim() === "") {
        this.add(source, `packages: ${JSON.stringify(pkg)}`, "not-importable", "no package source");
        continue;
      }
      let parsed: ReturnType<Plugin["parsePackageSource"]>;
      try {
        parsed = this.plugin.parsePackageSource(raw, base);
      } catch (error) {
        this.add(source, `package ${raw}`, "not-importable", (error as Error).message);
        continue;
      }
      // A local package is pi's path: rebased so it still names the same folder.
      const sourceText = parsed.kind === "local" ? this.rebase(raw, base) : raw;
      const entry = typeof pkg === "string" ? sourceText : { ...(pkg as Json), source: sourceText };
      const problem = this.checkSetting({ packages: [entry] });
      if (problem) {
        this.add(
          source,
          `package ${raw}`,
          "not-importable",
          `KnightCode does not take this entry: ${problem}`,
        );
        continue;
      }
      if (have.has(parsed.identity)) {
        this.add(source, `package ${raw}`, "skipped", `already in ${this.settingsWhere()}`);
        continue;
      }
      have.add(parsed.identity);
      ours.push(entry);
      settings.value.packages = ours;
      settings.changed = true;
      this.add(
        source,
        `package ${raw}`,
        "imported",
        parsed.kind === "local"
          ? `added as ${sourceText}`
          : "added; KnightCode installs it when a session next starts (or run knightcode update)",
      );
    }
  }

  // ---- pi's resource folders ----

  private importResourceFolders(): void {
    for (const kind of RESOURCE_LISTS) {
      const folder = join(this.target.piDir, kind);
      if (!isDirectory(folder)) continue;
      let entries: string[];
      try {
        entries = readdirSync(folder).filter((n) => !n.startsWith("."));
      } catch (error) {
        this.add(`${kind}/`, kind, "error", `${folder} cannot be read: ${(error as Error).message}`);
        continue;
      }
      const shown = `${this.target.scope === "project" ? ".pi" : "pi"}/${kind}/`;
      if (entries.length === 0) {
        this.add(shown, kind, "skipped", "the folder is empty");
        continue;
      }
      this.addToList(
        shown,
        kind,
        [this.rebase(kind, this.target.piDir)],
        `${entries.length} item${entries.length === 1 ? "" : "s"}, loaded from where they are`,
      );
    }
  }

  // ---- mcp.json ----

  private importMcp(): void {
    const pi = this.readPi("mcp.json");
    if (!pi) return;
    const mcp = this.file("mcp.json");
    for (const key of Object.keys(pi)) {
      if (key !== "mcpServers") this.add("mcp.json", key, "skipped", "KnightCode's mcp.json has no such key");
    }
    if (pi.mcpServers === undefined) return;
    if (!isObject(pi.mcpServers)) {
      this.add("mcp.json", "mcpServers", "error", 'mcp.json: "mcpServers" must be an object');
      return;
    }
    if (mcp.value.mcpServers !== undefined && !isObject(mcp.value.mcpServers)) {
      mcp.problem ??= `${mcp.path}: "mcpServers" must be an object`;
    }
    const ours = isObject(mcp.value.mcpServers) ? mcp.value.mcpServers : {};
    for (const [name, entry] of Object.entries(pi.mcpServers)) {
      const what = `server ${name}`;
      const problem = this.plugin.validateMcpEntry(name, entry, this.target.scope);
      if (problem) {
        this.add("mcp.json", what, "not-importable", problem);
        continue;
      }
      if (
        !this.mayWrite(
          "mcp.json",
          what,
          mcp,
          Object.hasOwn(ours, name),
          `KnightCode's ${this.target.scope === "project" ? ".knightcode/" : ""}mcp.json`,
        )
      ) {
        continue;
      }
      ours[name] = entry;
      mcp.value.mcpServers = ours;
      mcp.changed = true;
      const e = entry as Json;
      this.add(
        "mcp.json",
        what,
        "imported",
        typeof e.url === "string"
          ? `HTTP ${e.url}`
          : `stdio ${[e.command, ...(Array.isArray(e.args) ? e.args : [])].join(" ")}`,
      );
    }
  }

  // ---- keybindings.json ----

  private importKeybindings(): void {
    const pi = this.readPi("keybindings.json");
    if (!pi) return;
    const file = this.file("keybindings.json");
    const known = new Set([...KNIGHTCODE_APP_BINDINGS, ...Object.keys(this.tuiBindings)]);
    const names = Object.keys(pi);
    for (const [name, keys] of Object.entries(pi)) {
      const ours = bindingName(name, this.tuiBindings);
      const what = ours === name ? name : `${name} → ${ours}`;
      // pi itself lets the new name win over an old one naming the same binding.
      if (ours !== name && !RENAMED_BINDINGS[name] && names.includes(ours)) {
        this.add("keybindings.json", what, "skipped", `pi's file also has ${ours}, which pi uses instead`);
        continue;
      }
      if (!known.has(ours)) {
        this.add(
          "keybindings.json",
          name,
          "not-importable",
          "KnightCode has no such binding (/hotkeys lists KnightCode's)",
        );
        continue;
      }
      if (!(typeof keys === "string" || (Array.isArray(keys) && keys.every((k) => typeof k === "string")))) {
        this.add("keybindings.json", what, "not-importable", "the value is not a key or a list of keys");
        continue;
      }
      if (
        !this.mayWrite(
          "keybindings.json",
          what,
          file,
          Object.hasOwn(file.value, ours),
          "KnightCode's keybindings.json",
        )
      ) {
        continue;
      }
      file.value[ours] = keys;
      file.changed = true;
      this.add("keybindings.json", what, "imported", Array.isArray(keys) ? keys.join(", ") : keys);
    }
  }

  private get tuiBindings(): Record<string, unknown> {
    return tuiBindings ?? {};
  }

  // ---- trust.json, text files ----

  private reportTrust(): void {
    const read = this.kit.readJsonObjectFile(join(this.target.piDir, "trust.json"));
    if (read.status === "missing") return;
    this.add(
      "trust.json",
      "project trust decisions",
      "not-importable",
      "trust is a security decision KnightCode asks for itself: trust each project again (/trust, or --trust-project)",
    );
  }

  private importTextFiles(): void {
    const names = this.target.scope === "project" ? TEXT_FILES_PROJECT : TEXT_FILES_GLOBAL;
    for (const name of names) {
      const from = join(this.target.piDir, name);
      if (!existsSync(from)) continue;
      const to = join(this.target.targetDir, name);
      if (existsSync(to) && !this.options.force) {
        this.add(name, name, "skipped", `already in ${to} (--force replaces it)`);
        continue;
      }
      this.copies.push({ from, to, source: name, what: name });
      this.add(name, name, "imported", `copied to ${to}`);
    }
  }

  // ---- sessions ----

  async importSessions(agentDir: string): Promise<void> {
    const settings = this.kit.readJsonObjectFile(join(this.target.piDir, "settings.json"));
    await importPiSessions(
      {
        plugin: this.plugin,
        piDir: this.target.piDir,
        agentDir,
        dryRun: this.options.dryRun,
        add: (source, what, outcome, detail) => this.add(source, what, outcome, detail),
      },
      settings.status === "ok" ? settings.value : undefined,
    );
  }

  // ---- writing and the report ----

  write(): void {
    for (const file of this.files.values()) {
      if (!file.changed || file.problem) continue;
      try {
        this.kit.writeFileAtomic(
          file.path,
          `${JSON.stringify(file.value, null, 2)}\n`,
          file.mode !== undefined ? { mode: file.mode } : {},
        );
      } catch (error) {
        this.add(file.path, file.path, "error", `could not be written: ${(error as Error).message}`);
      }
    }
    for (const copy of this.copies) {
      try {
        this.kit.writeFileAtomic(copy.to, readFileSync(copy.from, "utf8"));
      } catch (error) {
        this.add(copy.source, copy.what, "error", `could not be copied: ${(error as Error).message}`);
      }
    }
  }

  report(): string {
    const dry = this.options.dryRun;
    const words: Record<Outcome, string> = {
      imported: dry ? "would import" : "imported",
      skipped: "skipped",
      "not-importable": "not imported",
      error: "error",
    };
    const lines = [
      `${dry ? "Dry run (nothing written): " : ""}pi's setup from ${this.target.piDir} into ${this.target.targetDir}`,
    ];
    const bySource = new Map<string, ImportItem[]>();
    for (const item of this.items) {
      const list = bySource.get(item.source) ?? [];
      list.push(item);
      bySource.set(item.source, list);
    }
    if (bySource.size === 0)
      lines.push("Nothing to import: pi's folder holds none of the files KnightCode reads.");
    for (const [source, items] of bySource) {
      lines.push(source);
      for (const item of items) {
        lines.push(
          `  ${words[item.outcome].padEnd(12)} ${item.what}${item.detail ? `: ${item.detail}` : ""}`,
        );
      }
    }
    const count = (o: Outcome) => this.items.filter((i) => i.outcome === o).length;
    lines.push(
      `${count("imported")} ${dry ? "to import" : "imported"}, ${count("skipped")} skipped, ${count("not-importable")} not importable, ${count("error")} error${count("error") === 1 ? "" : "s"}`,
    );
    if (!dry && this.items.some((i) => i.outcome === "imported" && i.what.startsWith("package "))) {
      lines.push("Packages install when a session next starts (knightcode --offline skips that).");
    }
    return `${lines.join("\n")}\n`;
  }
}

let typeboxValue: typeof import("@sinclair/typebox/value");
let tuiBindings: Record<string, unknown> | undefined;

/** Loads what the plan needs besides the package entries (TypeBox's checker, pi-tui's binding names). */
export async function loadImportHelpers(): Promise<void> {
  typeboxValue = await import("@sinclair/typebox/value");
  const tui = await import("@knightcodeai/cli/tui");
  tuiBindings = tui.TUI_KEYBINDINGS as Record<string, unknown>;
}
