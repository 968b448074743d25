/**
 * The pi compatibility layer (`builtin:pi-compat`): the package names an extension written for pi imports
 * (`@mariozechner/pi-coding-agent` and its `-ai`, `-tui`, `-agent-core` siblings, the same under `@earendil-works`,
 * every subpath those packages export, and the bare `typebox` with `/value` and `/compile`) resolve to KnightCode's
 * own modules, so such an extension loads unchanged. A pi name with a KnightCode counterpart is that counterpart;
 * `@…/pi-tui` is pi-tui itself; names written in pi's shape over KnightCode's parts come from helpers.ts and sdk.ts;
 * a pi export KnightCode refuses is a stand-in that throws a clear error, with the reason, when it is called or
 * constructed (importing it is harmless; scan.ts warns at load). exports.ts lists every name and what it is here,
 * and docs/extensions.md "Extensions written for pi" shows that list as a table.
 */
import { createRequire } from "node:module";
import type { AssistantMessage, AssistantMessageEvent } from "../../../kernel/index.js";
import { PushStream } from "../../../plugins/kit/provider/assistant-writer.js";
import { messageComponents } from "./components.js";
import { PI_AI_PATTERN_FILES, PI_EXPORTS, PI_SUBPATHS, type PiModuleName, refusedNames } from "./exports.js";
import {
  collapseSystemMessages,
  getCurrentSystemPrompt,
  getCurrentTools,
  ToolCallArgumentsStream,
} from "./provider.js";
import { clampThinkingLevel, getSupportedThinkingLevels } from "./thinking-levels.js";

export const PI_SCOPES = ["@mariozechner", "@earendil-works"] as const;
const DOC = "docs/extensions.md, section “Extensions written for pi”";

type Module = Record<string, unknown>;

/** Why a stand-in is there (what the import scan reports), kept on it under a registered symbol. */
const REFUSAL = Symbol.for("knightcode.piCompat.refusal");

/** The reason a value is a refused pi export, or undefined when it is a real one. */
export function refusalOf(value: unknown): string | undefined {
  if (typeof value !== "function") return undefined;
  const reason = (value as { [REFUSAL]?: unknown })[REFUSAL];
  return typeof reason === "string" ? reason : undefined;
}

/** A stand-in for a pi export KnightCode lacks: harmless to import or subclass, a clear error when used. */
export function unsupported(moduleName: string, name: string, reason = "not offered"): unknown {
  const fail = (): never => {
    throw new Error(`${name} from ${moduleName} is not supported by KnightCode: ${reason} (see ${DOC})`);
  };
  const target = Object.assign(function notSupported() {}, { [REFUSAL]: reason });
  return new Proxy(target, { apply: fail, construct: fail });
}

/** The refused names of a pi module as stand-ins. */
function refusedStubs(moduleName: string, module: PiModuleName): Module {
  return Object.fromEntries(
    [...refusedNames(module)].map(([name, reason]) => [name, unsupported(moduleName, name, reason)]),
  );
}

/** `names` taken from `source`; a name `source` lacks becomes an `unsupported` stub. */
function pick(moduleName: string, source: Module, names: readonly string[]): Module {
  return Object.fromEntries(
    names.map((name) => [name, name in source ? source[name] : unsupported(moduleName, name)]),
  );
}

/** pi's tool-definition factories are its tool factories here: KnightCode has one kind of tool object. */
const DEFINITION_ALIASES = ["Bash", "Edit", "Find", "Grep", "Ls", "Read", "Write"] as const;

/** The guards pi offers for narrowing `tool_call` and `tool_result` events by tool name. */
function eventGuards(): Module {
  const byName = (tool: string) => (event: { toolName?: unknown }) => event?.toolName === tool;
  const guards: Module = {
    isToolCallEventType: (toolName: string, event: { toolName?: unknown }) => event?.toolName === toolName,
  };
  for (const tool of ["bash", "edit", "find", "grep", "ls", "read", "write"]) {
    guards[`is${tool[0]!.toUpperCase()}${tool.slice(1)}ToolResult`] = byName(tool);
  }
  return guards;
}

/** What `@…/pi-coding-agent` maps in pi's shape (helpers.ts, sdk.ts), loaded with it. */
export interface CodingAgentMapped {
  helpers: typeof import("./helpers.js");
  sdk: typeof import("./sdk.js");
  agent: typeof import("./agent.js");
}

