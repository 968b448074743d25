/**
 * Command-line parsing. Options of KnightCode itself are known here; options registered by extensions
 * (`registerFlag`) are only known once extensions load, so unknown options are kept as candidates and resolved
 * against the registered flags afterwards (`resolveExtensionFlags`). Parsing loads nothing: an unknown option
 * comes back with the known names, and the caller looks for the closest one only then.
 */
import type { RegisteredFlag } from "@knightcodeai/cli";

export interface CliArgs {
  mode?: string;
  print: boolean;
  extensions: string[];
  provider?: string;
  model?: string;
  thinking?: string;
  tools?: string[];
  noTools: boolean;
  session?: string;
  continue: boolean;
  resume: boolean;
  noSession: boolean;
  sessionDir?: string;
  /** pi's `--session-id <id>`: this folder's session with that id, created with it when there is none. */
  sessionId?: string;
  /** pi's `--fork <path|id>`: a new session of this folder with every entry of that session. */
  fork?: string;
  /** `--max-turns`, checked when the session options are built. */
  maxTurns?: string;
  approve?: boolean;
  listModels?: string | true;
  /** pi's `--export <session file> [output.html]`: write the session as HTML and exit. */
  exportSession?: { file: string; output?: string };
  listExtensions: boolean;
  /** pi's switches that leave a kind of resource out: `--no-themes`, `--no-skills`, ... (see PI_SWITCHES). */
  without: {
    themes: boolean;
    skills: boolean;
    promptTemplates: boolean;
    mcp: boolean;
    extensions: boolean;
    contextFiles: boolean;
  };
  offline: boolean;
  /** `--name`: the session's display name. */
  name?: string;
  /** `--models`: the patterns model cycling is limited to. */
  models?: string[];
  systemPrompt?: string;
  /** `--append-system-prompt` values, in order (text, or a file whose contents are appended). */
  appendSystemPrompt: string[];
  useTheme?: string;
  tuiMode?: string;
  apiKey?: string;
  excludeTools?: string[];
  noBuiltinTools: boolean;
  /** `--skill`, `--prompt-template`, `--theme` paths, in order. */
  resources: { skills: string[]; prompts: string[]; themes: string[] };
  version: boolean;
  help: boolean;
  /** `@path` arguments, inlined into the first message. */
  files: string[];
  /** Positional arguments: each is one prompt, run in order. */
  prompts: string[];
  /** Options nobody here knows: maybe extension flags. */
  candidates: Candidate[];
}

interface Candidate {
  name: string;
  /** `--name=value` */
  inline?: string;
  /** The positional token right after the option, which is its value if the flag takes a string. */
  nextPrompt?: number;
}

/** Options that take a value. */
const VALUE_OPTIONS: Record<string, keyof CliArgs> = {
  "--mode": "mode",
  "-e": "extensions",
  "--extension": "extensions",
  "--provider": "provider",
  "--model": "model",
  "--thinking": "thinking",
  "--tools": "tools",
  "--session": "session",
  "--session-dir": "sessionDir",
  "--session-id": "sessionId",
  "--fork": "fork",
  "--max-turns": "maxTurns",
  "-t": "tools",
  "--name": "name",
  "-n": "name",
  "--models": "models",
  "--system-prompt": "systemPrompt",
  "--append-system-prompt": "appendSystemPrompt",
  "--use-theme": "useTheme",
  "--tui-mode": "tuiMode",
  "--api-key": "apiKey",
  "--exclude-tools": "excludeTools",
  "-xt": "excludeTools",
  "--skill": "resources",
  "--prompt-template": "resources",
  "--theme": "resources",
};

const RESOURCE_OPTIONS: Record<string, keyof CliArgs["resources"]> = {
  "--skill": "skills",
  "--prompt-template": "prompts",
  "--theme": "themes",
};

/** pi's switches for leaving things out, with its short names. */
const PI_SWITCHES: Record<string, keyof CliArgs["without"]> = {
  "--no-themes": "themes",
  "--no-skills": "skills",
  "-ns": "skills",
  "--no-prompt-templates": "promptTemplates",
  "-np": "promptTemplates",
  "--no-mcp": "mcp",
  "--no-extensions": "extensions",
  "-ne": "extensions",
  "--no-context-files": "contextFiles",
  "-nc": "contextFiles",
};

