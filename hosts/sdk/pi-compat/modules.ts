/**
 * The pi compatibility layer (`builtin:pi-compat`): the package names an extension written for pi imports
 * (`@mariozechner/pi-coding-agent` and its `-ai`, `-tui`, `-agent-core` siblings, the same under `@earendil-works`,
 * and the bare `typebox`) resolve to KnightCode's own modules, so such an extension loads unchanged. The layer maps;
 * it renames nothing: KnightCode's names stay the documented ones, and a pi name that has a KnightCode counterpart
 * is that counterpart; `@…/pi-tui` is pi-tui itself. A pi export KnightCode does not offer is a stub that throws a clear error when it is called
 * or constructed (importing it is harmless), so the extension loads and fails only where it uses the missing part.
 * docs/extensions.md "Extensions written for pi" lists what maps, what is a no-op where, and what is not supported.
 */
import type { AssistantMessage, AssistantMessageEvent } from "../../../kernel/index.js";
import { PushStream } from "../../../plugins/kit/provider/assistant-writer.js";

export const PI_SCOPES = ["@mariozechner", "@earendil-works"] as const;
const DOC = "docs/extensions.md, section “Extensions written for pi”";

type Module = Record<string, unknown>;

/** A stand-in for a pi export KnightCode lacks: harmless to import or subclass, a clear error when used. */
export function unsupported(moduleName: string, name: string): unknown {
  const fail = (): never => {
    throw new Error(`${name} from ${moduleName} is not supported by KnightCode (see ${DOC})`);
  };
  return new Proxy(function notSupported() {}, { apply: fail, construct: fail });
}

/** `names` taken from `source`; a name `source` lacks becomes an `unsupported` stub. */
function pick(moduleName: string, source: Module, names: readonly string[]): Module {
  return Object.fromEntries(
    names.map((name) => [name, name in source ? source[name] : unsupported(moduleName, name)]),
  );
}

/** pi's exports that KnightCode offers under the same name, and pi's that it does not (stubs). */
const CODING_AGENT_NAMES = [
  // offered (by the kit, the SDK, the core tools or the terminal-UI module)
  "getAgentDir",
  "VERSION",
  "defineTool",
  "withFileMutationQueue",
  "convertToLlm",
  "serializeConversation",
  "createBashTool",
  "createCodingTools",
  "createEditTool",
  "createFindTool",
  "createGrepTool",
  "createLsTool",
  "createReadOnlyTools",
  "createReadTool",
  "createWriteTool",
  "createLocalBashOperations",
  "DEFAULT_MAX_BYTES",
  "DEFAULT_MAX_LINES",
  "formatSize",
  "truncateHead",
  "truncateLine",
  "truncateTail",
  "BorderedLoader",
  "CustomEditor",
  "DynamicBorder",
  "getMarkdownTheme",
  "getSelectListTheme",
  "getSettingsListTheme",
  "keyHint",
  "keyText",
  "rawKeyHint",
  "Theme",
  // not offered: pi's own session, resource and interactive-mode internals
  "AgentSession",
  "AgentSessionRuntime",
  "AuthStorage",
  "DefaultPackageManager",
  "DefaultResourceLoader",
  "ExtensionRunner",
  "InteractiveMode",
  "ModelRegistry",
  "RpcClient",
  "SessionManager",
  "SettingsManager",
  "compact",
  "copyToClipboard",
  "createAgentSession",
  "createEventBus",
  "discoverAndLoadExtensions",
  "generateSummary",
  "loadSkills",
  "loadSkillsFromDir",
  "main",
  "parseFrontmatter",
  "stripFrontmatter",
  "runPrintMode",
  "runRpcMode",
] as const;

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

/**
 * Names KnightCode exports too, with a contract other than pi's, so a pi extension gets the stub rather than a
 * function that would mislead it: pi's `parseFrontmatter` returns `{ frontmatter, body }` at once, KnightCode's a
 * promise of `{ data, body, errors, warnings }`.
 */