/** `@…/pi-coding-agent`: the root package (kit and SDK) with the terminal-UI parts pi's root also exports. */
export function codingAgentModule(
  scope: string,
  root: Module,
  tui: Module,
  mapped?: CodingAgentMapped,
): Module {
  const name = `${scope}/pi-coding-agent`;
  const source = { ...tui, ...root };
  const module: Module = {
    ...root,
    ...pick(name, source, PI_EXPORTS["pi-coding-agent"].supported),
    ...eventGuards(),
    ...refusedStubs(name, "pi-coding-agent"),
  };
  for (const tool of DEFINITION_ALIASES) module[`create${tool}ToolDefinition`] = module[`create${tool}Tool`];
  if (mapped) Object.assign(module, piShaped(root, tui, mapped));
  return module;
}

/** The names exports.ts lists as mapped, built over KnightCode's parts. */
function piShaped(root: Module, tui: Module, { helpers, sdk }: CodingAgentMapped): Module {
  const piTui = (tui.piTui ?? {}) as Module;
  const agentDir = () => (root.getAgentDir as () => string)();
  const codeColour = () => {
    const theme = (tui.getMarkdownTheme as (() => { codeBlock?: (s: string) => string }) | undefined)?.();
    return theme?.codeBlock ?? ((line: string) => line);
  };
  const dimensions = piTui.getImageDimensions as Parameters<typeof helpers.resizeImage>[3];
  return {
    parseFrontmatter: helpers.parseFrontmatter,
    stripFrontmatter: helpers.stripFrontmatter,
    loadSkills: (options?: Parameters<typeof helpers.loadSkills>[0]) =>
      helpers.loadSkills(options, agentDir()),
    loadSkillsFromDir: helpers.loadSkillsFromDir,
    parseSkillBlock: helpers.parseSkillBlock,
    formatSkillsForPrompt: helpers.formatSkillsForPrompt,
    createEventBus: helpers.createEventBus,
    buildSessionContext: helpers.buildSessionContext,
    copyToClipboard: (text: string) => helpers.copyToClipboard(text),
    highlightCode: (code: string, lang?: string) => helpers.highlightCode(code, lang, codeColour()),
    getLanguageFromPath: helpers.getLanguageFromPath,
    resizeImage: (bytes: Uint8Array, mimeType: string, options?: Parameters<typeof helpers.resizeImage>[2]) =>
      helpers.resizeImage(bytes, mimeType, options, dimensions),
    estimateTokens: helpers.estimateTokens,
    CONFIG_DIR_NAME: ".knightcode",
    VIRTUAL_MODEL_STATE_ENTRY: "pi.virtual-model-state",
    ...messageComponents(tui),
    createAgentSession: sdk.piCreateAgentSession(
      root.createAgentSession as Parameters<typeof sdk.piCreateAgentSession>[0],
    ),
    SessionManager: sdk.SessionManager,
    SettingsManager: sdk.SettingsManager,
    DefaultResourceLoader: class extends sdk.DefaultResourceLoader {
      constructor(options?: ConstructorParameters<typeof sdk.DefaultResourceLoader>[0]) {
        super(options, (o) => helpers.loadSkills(o, agentDir()));
      }
    },
    AuthStorage: sdk.AuthStorage,
    ModelRegistry: class extends sdk.ModelRegistry {
      static create(auth?: InstanceType<typeof sdk.AuthStorage>) {
        return new this(auth);
      }
      static inMemory(auth?: InstanceType<typeof sdk.AuthStorage>) {
        return new this(auth);
      }
      constructor(auth?: InstanceType<typeof sdk.AuthStorage>) {
        super(auth, root);
      }
    },
  };
}

/** pi's `createAssistantMessageEventStream()`: a stream a custom provider pushes events into; it ends itself on
 * the `done` or `error` event, with that event's message as the result. */
class AssistantMessageEventStream extends PushStream<AssistantMessageEvent, AssistantMessage> {
  override push(event: AssistantMessageEvent): void {
    super.push(event);
    if (event.type === "done") this.end(event.message);
    else if (event.type === "error") this.end(event.error);
  }
}

const ENV_KEYS: Record<string, string> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
  google: "GEMINI_API_KEY",
  groq: "GROQ_API_KEY",
  mistral: "MISTRAL_API_KEY",
  openrouter: "OPENROUTER_API_KEY",
  xai: "XAI_API_KEY",
  cerebras: "CEREBRAS_API_KEY",
};