const SWITCHES: Record<string, (a: CliArgs) => void> = {
  "-p": (a) => {
    a.print = true;
  },
  "--print": (a) => {
    a.print = true;
  },
  "--no-tools": (a) => {
    a.noTools = true;
  },
  "-nt": (a) => {
    a.noTools = true;
  },
  "--no-builtin-tools": (a) => {
    a.noBuiltinTools = true;
  },
  "-nbt": (a) => {
    a.noBuiltinTools = true;
  },
  "--offline": (a) => {
    a.offline = true;
  },
  // KnightCode's start-up output does not depend on a quiet setting: nothing to make verbose.
  "--verbose": () => {},
  "-c": (a) => {
    a.continue = true;
  },
  "--continue": (a) => {
    a.continue = true;
  },
  "-r": (a) => {
    a.resume = true;
  },
  "--resume": (a) => {
    a.resume = true;
  },
  "--no-session": (a) => {
    a.noSession = true;
  },
  "--trust-project": (a) => {
    a.approve = true;
  },
  "--no-trust-project": (a) => {
    a.approve = false;
  },
  // The first names of --trust-project: they read like approving tool calls, which is --gate's business.
  "--approve": (a) => {
    a.approve = true;
  },
  "--no-approve": (a) => {
    a.approve = false;
  },
  "-a": (a) => {
    a.approve = true;
  },
  "-na": (a) => {
    a.approve = false;
  },
  "--list-extensions": (a) => {
    a.listExtensions = true;
  },
  "--version": (a) => {
    a.version = true;
  },
  "-v": (a) => {
    a.version = true;
  },
  "-h": (a) => {
    a.help = true;
  },
  "--help": (a) => {
    a.help = true;
  },
};

export const KNOWN_OPTIONS = [
  ...Object.keys(VALUE_OPTIONS),
  ...Object.keys(SWITCHES),
  ...Object.keys(PI_SWITCHES),
  "--list-models",
  "--export",
];

/** A usage error; `misspelt` is an unknown option and the options it may have meant. */
export interface UsageProblem {
  error: string;
  misspelt?: { name: string; known: readonly string[] };
}

export type ParseResult = { ok: true; args: CliArgs } | ({ ok: false } & UsageProblem);

