/**
 * Writes the catalogues of the named providers, from pi-ai's catalogue (the facts of `@earendil-works/pi-ai`'s
 * `dist/providers/data/<provider>.json`, what its `models.generated.js` exports):
 * - builtin-extensions/providers/openai-compatible/catalogue.generated.ts: the Chat Completions ones builtin:openai-compatible
 *   registers (groq, openrouter, deepseek, ...), xAI's Responses models, and the services whose models use several
 *   APIs (opencode, opencode-go, cloudflare-ai-gateway: each model names its API, the provider its `apiPaths`);
 * - builtin-extensions/providers/anthropic/catalogue.generated.ts: the Messages ones builtin:anthropic registers
 *   (kimi-coding, minimax, vercel-ai-gateway, ...).
 *
 *   npx tsx scripts/gen-provider-catalogue.ts           writes the files, and their tables in docs/providers.md
 *   npx tsx scripts/gen-provider-catalogue.ts --check   exits 1 when any differs from what would be written
 *
 * What is kept: the Chat Completions models of each provider (and xAI's Responses models); OpenRouter's only from
 * the major labs (pi lists only models that take tools). Per model: id, name, context window, output limit,
 * reasoning, input kinds, cost, and the `compat` that differs from the provider's; per provider: base URL, key
 * variable, headers and the compat all its models share. pi fills in some compat by provider name at request time
 * (its `detectCompat`); PROVIDER_COMPAT below says the same here, so the file holds what is sent. Compat keys
 * without effect here are left out; a key the provider that serves the API does not know fails the generation, so a
 * new pi-ai release that needs one is noticed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ANTHROPIC_COMPAT_KEYS } from "../builtin-extensions/providers/anthropic/models.js";
import { checkCompat, DEFAULT_COMPAT } from "../builtin-extensions/providers/openai-compatible/compat.js";
import { claudeCompatProblems, compactLevelMap, inTemplateLiteral } from "./pi-catalogue.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const docs = join(root, "docs/providers.md");
const piRoot = join(root, "node_modules/@earendil-works/pi-ai");
const piVersion = (JSON.parse(readFileSync(join(piRoot, "package.json"), "utf8")) as { version: string })
  .version;
const dataDir = join(piRoot, "dist/providers/data");

/** OpenRouter's model ids kept: the labs' own prefixes. */
const OPENROUTER_LABS = [
  "anthropic/",
  "openai/",
  "google/",
  "x-ai/",
  "deepseek/",
  "qwen/",
  "moonshotai/",
  "z-ai/",
  "mistralai/",
  "meta-llama/",
  "minimax/",
];

type Api = "openai-completions" | "openai-responses" | "anthropic-messages" | "google-generative-ai";

interface Source {
  name: string;
  /** The environment variable of the key (pi's, dist/env-api-keys.js). */
  env: string;
  /** The API of the provider's models (of those that name none, for a provider with `apis`). */
  api: Api;
  /**
   * A service whose models use several APIs (opencode): all of them are kept, each model naming its API, and the
   * provider gets `apiPaths` (what each API appends to the common base URL).
   */
  apis?: Api[];
  /** Compat every model of the provider gets, whatever its API (Cloudflare AI Gateway's key header). */
  compat?: Record<string, unknown>;
  keep?(id: string): boolean;
  /**
   * Models pi reaches through another API of the same service that this provider's API serves too (OpenRouter's
   * Claude models, which pi sends to OpenRouter's Messages endpoint): kept with this API's base URL, without the
   * other API's compat.
   */
  alsoFrom?: string;
}

const MIXED_APIS: Api[] = [
  "anthropic-messages",
  "openai-completions",
  "openai-responses",
  "google-generative-ai",
];

