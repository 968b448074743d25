/**
 * Writes builtin-extensions/providers/github-copilot/catalogue.generated.ts, the models of a GitHub Copilot
 * subscription, from pi-ai's catalogue (`@earendil-works/pi-ai`'s `dist/providers/data/github-copilot.json`, what
 * its `models.generated.js` exports under `github-copilot`), and the Copilot models' table in docs/providers.md.
 *
 *   npx tsx scripts/gen-copilot-catalogue.ts           writes the file and the table
 *   npx tsx scripts/gen-copilot-catalogue.ts --check   exits 1 when either differs from what would be written
 *
 * Every model is kept with the wire API pi serves it with (`openai-completions`, `openai-responses` or
 * `anthropic-messages`), its name, context window, output limit, reasoning, input kinds and thinking-level map.
 * The cost is zero: the subscription pays (pi lists the API prices of the models' makers).
 *
 * Nothing else of pi's entries is copied; instead the generation fails when an entry needs what the registration
 * does not give it, so a pi-ai release that changes Copilot is noticed: a base URL or headers other than the
 * provider's, an API the provider does not route, Chat Completions compat other than the provider's, or a Claude
 * model whose thinking or sampling pi describes otherwise than builtin:anthropic assumes for its id.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { claudeTraits } from "../builtin-extensions/providers/anthropic/models.js";
import {
  COPILOT_APIS,
  COPILOT_COMPAT,
  COPILOT_DEFAULT_BASE_URL,
  COPILOT_HEADERS,
} from "../builtin-extensions/providers/github-copilot/models.js";
import { compactLevelMap } from "./pi-level-map.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const target = join(root, "builtin-extensions/providers/github-copilot/catalogue.generated.ts");
const docs = join(root, "docs/providers.md");
const DOCS_START = "<!-- github-copilot models: written by scripts/gen-copilot-catalogue.ts -->";
const DOCS_END = "<!-- end of the github-copilot models -->";
const piRoot = join(root, "node_modules/@earendil-works/pi-ai");
const piVersion = (JSON.parse(readFileSync(join(piRoot, "package.json"), "utf8")) as { version: string })
  .version;
const source = join(piRoot, "dist/providers/data/github-copilot.json");

interface PiModel {
  id: string;
  name: string;
  api: string;
  baseUrl: string;
  headers?: Record<string, string>;
  reasoning: boolean;
  input: ("text" | "image")[];
  contextWindow: number;
  maxTokens: number;
  compat?: Record<string, unknown>;
  thinkingLevelMap?: Record<string, string | null>;
}

/** pi's compat keys that change nothing here (what they tune is not sent by KnightCode's providers). */
const WITHOUT_EFFECT = new Set([
  "supportsOpenAIGrammarTools",
  "supportsEagerToolInputStreaming",
  "supportsUsageInStreaming",
  "supportsStrictMode",
]);

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

function fail(message: string): never {
  console.error(`gen-copilot-catalogue: ${message}`);
  process.exit(1);
}

/** Fails unless pi's entry needs nothing the registration and the API's provider do not already give it. */
function checkEntry(model: PiModel): void {
  const where = `github-copilot/${model.id}`;
  if (!(COPILOT_APIS as readonly string[]).includes(model.api))
    fail(`${where}: pi serves it with "${model.api}", which the provider does not route`);
  if (model.baseUrl !== COPILOT_DEFAULT_BASE_URL) fail(`${where}: base URL ${model.baseUrl}`);
  if (!same(model.headers ?? {}, COPILOT_HEADERS)) fail(`${where}: headers other than the provider's`);
  const compat = Object.fromEntries(
    Object.entries(model.compat ?? {}).filter(([key]) => !WITHOUT_EFFECT.has(key)),
  );
  if (model.api === "openai-completions") {
    if (!same(compat, COPILOT_COMPAT)) fail(`${where}: Chat Completions compat ${JSON.stringify(compat)}`);
    return;
  }
  if (model.api === "anthropic-messages") {
    const { forceAdaptiveThinking, supportsTemperature, ...rest } = compat;
    const traits = claudeTraits({ id: model.id });
    if ((forceAdaptiveThinking === true) !== (traits.thinking === "adaptive"))
      fail(`${where}: pi's adaptive thinking (${forceAdaptiveThinking}) differs from builtin:anthropic's`);
    if (supportsTemperature === false && traits.sampling)
      fail(`${where}: pi sends it no temperature; builtin:anthropic would`);
    if (Object.keys(rest).length > 0) fail(`${where}: unknown compat ${JSON.stringify(rest)}`);
    return;
  }
  if (Object.keys(compat).length > 0) fail(`${where}: unknown compat ${JSON.stringify(compat)}`);
}