/** `@…/pi-ai`: model calls, schema helpers and the provider stream. */
export function aiModule(scope: string, kit: Module, typebox: Module): Module {
  const name = `${scope}/pi-ai`;
  const calculateCost = kit.calculateCost as (model: unknown, usage: unknown) => unknown;
  return {
    ...refusedStubs(name, "pi-ai"),
    ...pick(name, { ...kit, ...typebox }, PI_EXPORTS["pi-ai"].supported),
    getSupportedThinkingLevels,
    clampThinkingLevel,
    collapseSystemMessages,
    getCurrentSystemPrompt,
    getCurrentTools,
    ToolCallArgumentsStream,
    EventStream: PushStream,
    PI_AI_VERSION: kit.VERSION,
    completeSimple: kit.complete,
    stream: kit.streamSimple,
    getProviders: () => [
      ...new Set((kit.getModels as () => { provider: string }[])().map((m) => m.provider)),
    ],
    modelsAreEqual: (
      a?: { id: string; provider: string } | null,
      b?: { id: string; provider: string } | null,
    ) => !!a && !!b && a.id === b.id && a.provider === b.provider,
    // pi's calculateCost fills in and returns usage.cost.
    calculateCost: (model: unknown, usage: { cost?: unknown }) => {
      usage.cost = calculateCost(model, usage);
      return usage.cost;
    },
    getEnvApiKey: (provider: string) => {
      const variable = ENV_KEYS[provider];
      return variable ? process.env[variable] || undefined : undefined;
    },
    createAssistantMessageEventStream: () => new AssistantMessageEventStream(),
    AssistantMessageEventStream,
  };
}

/**
 * `@…/pi-tui`: pi-tui's own module, the one `@knightcodeai/cli/tui` publishes as `piTui` and the interactive mode
 * draws with, so an extension written for pi gets the very classes (`instanceof` holds) and their behaviour. Only
 * names of later pi-tui releases are stubs. (An extension that starts a `TUI` of its own on the process terminal
 * competes with the interactive mode for it, as it would with pi's.)
 */
export function tuiModule(scope: string, tui: Module): Module {
  const piTui = tui.piTui;
  if (typeof piTui !== "object" || piTui === null) {
    throw new Error(`${scope}/pi-tui: KnightCode's terminal UI module does not carry pi-tui (see ${DOC})`);
  }
  return { ...refusedStubs(`${scope}/pi-tui`, "pi-tui"), ...(piTui as Module) };
}

/** `@…/pi-agent-core`: its `Agent` runs a KnightCode session (agent.ts); pi's loop functions are refused. */
export function agentCoreModule(scope: string, root: Module, kit: Module, mapped: CodingAgentMapped): Module {
  return {
    ...refusedStubs(`${scope}/pi-agent-core`, "pi-agent-core"),
    Agent: mapped.agent.piAgentClass(
      root.createAgentSession as Parameters<typeof mapped.agent.piAgentClass>[0],
      kit.streamSimple,
    ),
  };
}

/**
 * A subpath of a pi package: its package's module, where a name that module lacks is a refused stand-in (pi-ai's
 * `providers/*` files export pi-ai's own provider code).
 */
function subpathModule(moduleName: string, module: Module): Module {
  return new Proxy(module, {
    get(target, key) {
      if (
        typeof key !== "string" ||
        key in target ||
        key === "then" ||
        key === "default" ||
        key === "__esModule"
      ) {
        return Reflect.get(target, key);
      }
      return unsupported(moduleName, key, "pi's own code at this subpath");
    },
  });
}

/**
 * A compiled check for a schema TypeBox 0.34 cannot compile, through ajv (as the tool registry checks plain JSON
 * Schema tool parameters); ajv's own refusal of the schema is reported with TypeBox's.
 */
function jsonSchemaCheck(schema: unknown, typeboxError: unknown): Record<string, any> {
  const { Ajv } = createRequire(import.meta.url)("ajv") as typeof import("ajv");
  let validate: ReturnType<InstanceType<typeof Ajv>["compile"]>;
  try {
    validate = new Ajv({ strict: false, allErrors: true }).compile(schema as object);
  } catch (error) {
    throw new Error(
      `typebox/compile: the schema is neither a TypeBox 0.34 schema (${(typeboxError as Error).message}) nor JSON Schema ajv compiles (${(error as Error).message})`,
    );
  }
  const errors = (v: unknown) =>
    validate(v)
      ? []
      : (validate.errors ?? []).map((e) => ({
          path: e.instancePath,
          message: e.message ?? e.keyword,
          schema: e.parentSchema,
          value: e.data,
        }));
  const checked = (v: unknown) => {
    const found = errors(v);
    if (found.length > 0)
      throw new Error(`Value does not match the schema: ${found[0]!.path || "/"} ${found[0]!.message}`);
    return v;
  };
  return {
    Code: () => "",
    Check: (v: unknown) => validate(v) === true,
    Errors: errors,
    Decode: checked,
    Encode: checked,
  };
}