const COMPLETIONS_SOURCES: Source[] = [
  { name: "groq", env: "GROQ_API_KEY", api: "openai-completions" },
  { name: "cerebras", env: "CEREBRAS_API_KEY", api: "openai-completions" },
  { name: "deepseek", env: "DEEPSEEK_API_KEY", api: "openai-completions" },
  {
    name: "openrouter",
    env: "OPENROUTER_API_KEY",
    api: "openai-completions",
    // `:batch` variants answer through OpenRouter's batch queue, which an interactive session has no use for.
    keep: (id) => OPENROUTER_LABS.some((lab) => id.startsWith(lab)) && !id.endsWith(":batch"),
    alsoFrom: "anthropic-messages",
  },
  { name: "together", env: "TOGETHER_API_KEY", api: "openai-completions" },
  { name: "fireworks", env: "FIREWORKS_API_KEY", api: "openai-completions" },
  { name: "nvidia", env: "NVIDIA_API_KEY", api: "openai-completions" },
  { name: "huggingface", env: "HF_TOKEN", api: "openai-completions" },
  { name: "moonshotai", env: "MOONSHOT_API_KEY", api: "openai-completions" },
  { name: "zai", env: "ZAI_API_KEY", api: "openai-completions" },
  { name: "baseten", env: "BASETEN_API_KEY", api: "openai-completions" },
  { name: "xai", env: "XAI_API_KEY", api: "openai-responses" },
  { name: "ant-ling", env: "ANT_LING_API_KEY", api: "openai-completions" },
  // pi reads the same variable for Moonshot's international and Chinese endpoints.
  { name: "moonshotai-cn", env: "MOONSHOT_API_KEY", api: "openai-completions" },
  { name: "qwen-token-plan", env: "QWEN_TOKEN_PLAN_API_KEY", api: "openai-completions" },
  { name: "qwen-token-plan-cn", env: "QWEN_TOKEN_PLAN_CN_API_KEY", api: "openai-completions" },
  { name: "qwen-token-plan-individual", env: "QWEN_TOKEN_PLAN_API_KEY", api: "openai-completions" },
  { name: "xiaomi", env: "XIAOMI_API_KEY", api: "openai-completions" },
  { name: "xiaomi-token-plan-ams", env: "XIAOMI_TOKEN_PLAN_AMS_API_KEY", api: "openai-completions" },
  { name: "xiaomi-token-plan-cn", env: "XIAOMI_TOKEN_PLAN_CN_API_KEY", api: "openai-completions" },
  { name: "xiaomi-token-plan-sgp", env: "XIAOMI_TOKEN_PLAN_SGP_API_KEY", api: "openai-completions" },
  { name: "zai-coding-cn", env: "ZAI_CODING_CN_API_KEY", api: "openai-completions" },
  // Its base URL names {CLOUDFLARE_ACCOUNT_ID}, filled from that variable when a request goes.
  { name: "cloudflare-workers-ai", env: "CLOUDFLARE_API_KEY", api: "openai-completions" },
  // Several APIs under one key: builtin:openai-compatible sends the Chat Completions models, the extensions that
  // implement the others (builtin:anthropic, builtin:openai, builtin:google) the rest, through the model service.
  { name: "opencode", env: "OPENCODE_API_KEY", api: "openai-completions", apis: MIXED_APIS },
  { name: "opencode-go", env: "OPENCODE_API_KEY", api: "openai-completions", apis: MIXED_APIS },
  // The gateway's own key goes as `cf-aig-authorization: Bearer <key>`, no Authorization or x-api-key (the upstream
  // keys are the gateway's); its base URL names {CLOUDFLARE_ACCOUNT_ID} and {CLOUDFLARE_GATEWAY_ID}.
  {
    name: "cloudflare-ai-gateway",
    env: "CLOUDFLARE_API_KEY",
    api: "openai-completions",
    apis: MIXED_APIS,
    compat: { keyHeader: "cf-aig-authorization" },
  },
];