const SAME_NAME_OTHER_CONTRACT = ["parseFrontmatter"] as const;

/** `@…/pi-coding-agent`: the root package (kit and SDK) with the terminal-UI parts pi's root also exports. */
export function codingAgentModule(scope: string, root: Module, tui: Module): Module {
  const name = `${scope}/pi-coding-agent`;
  const source = { ...tui, ...root };
  const module: Module = { ...root, ...pick(name, source, CODING_AGENT_NAMES), ...eventGuards() };
  for (const tool of DEFINITION_ALIASES) module[`create${tool}ToolDefinition`] = module[`create${tool}Tool`];
  for (const other of SAME_NAME_OTHER_CONTRACT) module[other] = unsupported(name, other);
  return module;
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
    ...pick(name, { ...kit, ...typebox }, [
      "Type",
      "StringEnum",
      "complete",
      "streamSimple",
      "getModel",
      "getModels",
      "registerApiProvider",
      "getApiProvider",
      "getOAuthProvider",
    ]),
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
 * Names later pi-tui releases (1.x, `@earendil-works/pi-tui`) export that the pi-tui KnightCode carries (0.73.1)
 * lacks: stacks and scroll views, colour helpers, fullscreen and alternate-screen drivers, LaTeX, the native
 * clipboard. An extension may import them; it gets a clear error where it calls one.
 */
const NEWER_TUI_NAMES = [
  "HStack",
  "Marked",
  "MouseRegion",
  "ScrollView",
  "TuiAltScreen",
  "TuiMainScreen",
  "VStack",
  "backgroundAnsi",
  "colorToHex",
  "colorToOkhsl",
  "colorToOklch",
  "colorToRgb",
  "compositeTuiLine",
  "foregroundAnsi",
  "formatProgramStatus",
  "getNativeClipboard",
  "getOsc8LinkAtColumn",
  "getSelectPageIndex",
  "getTerminalColorMode",
  "indexedColor",
  "isAppleTerminalSession",
  "isViewportTUI",
  "mixColors",
  "okhslColor",
  "oklabToOkhslLightness",
  "oklchColor",
  "parseColor",
  "parseTerminalColorSchemeReport",
  "renderFakeCursor",
  "renderLatex",
  "replaceControlCharacters",
  "rgbColor",
  "setCapabilityOverrides",
  "setImageTranscoder",
  "sliceByColumn",
  "stripTerminalSequences",
  "styleText",
  "styleTextWithAnsi",
] as const;

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
  return { ...pick(`${scope}/pi-tui`, {}, NEWER_TUI_NAMES), ...(piTui as Module) };
}

/** `@…/pi-agent-core`: types only in practice; its `Agent` runtime is pi's own. */
export function agentCoreModule(scope: string): Module {
  const name = `${scope}/pi-agent-core`;
  return pick(name, {}, ["Agent", "agentLoop", "agentLoopContinue"]);
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
  tui: () => Promise<Module>;
}): Record<string, unknown> {
  const modules: Record<string, unknown> = {
    typebox: published.typebox,
    // TypeBox 1.x's value module keeps 0.34's functions (Check, Errors, Default, ...) under the same names.
    "typebox/value": published.typeboxValue,
  };
  for (const scope of PI_SCOPES) {
    modules[`${scope}/pi-ai`] = aiModule(scope, published.kit, published.typebox);
    modules[`${scope}/pi-ai/oauth`] = pick(`${scope}/pi-ai/oauth`, {}, [
      "getOAuthProvider",
      "getOAuthProviders",
    ]);
    modules[`${scope}/pi-agent-core`] = agentCoreModule(scope);
    Object.defineProperty(modules, `${scope}/pi-tui`, {
      enumerable: true,
      get: async () => tuiModule(scope, await published.tui()),
    });
    Object.defineProperty(modules, `${scope}/pi-coding-agent`, {
      enumerable: true,
      get: async () => codingAgentModule(scope, published.root, await published.tui()),
    });
  }
  return modules;
}