/** TypeBox 1.x's `typebox/compile` (`Compile(type)` or `Compile(context, type)`, `Validator`) over TypeBox 0.34. */
export function typeboxCompileModule(compiler: Module, value: Module): Module {
  const TypeCompiler = compiler.TypeCompiler as {
    Compile(schema: unknown, refs?: unknown[]): Record<string, any>;
  };
  const Value = value.Value as Record<string, (...args: unknown[]) => unknown>;
  class Validator {
    private readonly check: Record<string, any>;
    private readonly refs: unknown[];
    constructor(
      private readonly context: Record<string, unknown>,
      private readonly type: unknown,
    ) {
      this.refs = Object.values(context);
      try {
        this.check = TypeCompiler.Compile(type, this.refs);
      } catch (error) {
        // TypeBox 1.x also compiles plain JSON Schema (objects written by hand inside a Type.Union, say), which 0.34's
        // compiler refuses ("Unknown type"): such a schema is checked as the JSON Schema it is.
        this.check = jsonSchemaCheck(type, error);
      }
    }
    IsAccelerated() {
      return true;
    }
    Context() {
      return this.context;
    }
    Type() {
      return this.type;
    }
    Code(): string {
      return this.check.Code();
    }
    Check(v: unknown): boolean {
      return this.check.Check(v);
    }
    Errors(v: unknown): unknown[] {
      return [...this.check.Errors(v)];
    }
    Parse(v: unknown): unknown {
      return Value.Parse!(this.type, this.refs, v);
    }
    Clean(v: unknown): unknown {
      return Value.Clean!(this.type, this.refs, v);
    }
    Convert(v: unknown): unknown {
      return Value.Convert!(this.type, this.refs, v);
    }
    Create(): unknown {
      return Value.Create!(this.type, this.refs);
    }
    Default(v: unknown): unknown {
      return Value.Default!(this.type, this.refs, v);
    }
    Decode(v: unknown): unknown {
      return this.check.Decode(v);
    }
    Encode(v: unknown): unknown {
      return this.check.Encode(v);
    }
  }
  const Compile = (...args: unknown[]) =>
    args.length >= 2
      ? new Validator(args[0] as Record<string, unknown>, args[1])
      : new Validator({}, args[0]);
  return { Compile, Validator, Code: (type: unknown) => Compile(type).Code(), default: Compile };
}

/**
 * Every pi name, given the modules KnightCode publishes to extensions. `tui` loads KnightCode's terminal-UI
 * module; it is awaited only when an extension imports a name that includes it.
 */
export function piModules(published: {
  root: Module;
  kit: Module;
  typebox: Module;
  typeboxValue: Module;
  typeboxCompiler: Module;
  tui: () => Promise<Module>;
  /** Loads what `@…/pi-coding-agent` maps in pi's shape, when an extension first imports it. */
  mapped: () => Promise<CodingAgentMapped>;
}): Record<string, unknown> {
  const compile = typeboxCompileModule(published.typeboxCompiler, published.typeboxValue);
  const modules: Record<string, unknown> = {
    typebox: published.typebox,
    // TypeBox 1.x's value module keeps 0.34's functions (Check, Errors, Default, ...) under the same names.
    "typebox/value": published.typeboxValue,
    "typebox/compile": compile,
    "@sinclair/typebox/compile": compile,
  };
  for (const scope of PI_SCOPES) {
    const ai = aiModule(scope, published.kit, published.typebox);
    let built: Promise<Module> | undefined;
    const agent = () =>
      (built ??= (async () =>
        codingAgentModule(scope, published.root, await published.tui(), await published.mapped()))());
    modules[`${scope}/pi-ai`] = ai;
    let core: Promise<Module> | undefined;
    Object.defineProperty(modules, `${scope}/pi-agent-core`, {
      enumerable: true,
      get: () =>
        (core ??= published.mapped().then((m) => agentCoreModule(scope, published.root, published.kit, m))),
    });
    Object.defineProperty(modules, `${scope}/pi-tui`, {
      enumerable: true,
      get: async () => tuiModule(scope, await published.tui()),
    });
    Object.defineProperty(modules, `${scope}/pi-coding-agent`, { enumerable: true, get: agent });
    for (const [subpath, of] of Object.entries(PI_SUBPATHS)) {
      const name = `${scope}/${subpath}`;
      if (of === "pi-ai") modules[name] = subpathModule(name, ai);
      else
        Object.defineProperty(modules, name, {
          enumerable: true,
          get: async () => subpathModule(name, await agent()),
        });
    }
    for (const [folder, files] of Object.entries(PI_AI_PATTERN_FILES)) {
      for (const file of files) {
        const name = `${scope}/pi-ai/${folder}/${file}`;
        modules[name] ??= subpathModule(name, ai);
      }
    }
  }
  return modules;
}