/** The named providers of builtin:anthropic: services with a Messages endpoint. */
const MESSAGES_SOURCES: Source[] = [
  { name: "kimi-coding", env: "KIMI_API_KEY", api: "anthropic-messages" },
  { name: "minimax", env: "MINIMAX_API_KEY", api: "anthropic-messages" },
  { name: "minimax-cn", env: "MINIMAX_CN_API_KEY", api: "anthropic-messages" },
  { name: "vercel-ai-gateway", env: "AI_GATEWAY_API_KEY", api: "anthropic-messages" },
];

/**
 * The compat pi works out from the provider's name for these providers (its detectCompat, restated), under each
 * model's own compat.
 */
const NON_STANDARD = { supportsStore: false, supportsDeveloperRole: false };
const MOONSHOT = { ...NON_STANDARD, supportsReasoningEffort: false, maxTokensField: "max_tokens" };
const ZAI = {
  ...NON_STANDARD,
  supportsReasoningEffort: false,
  maxTokensField: "max_tokens",
  thinkingFormat: "zai",
};
const PROVIDER_COMPAT: Record<string, (id: string) => Record<string, unknown>> = {
  cerebras: () => NON_STANDARD,
  deepseek: () => ({
    ...NON_STANDARD,
    maxTokensField: "max_tokens",
    requiresReasoningContentOnAssistantMessages: true,
    thinkingFormat: "deepseek",
  }),
  openrouter: (id) => ({
    thinkingFormat: "openrouter",
    supportsDeveloperRole: id.startsWith("anthropic/") || id.startsWith("openai/"),
  }),
  together: () => ({
    ...NON_STANDARD,
    supportsReasoningEffort: false,
    maxTokensField: "max_tokens",
    thinkingFormat: "together",
  }),
  nvidia: () => ({ ...NON_STANDARD, supportsReasoningEffort: false, maxTokensField: "max_tokens" }),
  moonshotai: () => MOONSHOT,
  "moonshotai-cn": () => MOONSHOT,
  zai: () => ZAI,
  "zai-coding-cn": () => ZAI,
  "ant-ling": () => ({
    ...NON_STANDARD,
    supportsReasoningEffort: false,
    maxTokensField: "max_tokens",
    thinkingFormat: "ant-ling",
  }),
  "cloudflare-workers-ai": () => NON_STANDARD,
  opencode: () => NON_STANDARD,
  "opencode-go": () => NON_STANDARD,
  "cloudflare-ai-gateway": () => ({ ...NON_STANDARD, maxTokensField: "max_tokens" }),
};

/**
 * The compat keys builtin:openai's Responses implementation reads, and builtin:google's Gemini one (see their
 * index.ts). A key of pi's catalogue outside these fails the generation, unless RESPONSES_WITHOUT_EFFECT says why it
 * changes nothing here.
 */
const RESPONSES_COMPAT_KEYS = ["timeoutMs", "supportsTemperature", "keyHeader"];
const GOOGLE_COMPAT_KEYS = ["timeoutMs", "thinking"];
const RESPONSES_WITHOUT_EFFECT: Record<string, (value: unknown) => boolean> = {
  // pi's "no session header" form: builtin:openai sends no session header to any endpoint but OpenAI's own.
  sessionAffinityFormat: (value) => value === "openai-nosession",
  // A capability pi may use (grammar-constrained custom tools); builtin:openai declares plain function tools only.
  supportsOpenAIGrammarTools: () => true,
  // pi's Responses implementation reads no such key; the model's level map says which efforts it takes.
  supportsReasoningEffort: () => true,
  // builtin:openai never asks for the long (24h) prompt cache retention.
  supportsLongCacheRetention: (value) => value === false,
  // That the endpoint takes `strict` tools; builtin:openai marks only a forced tool strict, as it does for OpenAI.
  supportsStrictMode: () => true,
};

/** Keys the provider accepts without effect: not worth their bytes in the file. */
const WITHOUT_EFFECT = new Set([
  "supportsStrictMode",
  "supportsLongCacheRetention",
  "cacheControlFormat",
  "deferredToolsMode",
  // Sent anyway (the provider's default); pi's catalogue says so explicitly for some models.
  "supportsUsageInStreaming",
]);