export function parseArgs(argv: readonly string[]): ParseResult {
  const args: CliArgs = {
    print: false,
    extensions: [],
    noTools: false,
    continue: false,
    resume: false,
    noSession: false,
    listExtensions: false,
    without: {
      themes: false,
      skills: false,
      promptTemplates: false,
      mcp: false,
      extensions: false,
      contextFiles: false,
    },
    offline: false,
    appendSystemPrompt: [],
    noBuiltinTools: false,
    resources: { skills: [], prompts: [], themes: [] },
    version: false,
    help: false,
    files: [],
    prompts: [],
    candidates: [],
  };
  let pendingCandidate: Candidate | undefined;
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === "--") {
      args.prompts.push(...argv.slice(i + 1));
      break;
    }
    if (!token.startsWith("-") || token === "-") {
      if (token.startsWith("@") && token.length > 1) args.files.push(token.slice(1));
      else {
        if (pendingCandidate) pendingCandidate.nextPrompt = args.prompts.length;
        args.prompts.push(token);
      }
      pendingCandidate = undefined;
      continue;
    }
    pendingCandidate = undefined;
    const [name, inline] = splitInline(token);
    const target = VALUE_OPTIONS[name];
    if (target) {
      const value = inline ?? argv[++i];
      if (value === undefined || (inline === undefined && value.startsWith("-") && value !== "-")) {
        return { ok: false, error: `${name} needs a value` };
      }
      if (target === "extensions") args.extensions.push(value);
      else if (target === "appendSystemPrompt") args.appendSystemPrompt.push(value);
      else if (target === "resources") args.resources[RESOURCE_OPTIONS[name]!].push(value);
      else if (target === "tools" || target === "models" || target === "excludeTools")
        args[target] = value
          .split(",")
          .map((t) => t.trim())
          .filter(Boolean);
      else (args as unknown as Record<string, unknown>)[target] = value;
      continue;
    }
    if (name === "--export") {
      const file = inline ?? argv[++i];
      if (file === undefined || (inline === undefined && file.startsWith("-"))) {
        return { ok: false, error: "--export needs a session file" };
      }
      const next = argv[i + 1];
      const output = next !== undefined && !next.startsWith("-") ? argv[++i] : undefined;
      args.exportSession = { file, ...(output !== undefined ? { output } : {}) };
      continue;
    }
    if (name === "--list-models") {
      const next = argv[i + 1];
      args.listModels = inline ?? (next !== undefined && !next.startsWith("-") ? argv[++i]! : true);
      continue;
    }
    const left = PI_SWITCHES[name];
    if (left) {
      if (inline !== undefined) return { ok: false, error: `${name} does not take a value` };
      args.without[left] = true;
      continue;
    }
    const toggle = SWITCHES[name];
    if (toggle) {
      if (inline !== undefined) return { ok: false, error: `${name} does not take a value` };
      toggle(args);
      continue;
    }
    if (!name.startsWith("--") || name.length < 3) {
      return { ok: false, error: `unknown option ${name}`, misspelt: { name, known: KNOWN_OPTIONS } };
    }
    const candidate: Candidate = { name: name.slice(2), ...(inline !== undefined ? { inline } : {}) };
    args.candidates.push(candidate);
    if (inline === undefined) pendingCandidate = candidate;
  }
  return { ok: true, args };
}

/**
 * Matches the candidates against the flags extensions registered: a string flag takes its value (inline or the
 * next positional token, which then is no longer a prompt); a boolean flag is true. An option no extension
 * registered is an error that suggests the closest known option.
 */
export function resolveExtensionFlags(
  args: CliArgs,
  flags: readonly RegisteredFlag[],
):
  | { ok: true; values: Record<string, boolean | string>; prompts: string[] }
  | ({ ok: false } & UsageProblem) {
  const values: Record<string, boolean | string> = {};
  const consumed = new Set<number>();
  for (const candidate of args.candidates) {
    const flag = flags.find((f) => f.name === candidate.name);
    if (!flag) {
      const name = `--${candidate.name}`;
      const known = [...KNOWN_OPTIONS, ...flags.map((f) => `--${f.name}`)];
      return { ok: false, error: `unknown option ${name}`, misspelt: { name, known } };
    }
    if (flag.type === "boolean") {
      if (candidate.inline !== undefined && !/^(true|false)$/.test(candidate.inline)) {
        return { ok: false, error: `--${flag.name} is a switch (true or false), not "${candidate.inline}"` };
      }
      values[flag.name] = candidate.inline === undefined ? true : candidate.inline === "true";
      continue;
    }
    if (candidate.inline !== undefined) values[flag.name] = candidate.inline;
    else if (candidate.nextPrompt !== undefined) {
      values[flag.name] = args.prompts[candidate.nextPrompt]!;
      consumed.add(candidate.nextPrompt);
    } else return { ok: false, error: `--${flag.name} needs a value` };
  }
  return { ok: true, values, prompts: args.prompts.filter((_, i) => !consumed.has(i)) };
}

/** Values to start the session with, before the registered flags are known (see resolveExtensionFlags). */
export function provisionalFlagValues(args: CliArgs): Record<string, boolean | string> {
  const values: Record<string, boolean | string> = {};
  for (const c of args.candidates) {
    values[c.name] = c.inline ?? (c.nextPrompt !== undefined ? args.prompts[c.nextPrompt]! : true);
  }
  return values;
}

function splitInline(token: string): [string, string | undefined] {
  const eq = token.indexOf("=");
  return eq > 0 && token.startsWith("--") ? [token.slice(0, eq), token.slice(eq + 1)] : [token, undefined];
}