function entry(model: PiModel): Record<string, unknown> {
  checkEntry(model);
  const map = model.reasoning && model.thinkingLevelMap ? compactLevelMap(model.thinkingLevelMap) : undefined;
  return {
    id: model.id,
    name: model.name,
    api: model.api,
    reasoning: model.reasoning,
    input: model.input,
    contextWindow: model.contextWindow,
    maxTokens: model.maxTokens,
    cost: { input: 0, output: 0 },
    ...(map ? { thinkingLevelMap: map } : {}),
  };
}

function render(models: Record<string, unknown>[]): string {
  const json = models
    .map((model) => JSON.stringify(model))
    .join(",\n")
    .replace(/\\/g, "\\\\")
    .replace(/`/g, "\\`")
    .replace(/\$\{/g, "\\${");
  return [
    `// Generated by scripts/gen-copilot-catalogue.ts from @earendil-works/pi-ai ${piVersion}'s model catalogue`,
    "// (dist/providers/data/github-copilot.json). Do not edit: regenerate with",
    "// `npx tsx scripts/gen-copilot-catalogue.ts`; `--check` fails when this file is not what it would write.",
    'import type { ProviderModelConfig } from "@knightcodeai/cli/kit";',
    "",
    `export const COPILOT_CATALOGUE_SOURCE = "@earendil-works/pi-ai ${piVersion}";`,
    "",
    "/** The models of a Copilot subscription, each with the wire API Copilot serves it with; cost 0. */",
    `export const GITHUB_COPILOT_MODELS: readonly ProviderModelConfig[] = JSON.parse(\`[\n${json}\n]\`);`,
    "",
  ].join("\n");
}

/** The markdown table of docs/providers.md: model, API, context window, output limit, reasoning, images. */
function docsTable(models: Record<string, unknown>[]): string {
  const rows = models.map((m) => [
    `\`${m.id}\``,
    `\`${m.api}\``,
    String(m.contextWindow),
    String(m.maxTokens),
    m.reasoning ? "yes" : "no",
    (m.input as string[]).includes("image") ? "yes" : "no",
  ]);
  const head = ["Model", "Wire API", "Context", "Output", "Reasons", "Images"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  return [line(head), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

function withDocsTable(text: string, table: string): string {
  const start = text.indexOf(DOCS_START);
  const end = text.indexOf(DOCS_END);
  if (start === -1 || end < start) fail(`docs/providers.md has no "${DOCS_START}" ... "${DOCS_END}" block`);
  return `${text.slice(0, start + DOCS_START.length)}\n${table}\n${text.slice(end)}`;
}

const data = JSON.parse(readFileSync(source, "utf8")) as Record<string, Record<string, PiModel>>;
const models = Object.values(data)
  .flatMap((byId) => Object.values(byId))
  .sort((a, b) => a.id.localeCompare(b.id))
  .map(entry);
if (models.length === 0) fail(`no models in ${source}`);
const output = render(models);
const docsText = readFileSync(docs, "utf8");
const docsOutput = withDocsTable(docsText, docsTable(models));
if (process.argv.includes("--check")) {
  let existing: string | undefined;
  try {
    existing = readFileSync(target, "utf8");
  } catch {
    existing = undefined;
  }
  const stale = [existing !== output ? target : "", docsText !== docsOutput ? docs : ""].filter(Boolean);
  if (stale.length > 0) {
    console.error(
      `${stale.join(" and ")}: not what pi-ai ${piVersion}'s Copilot catalogue gives; run npx tsx scripts/gen-copilot-catalogue.ts`,
    );
    process.exit(1);
  }
  console.log("the Copilot catalogue and its table in docs/providers.md are current");
} else {
  writeFileSync(target, output);
  writeFileSync(docs, docsOutput);
  const apis = new Map<string, number>();
  for (const m of models) apis.set(String(m.api), (apis.get(String(m.api)) ?? 0) + 1);
  console.log(
    `wrote ${target} (${models.length} models: ${[...apis].map(([api, n]) => `${n} ${api}`).join(", ")}) and docs/providers.md`,
  );
}