interface PiModel {
  id: string;
  name: string;
  api: string;
  baseUrl: string;
  headers?: Record<string, string>;
  reasoning: boolean;
  input: ("text" | "image")[];
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number };
  contextWindow: number;
  maxTokens: number;
  compat?: Record<string, unknown>;
  thinkingLevelMap?: Record<string, string | null>;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function fail(message: string): never {
  console.error(`gen-provider-catalogue: ${message}`);
  process.exit(1);
}

/** One model's effective compat, without what equals the provider's defaults or has no effect. */
function modelCompat(source: Source, piModel: PiModel): Record<string, unknown> {
  const model = source.compat ? { ...piModel, compat: { ...piModel.compat, ...source.compat } } : piModel;
  if (model.api === "openai-responses" || model.api === "google-generative-ai") {
    const known = model.api === "openai-responses" ? RESPONSES_COMPAT_KEYS : GOOGLE_COMPAT_KEYS;
    const kept: Record<string, unknown> = {};
    const unknown: string[] = [];
    for (const [key, value] of Object.entries(model.compat ?? {})) {
      if (known.includes(key)) kept[key] = value;
      else if (!(model.api === "openai-responses" && RESPONSES_WITHOUT_EFFECT[key]?.(value)))
        unknown.push(`${key}=${JSON.stringify(value)}`);
    }
    if (unknown.length > 0)
      fail(
        `${source.name}/${model.id}: ${model.api} compat builtin KnightCode does not implement: ${unknown}`,
      );
    return kept;
  }
  if (model.api === "anthropic-messages") {
    const unknown = Object.keys(model.compat ?? {}).filter((key) => !ANTHROPIC_COMPAT_KEYS.includes(key));
    if (unknown.length > 0)
      fail(
        `${source.name}/${model.id}: compat keys builtin:anthropic does not implement: ${unknown.join(", ")}`,
      );
    // pi sends these services' keys as x-api-key; the Anthropic SDK here sends only Authorization (builtin:anthropic
    // sets the same for its own named providers). Not where the key goes in a header of its own (keyHeader).
    if (source.apis && !model.compat?.keyHeader) return { ...model.compat, xApiKeyHeader: true };
    return { ...model.compat };
  }
  if (model.api !== "openai-completions") return {};
  const merged: Record<string, unknown> = {
    ...PROVIDER_COMPAT[source.name]?.(model.id),
    ...model.compat,
  };
  const map = model.thinkingLevelMap && compactLevelMap(model.thinkingLevelMap);
  if (map) merged.thinkingLevelMap = map;
  const { problems } = checkCompat(merged);
  if (problems.length > 0) fail(`${source.name}/${model.id}: ${problems.join("; ")}`);
  const kept: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(merged)) {
    if (WITHOUT_EFFECT.has(key)) continue;
    if (key in DEFAULT_COMPAT && same((DEFAULT_COMPAT as Record<string, unknown>)[key], value)) continue;
    kept[key] = value;
  }
  return kept;
}

