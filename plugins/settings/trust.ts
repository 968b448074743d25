/**
 * Project trust: whether a project's own settings and resources (`.knightcode/settings.json`, extensions, MCP
 * servers, skills, prompts, themes, SYSTEM.md, APPEND_SYSTEM.md, `.agents/skills/` in the cwd and above) may load. They can run code in the KnightCode
 * process, so a project never decides this for itself.
 *
 * Decision order (the peer's, pi 0.79+):
 *   1. no protected inputs → nothing to decide (`not-needed`, trusted: false: there is nothing to load anyway);
 *   2. `--trust-project` / `--no-trust-project` (old names `--approve` / `--no-approve`);
 *   3. `project_trust` handlers (personal and command-line extensions only, as the spec says): the first `yes`/`no` wins,
 *      `undecided` passes, `remember: true` saves the decision;
 *   4. the closest saved decision in `<agentDir>/trust.json` (the cwd or its nearest ancestor);
 *   5. `defaultProjectTrust` from the global settings or overrides: `always`, `never`, or `ask` (a dialog when a
 *      person is there, otherwise untrusted with one warning).
 *
 * Context files (AGENTS.md / CLAUDE.md) are not protected inputs: they load regardless of trust.
 */
import { existsSync, renameSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { ProjectTrustResult } from "../../kernel/api/events.js";
import type { GateOptions } from "../../kernel/events/hook-bus.js";
import { writeFileAtomic } from "../kit/files/atomic-write.js";
import { isPlainObject, readJsonObjectFile } from "../kit/files/json-file.js";
import { globalSettingsPath, PROJECT_CONFIG_DIR, trustFilePath } from "./agent-dir.js";
import type { ProjectTrustDefault, Settings } from "./settings.js";

/** The project inputs that need trust, relative to the cwd. A bare `.knightcode` folder does not count. */
export const PROTECTED_INPUTS: readonly string[] = Object.freeze([
  `${PROJECT_CONFIG_DIR}/settings.json`,
  `${PROJECT_CONFIG_DIR}/extensions/`,
  `${PROJECT_CONFIG_DIR}/mcp.json`,
  `${PROJECT_CONFIG_DIR}/skills/`,
  `${PROJECT_CONFIG_DIR}/prompts/`,
  `${PROJECT_CONFIG_DIR}/themes/`,
  `${PROJECT_CONFIG_DIR}/SYSTEM.md`,
  `${PROJECT_CONFIG_DIR}/APPEND_SYSTEM.md`,
]);

/**
 * The protected inputs present in `cwd`, in `PROTECTED_INPUTS` order, then `.agents/skills/` folders in the cwd and
 * the folders above it (builtin:skills loads them only in a trusted project), relative to the cwd. The one in the
 * home folder is the user's own and needs no trust.
 */
export async function findProtectedInputs(cwd: string): Promise<string[]> {
  const root = resolve(cwd);
  // A dozen stat calls: synchronous ones take microseconds, where each promise of fs/promises costs a tenth of a
  // millisecond of a session's start.
  const found = PROTECTED_INPUTS.filter((input) => existsSync(join(root, input)));
  const personal = join(homedir(), ANCESTOR_SKILLS);
  for (let dir = root, up = ""; ; dir = dirname(dir), up += "../") {
    const skills = join(dir, ANCESTOR_SKILLS);
    if (skills !== personal && existsSync(skills)) found.push(`${up}${ANCESTOR_SKILLS}/`);
    if (dirname(dir) === dir) break;
  }
  return found;
}

const ANCESTOR_SKILLS = join(".agents", "skills");

/** What `project_trust` dispatches use: a throwing handler means "no", `undecided` is not a decision. */
export const projectTrustGateOptions: GateOptions<ProjectTrustResult> = Object.freeze({
  failClosed: (): ProjectTrustResult => ({ trusted: "no" }),
  isDecision: (result: ProjectTrustResult) => result?.trusted === "yes" || result?.trusted === "no",
});

/** The subset of `ctx.ui` the trust dialog needs. */
export interface TrustUI {
  confirm(title: string, message?: string): Promise<boolean>;
  select?(title: string, options: string[]): Promise<string | undefined>;
}

export type TrustSource = "flag" | "extension" | "saved" | "default" | "prompt" | "not-needed";

export interface ProjectTrustDecision {
  trusted: boolean;
  source: TrustSource;
  /** True when this decision was written to trust.json. */
  remembered?: boolean;
  /** The protected inputs found in the cwd (empty for `not-needed`). */
  protectedInputs: string[];
}

export interface ResolveProjectTrustOptions {
  cwd: string;
  agentDir: string;
  /** `--approve` → true, `--no-approve` → false, neither → undefined. */
  approve?: boolean;
  /** Settings loaded with `projectTrusted: false` (global file and overrides only). */
  settings: Pick<Settings, "get">;
  /** Runs the `project_trust` gate (e.g. `bus.gate("project_trust", {cwd}, ctx, projectTrustGateOptions)`). */
  handlers?: (event: { cwd: string }) => Promise<ProjectTrustResult | undefined>;
  ui?: TrustUI;
  hasUI: boolean;
  warn(message: string): void;
  /** For tests: the time recorded with a saved decision. */
  now?: () => Date;
}

export const TRUST_PROMPT_TITLE = "Trust this project?";
export const TRUST_CHOICES = Object.freeze({
  once: "Trust once",
  remember: "Trust and remember",
  refuse: "Do not trust",
});

export async function resolveProjectTrust(
  options: ResolveProjectTrustOptions,
): Promise<ProjectTrustDecision> {
  const cwd = resolve(options.cwd);
  // The same message (a malformed trust.json read twice) reaches `warn` once.
  const warned = new Set<string>();
  const warn = (message: string) => {
    if (warned.has(message)) return;
    warned.add(message);
    options.warn(message);
  };
  const protectedInputs = await findProtectedInputs(cwd);
  const decide = (trusted: boolean, source: TrustSource, remembered?: boolean): ProjectTrustDecision =>
    remembered === undefined
      ? { trusted, source, protectedInputs }
      : { trusted, source, remembered, protectedInputs };
  const remember = (trusted: boolean): boolean => {
    try {
      saveTrustDecision({ agentDir: options.agentDir, path: cwd, trusted, warn, now: options.now });
      return true;
    } catch (error) {
      warn(
        `Could not save the trust decision for ${cwd} in ${trustFilePath(options.agentDir)}: ${(error as Error).message}`,
      );
      return false;
    }
  };

  // 1. Nothing protected: nothing is loaded whatever the answer, so nobody is asked.
  if (protectedInputs.length === 0) return decide(false, "not-needed");

  // 2. The command line.
  if (options.approve !== undefined) return decide(options.approve, "flag");

  // 3. Extensions.
  if (options.handlers) {
    let result: ProjectTrustResult | undefined;
    try {
      result = await options.handlers({ cwd });
    } catch (error) {
      warn(`A project_trust handler failed, so ${cwd} is not trusted: ${(error as Error).message}`);
      result = { trusted: "no" };
    }
    if (result?.trusted === "yes" || result?.trusted === "no") {
      const trusted = result.trusted === "yes";
      return result.remember === true
        ? decide(trusted, "extension", remember(trusted))
        : decide(trusted, "extension");
    }
  }

  // 4. A saved decision for the cwd or its closest ancestor.
  const saved = findSavedDecision(readTrustDecisions(options.agentDir, warn), cwd);
  if (saved) return decide(saved.trusted, "saved");

  // 5. The default.
  const fallback = (options.settings.get("defaultProjectTrust") as ProjectTrustDefault | undefined) ?? "ask";
  if (fallback === "always") return decide(true, "default");
  if (fallback === "never") return decide(false, "default");
  if (!options.hasUI || !options.ui) {
    warn(
      `Project resources in ${join(cwd, PROJECT_CONFIG_DIR)} were not loaded: the project is not trusted. ` +
        `Use --trust-project or set "defaultProjectTrust" in ${globalSettingsPath(options.agentDir)}.`,
    );
    return decide(false, "default");
  }
  try {
    return await askPerson(options.ui, cwd, protectedInputs, options.agentDir, decide, remember);
  } catch (error) {
    // A dialog that fails (a host closing, a UI error) leaves the project untrusted.
    warn(`The trust dialog failed, so ${cwd} is not trusted: ${(error as Error).message}`);
    return decide(false, "prompt");
  }
}

async function askPerson(
  ui: TrustUI,
  cwd: string,
  protectedInputs: readonly string[],
  agentDir: string,
  decide: (trusted: boolean, source: TrustSource, remembered?: boolean) => ProjectTrustDecision,
  remember: (trusted: boolean) => boolean,
): Promise<ProjectTrustDecision> {
  const message = trustPromptMessage(cwd, protectedInputs);
  if (ui.select) {
    // One dialog with the three answers. `select` has no message argument, so the title carries it.
    const choice = await ui.select(`${TRUST_PROMPT_TITLE}\n\n${message}`, [
      TRUST_CHOICES.once,
      TRUST_CHOICES.remember,
      TRUST_CHOICES.refuse,
    ]);
    if (choice === TRUST_CHOICES.remember) return decide(true, "prompt", remember(true));
    return decide(choice === TRUST_CHOICES.once, "prompt");
  }
  if (!(await ui.confirm(TRUST_PROMPT_TITLE, message))) return decide(false, "prompt");
  const keep = await ui.confirm(
    "Remember this decision?",
    `Trust ${cwd} in future sessions without asking (saved in ${trustFilePath(agentDir)}).`,
  );
  return keep ? decide(true, "prompt", remember(true)) : decide(true, "prompt");
}

/** The dialog text: the cwd and the protected inputs found. */
export function trustPromptMessage(cwd: string, protectedInputs: readonly string[]): string {
  return [
    `${cwd} has project resources that run code or change how KnightCode behaves:`,
    ...protectedInputs.map((input) => `  - ${input}`),
    "Load them only if you trust the project's authors.",
  ].join("\n");
}

// ---- trust.json --------------------------------------------------------------------------------------

export interface SavedTrustDecision {
  trusted: boolean;
  /** ISO time of the decision. */
  at: string;
}

/** `trust.json`: `{"version": 1, "decisions": {"<absolute path>": {"trusted": true, "at": "<ISO>"}}}`. */
export interface TrustFile {
  version: 1;
  decisions: Record<string, SavedTrustDecision>;
}

/**
 * The saved decisions. A missing file is empty; a malformed file is a warning and reads as empty (saving a
 * decision then replaces it). Entries that are not `{trusted: boolean}` are skipped.
 */
export function readTrustDecisions(
  agentDir: string,
  warn?: (message: string) => void,
): Map<string, SavedTrustDecision> {
  const file = trustFilePath(agentDir);
  const decisions = new Map<string, SavedTrustDecision>();
  const read = readJsonObjectFile(file);
  if (read.status === "missing") return decisions;
  if (read.status === "invalid") {
    warn?.(`${read.message}; saved trust decisions are ignored.`);
    return decisions;
  }
  const { version, decisions: entries } = read.value;
  if (version !== 1 || !isPlainObject(entries)) {
    warn?.(`${file}: expected {"version": 1, "decisions": {...}}; saved trust decisions are ignored.`);
    return decisions;
  }
  for (const [path, entry] of Object.entries(entries)) {
    if (isPlainObject(entry) && typeof entry.trusted === "boolean") {
      decisions.set(resolve(path), {
        trusted: entry.trusted,
        at: typeof entry.at === "string" ? entry.at : "",
      });
    }
  }
  return decisions;
}

/** The decision saved for `cwd` itself or, failing that, for its closest ancestor. */
export function findSavedDecision(
  decisions: ReadonlyMap<string, SavedTrustDecision>,
  cwd: string,
): (SavedTrustDecision & { path: string }) | undefined {
  let dir = resolve(cwd);
  for (;;) {
    const saved = decisions.get(dir);
    if (saved) return { ...saved, path: dir };
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * Saves (or replaces) the decision for `path`: read-modify-write of `trust.json`, written atomically with mode
 * 0600. Other decisions are kept. A file that cannot be read as decisions is not lost: it is first renamed to
 * `trust.json.invalid-<time>` beside it (a warning names that file), and the new file holds the new decision.
 */
export function saveTrustDecision(options: {
  agentDir: string;
  path: string;
  trusted: boolean;
  warn?: (message: string) => void;
  now?: () => Date;
}): void {
  let unusable = false;
  const decisions = readTrustDecisions(options.agentDir, (message) => {
    unusable = true;
    options.warn?.(message);
  });
  const path = trustFilePath(options.agentDir);
  const at = options.now?.() ?? new Date();
  if (unusable && existsSync(path)) {
    const backup = `${path}.invalid-${at.toISOString().replace(/[:.]/g, "-")}`;
    renameSync(path, backup);
    options.warn?.(`${path} could not be read as trust decisions; it was kept as ${backup}.`);
  }
  decisions.set(resolve(options.path), {
    trusted: options.trusted,
    at: at.toISOString(),
  });
  const file: TrustFile = { version: 1, decisions: Object.fromEntries(decisions) };
  writeFileAtomic(path, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
}