function provider(source: Source): Record<string, unknown> {
  const data = JSON.parse(readFileSync(join(dataDir, `${source.name}.json`), "utf8")) as Record<
    string,
    Record<string, PiModel>
  >;
  const own = (source.apis ?? [source.api]).flatMap((api) => Object.values(data[api] ?? {}));
  const ids = new Set(own.map((m) => m.id));
  const ownBase = own[0]?.baseUrl;
  const borrowed = Object.values(source.alsoFrom ? (data[source.alsoFrom] ?? {}) : {})
    .filter((m) => !ids.has(m.id))
    .map(({ compat: _compat, ...m }) => ({ ...m, api: source.api, baseUrl: ownBase ?? m.baseUrl }));
  const all = [...own, ...borrowed];
  const models = all.filter((m) => source.keep?.(m.id) ?? true).sort((a, b) => a.id.localeCompare(b.id));
  if (models.length === 0) fail(`${source.name}: no ${source.api} models in pi-ai's catalogue`);
  const urlOf = new Map<string, string>();
  for (const m of models) {
    if ((urlOf.get(m.api) ?? m.baseUrl) !== m.baseUrl)
      fail(`${source.name}: its ${m.api} models name several base URLs`);
    urlOf.set(m.api, m.baseUrl);
  }
  // The provider's base URL: what the APIs' have in common (a whole one, or up to a `/`); each appends the rest.
  const urls = [...urlOf.values()];
  let common = urls[0]!;
  for (const url of urls) while (!url.startsWith(common)) common = common.slice(0, -1);
  const baseUrl = urls.includes(common) ? common : common.slice(0, common.lastIndexOf("/"));
  const apiPaths: Record<string, string> = {};
  for (const [api, url] of urlOf) {
    if (!url.startsWith(baseUrl)) fail(`${source.name}: ${api}'s base URL ${url} does not extend ${baseUrl}`);
    apiPaths[api] = url.slice(baseUrl.length);
  }
  if (!source.apis && urlOf.size > 1)
    fail(`${source.name}: its models use several APIs (${[...urlOf.keys()]})`);
  const headers = new Set(models.map((m) => JSON.stringify(m.headers ?? {})));
  if (headers.size !== 1) fail(`${source.name}: its models send different headers`);
  const compats = models.map((m) => modelCompat(source, m));
  // What every model has alike goes to the provider.
  const shared: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(compats[0]!)) {
    if (compats.every((c) => key in c && same(c[key], value))) shared[key] = value;
  }
  const first = models[0]!;
  return {
    name: source.name,
    apiKey: source.env,
    api: source.api,
    baseUrl,
    ...(source.apis ? { apiPaths } : {}),
    ...(first.headers && Object.keys(first.headers).length > 0 ? { headers: first.headers } : {}),
    ...(Object.keys(shared).length > 0 ? { compat: shared } : {}),
    models: models.map((m, index) => {
      const own = Object.fromEntries(Object.entries(compats[index]!).filter(([key]) => !(key in shared)));
      const { cacheRead, cacheWrite, ...cost } = m.cost;
      return {
        id: m.id,
        ...(m.api !== source.api ? { api: m.api } : {}),
        ...(m.name && m.name !== m.id ? { name: m.name } : {}),
        ...(m.reasoning ? { reasoning: true } : {}),
        ...(m.input.includes("image") ? { input: m.input } : {}),
        contextWindow: m.contextWindow,
        maxTokens: m.maxTokens,
        cost: { ...cost, ...(cacheRead ? { cacheRead } : {}), ...(cacheWrite ? { cacheWrite } : {}) },
        ...(Object.keys(own).length > 0 ? { compat: own } : {}),
        // Another API's provider (xAI's Responses) takes no Chat Completions compat; its level map still says
        // which levels the model offers.
        ...(m.api !== "openai-completions" && m.reasoning && m.thinkingLevelMap
          ? { thinkingLevelMap: compactLevelMap(m.thinkingLevelMap) ?? {} }
          : {}),
      };
    }),
  };
}

/** One generated file: its providers, the constant it exports, and its table in docs/providers.md. */
interface Group {
  target: string;
  exportName: string;
  docsStart: string;
  docsEnd: string;
  sources: Source[];
}

const GROUPS: Group[] = [
  {
    target: join(root, "builtin-extensions/providers/openai-compatible/catalogue.generated.ts"),
    exportName: "NAMED_PROVIDERS",
    docsStart: "<!-- named-providers table: written by scripts/gen-provider-catalogue.ts -->",
    docsEnd: "<!-- end of the named-providers table -->",
    sources: COMPLETIONS_SOURCES,
  },
  {
    target: join(root, "builtin-extensions/providers/anthropic/catalogue.generated.ts"),
    exportName: "ANTHROPIC_NAMED_PROVIDERS",
    docsStart: "<!-- anthropic named-providers table: written by scripts/gen-provider-catalogue.ts -->",
    docsEnd: "<!-- end of the anthropic named-providers table -->",
    sources: MESSAGES_SOURCES,
  },
];

/**
 * The providers as JSON in a template literal, and each provider's models as JSON text of their own, one model a
 * line (so a regeneration's diff shows what changed): the kit's `lazyCatalogue` parses a provider's models only when
 * they are first read. Each provider says which APIs its models use, so registering it reads none of them.
 */
function render(group: Group, providers: Record<string, unknown>[]): string {
  const heads: string[] = [];
  const lists: string[] = [];
  for (const entry of providers) {
    const { models, ...head } = entry as { models: { api?: string }[]; api: string };
    const apis = [...new Set([head.api, ...models.map((m) => m.api ?? head.api)])];
    heads.push(JSON.stringify({ ...head, apis }));
    lists.push(
      `    \`[\n${inTemplateLiteral(models.map((model) => JSON.stringify(model)).join(",\n"))}\n]\`,`,
    );
  }
  return [
    `// Generated by scripts/gen-provider-catalogue.ts from @earendil-works/pi-ai ${piVersion}'s model catalogue`,
    "// (dist/providers/data/*.json, what its models.generated.js exports). Do not edit: regenerate with",
    "// `npx tsx scripts/gen-provider-catalogue.ts`; `--check` fails when this file is not what it would write.",
    `import { lazyCatalogue, type NamedProvider } from "@knightcodeai/cli/kit";`,
    "",
    `export const CATALOGUE_SOURCE = "@earendil-works/pi-ai ${piVersion}";`,
    "",
    "/** The named providers; each one's models are parsed from their JSON text when first read. */",
    `export const ${group.exportName}: readonly NamedProvider[] = lazyCatalogue(`,
    `  JSON.parse(\`[\n${inTemplateLiteral(heads.join(",\n"))}\n]\`),`,
    "  [",
    ...lists,
    "  ],",
    ");",
    "",
  ].join("\n");
}

/** The markdown table of docs/providers.md: name, key variable, base URL, API, models. */
function docsTable(providers: Record<string, unknown>[]): string {
  const rows = providers.map((p) => [
    `\`${p.name}\``,
    `\`${p.apiKey}\``,
    `\`${p.baseUrl}\``,
    p.apiPaths
      ? Object.keys(p.apiPaths as Record<string, string>)
          .map((api) => `\`${api}\``)
          .join(", ")
      : `\`${p.api}\``,
    String((p.models as unknown[]).length),
  ]);
  const head = ["Provider", "Key variable", "Base URL", "Wire API", "Models"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

function withDocsTable(text: string, group: Group, table: string): string {
  const start = text.indexOf(group.docsStart);
  const end = text.indexOf(group.docsEnd);
  if (start === -1 || end < start)
    fail(`docs/providers.md has no "${group.docsStart}" ... "${group.docsEnd}" block`);
  return `${text.slice(0, start + group.docsStart.length)}\n${table}\n${text.slice(end)}`;
}

/**
 * pi-ai's models of the providers KnightCode implements itself (builtin:anthropic, builtin:openai): each built-in
 * registers its own list, then these models of pi's that it does not list, so a model a pi user chose (a setting, a
 * session, `--model`) is found here too. Plain model entries: the built-ins read no per-model compat, and a Claude
 * model whose compat asks for other than what builtin:anthropic does for its id fails the generator.
 */
interface Extras {
  target: string;
  /** pi-ai's provider and API whose models these are. */
  name: string;
  api: Api;
}

const EXTRAS: Extras[] = [
  {
    target: join(root, "builtin-extensions/providers/anthropic/pi-models.generated.ts"),
    name: "anthropic",
    api: "anthropic-messages",
  },
  {
    target: join(root, "builtin-extensions/providers/openai/pi-models.generated.ts"),
    name: "openai",
    api: "openai-responses",
  },
];

function renderExtras(extras: Extras): string {
  const data = JSON.parse(readFileSync(join(dataDir, `${extras.name}.json`), "utf8")) as Record<
    string,
    Record<string, PiModel>
  >;
  const models = Object.values(data[extras.api] ?? {}).sort((a, b) => a.id.localeCompare(b.id));
  if (models.length === 0) fail(`${extras.name}: no ${extras.api} models in pi-ai's catalogue`);
  const lines = models.map((m) => {
    // The built-ins read no per-model compat: Claude's must ask for nothing builtin:anthropic does not do anyway.
    if (extras.api === "anthropic-messages") {
      const { problems } = claudeCompatProblems(m.id, m.compat ?? {});
      if (problems.length > 0) fail(`${extras.name}/${m.id}: ${problems.join("; ")}`);
    }
    const { cacheRead, cacheWrite, input, output } = m.cost;
    const map = m.reasoning && m.thinkingLevelMap ? compactLevelMap(m.thinkingLevelMap) : undefined;
    return JSON.stringify({
      id: m.id,
      ...(m.name && m.name !== m.id ? { name: m.name } : {}),
      ...(m.reasoning ? { reasoning: true } : {}),
      input: m.input,
      contextWindow: m.contextWindow,
      maxTokens: m.maxTokens,
      cost: { input, output, ...(cacheRead ? { cacheRead } : {}), ...(cacheWrite ? { cacheWrite } : {}) },
      ...(map ? { thinkingLevelMap: map } : {}),
    });
  });
  const json = inTemplateLiteral(lines.join(",\n"));
  return [
    `// Generated by scripts/gen-provider-catalogue.ts from @earendil-works/pi-ai ${piVersion}'s ${extras.name} models`,
    "// (dist/providers/data/*.json). Do not edit: regenerate with `npx tsx scripts/gen-provider-catalogue.ts`;",
    "// `--check` fails when this file is not what it would write.",
    'import type { ProviderModelConfig } from "@knightcodeai/cli/kit";',
    "",
    `/** pi-ai's ${extras.name} models, which the built-in registers after its own (those it does not list itself). */`,
    `export const PI_MODELS: readonly ProviderModelConfig[] = JSON.parse(\`[\n${json}\n]\`);`,
    "",
  ].join("\n");
}

const docsText = readFileSync(docs, "utf8");
let docsOutput = docsText;
const outputs = GROUPS.map((group) => {
  const providers = group.sources.map(provider);
  docsOutput = withDocsTable(docsOutput, group, docsTable(providers));
  return { group, providers, output: render(group, providers) };
});
if (process.argv.includes("--check")) {
  const read = (path: string) => {
    try {
      return readFileSync(path, "utf8");
    } catch {
      return undefined;
    }
  };
  const stale = [
    ...outputs.filter(({ group, output }) => read(group.target) !== output).map(({ group }) => group.target),
    ...EXTRAS.filter((extras) => read(extras.target) !== renderExtras(extras)).map((extras) => extras.target),
    ...(docsText !== docsOutput ? [docs] : []),
  ];
  if (stale.length > 0) {
    console.error(
      `${stale.join(" and ")}: not what pi-ai ${piVersion}'s catalogue gives; run npx tsx scripts/gen-provider-catalogue.ts`,
    );
    process.exit(1);
  }
  console.log("the named providers' catalogues and their tables in docs/providers.md are current");
} else {
  for (const { group, providers, output } of outputs) {
    writeFileSync(group.target, output);
    const counts = providers.map((p) => `${p.name} ${(p.models as unknown[]).length}`);
    console.log(`wrote ${group.target} (${Buffer.byteLength(output)} bytes): ${counts.join(", ")}`);
  }
  for (const extras of EXTRAS) {
    writeFileSync(extras.target, renderExtras(extras));
    console.log(`wrote ${extras.target}`);
  }
  writeFileSync(docs, docsOutput);
  console.log("wrote the tables in docs/providers.md");
}
