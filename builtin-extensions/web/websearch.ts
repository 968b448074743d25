/**
 * The `websearch` tool: one query to the search API the `provider` setting names, answered with numbered results
 * (title, URL, snippet). Everything the model gets is bounded: at most `MAX_COUNT` results, each field cut to its
 * length, and the whole text cut at `MAX_TEXT_BYTES` with the kit's `truncateHead`.
 */
import {
  type ExtensionContext,
  formatSize,
  type Static,
  type ToolDefinition,
  Type,
  truncateHead,
} from "@knightcodeai/cli/kit";
import {
  MalformedAnswerError,
  PROVIDERS,
  type SearchProvider,
  type SearchResult,
} from "./search-providers.js";
import { deadline, numberSetting, readValues, stringSetting, type ToolValues, timedOut } from "./settings.js";

export const SEARCH_SETTINGS = "websearch";
export const DEFAULT_COUNT = 5;
export const MAX_COUNT = 10;
export const MAX_TITLE_CHARS = 200;
export const MAX_URL_CHARS = 500;
export const MAX_SNIPPET_CHARS = 400;
export const MAX_TEXT_BYTES = 8 * 1024;
/** The most of an answer read; a search answer is a few kilobytes. */
export const MAX_ANSWER_BYTES = 2 * 1024 * 1024;
export const DEFAULT_SEARCH_TIMEOUT_SECONDS = 20;

const schema = Type.Object({
  query: Type.String({ minLength: 1, maxLength: 400, description: "What to search the web for" }),
  count: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: MAX_COUNT,
      description: `How many results (default ${DEFAULT_COUNT}, at most ${MAX_COUNT})`,
    }),
  ),
});

export interface WebSearchDetails {
  provider: string;
  query: string;
  results: SearchResult[];
  /** The text was over MAX_TEXT_BYTES and its end was cut. */
  truncated: boolean;
}

export const SEARCH_SETTINGS_KEYS: Record<string, string> = {
  provider: `The search API: ${PROVIDERS.map((p) => p.id).join(" or ")} (default: the first one with a key)`,
  ...Object.fromEntries(
    PROVIDERS.flatMap((p) => [
      [p.keySetting, `${p.label} API key (else the ${p.envVar} environment variable)`],
      [p.baseUrlSetting, `${p.label} API base URL (default ${p.defaultBaseUrl}), for a proxy`],
    ]),
  ),
  timeoutSeconds: `How long one search may take (default ${DEFAULT_SEARCH_TIMEOUT_SECONDS})`,
};

function chooseProvider(settings: ToolValues): { provider: SearchProvider; key: string } {
  const keyOf = (p: SearchProvider) =>
    stringSetting(SEARCH_SETTINGS, settings, p.keySetting) ?? process.env[p.envVar]?.trim() ?? "";
  const named = stringSetting(SEARCH_SETTINGS, settings, "provider");
  if (named !== undefined) {
    const provider = PROVIDERS.find((p) => p.id === named.trim().toLowerCase());
    if (!provider) {
      throw new Error(
        `websearch: the provider "${named}" (in ${settings.path}) is not one of ${PROVIDERS.map((p) => p.id).join(", ")}`,
      );
    }
    const key = keyOf(provider);
    if (!key) {
      throw new Error(
        `websearch: no ${provider.label} API key. Set "${provider.keySetting}" in the websearch entry of ` +
          `${settings.path} (/tools websearch ${provider.keySetting}=<key>) or the ${provider.envVar} environment variable.`,
      );
    }
    return { provider, key };
  }
  for (const provider of PROVIDERS) {
    const key = keyOf(provider);
    if (key) return { provider, key };
  }
  throw new Error(
    `websearch: no search API key. Set one of ${PROVIDERS.map((p) => `"${p.keySetting}"`).join(", ")} in the ` +
      `websearch entry of ${settings.path} (/tools websearch <key>=<value>), or one of the environment variables ` +
      `${PROVIDERS.map((p) => p.envVar).join(", ")}; "provider" picks among them.`,
  );
}

const cut = (value: string, max: number) => (value.length > max ? `${value.slice(0, max - 1)}…` : value);

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };

/** Snippets come with highlight tags (`<strong>`) and entities; the model gets plain text on one line. */
function plain(value: string): string {
  return value
    .replace(/<[^>]*>/g, "")
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (all, name: string) => {
      if (name[0] === "#") {
        const code =
          name[1] === "x" || name[1] === "X" ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
        return Number.isInteger(code) && code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : all;
      }
      return ENTITIES[name.toLowerCase()] ?? all;
    })
    .replace(/\s+/g, " ")
    .trim();
}

async function readAnswer(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel();
      throw new MalformedAnswerError(`the answer is larger than ${formatSize(MAX_ANSWER_BYTES)}`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}

export async function search(
  ctx: ExtensionContext,
  params: Static<typeof schema>,
  signal: AbortSignal | undefined,
): Promise<{ text: string; details: WebSearchDetails }> {
  const settings = readValues(ctx, SEARCH_SETTINGS);
  const { provider, key } = chooseProvider(settings);
  const base = stringSetting(SEARCH_SETTINGS, settings, provider.baseUrlSetting) ?? provider.defaultBaseUrl;
  const seconds = numberSetting(
    SEARCH_SETTINGS,
    settings,
    "timeoutSeconds",
    DEFAULT_SEARCH_TIMEOUT_SECONDS,
    600,
  );
  const count = Math.min(params.count ?? DEFAULT_COUNT, MAX_COUNT, provider.maxCount);
  const query = params.query.trim();
  if (!query) throw new Error("websearch: the query is empty");
  let request: ReturnType<SearchProvider["request"]>;
  try {
    const parsed = new URL(base);
    if (parsed.protocol !== "https:" && parsed.protocol !== "http:") throw new Error("not http");
    request = provider.request(base, key, query, count);
  } catch {
    throw new Error(
      `websearch: "${provider.baseUrlSetting}" in ${settings.path} is not an http(s) URL: ${base}`,
    );
  }
  const limit = deadline(signal, seconds);
  let status: number;
  let statusText: string;
  let retryAfter: string | null;
  let body: string;
  try {
    const response = await fetch(request.url, { ...request.init, signal: limit, redirect: "follow" });
    status = response.status;
    statusText = response.statusText;
    retryAfter = response.headers.get("retry-after");
    body = await readAnswer(response);
  } catch (error) {
    if (timedOut(limit, signal)) {
      throw new Error(
        `websearch: ${provider.label} did not answer within ${seconds} s (the websearch "timeoutSeconds" setting)`,
      );
    }
    if (signal?.aborted) throw new Error("websearch: aborted");
    if (error instanceof MalformedAnswerError)
      throw new Error(`websearch: ${provider.label}: ${error.message}`);
    const cause = (error as { cause?: { message?: string } }).cause?.message ?? (error as Error).message;
    throw new Error(
      `websearch: could not reach ${provider.label} at ${new URL(request.url).origin}: ${cause}`,
    );
  }
  const json = parseJson(body);
  if (status < 200 || status >= 300) {
    const said = provider.errorMessage(json) ?? (cut(body.trim(), 300) || statusText);
    const parts = [`websearch: ${provider.label} answered HTTP ${status}: ${said}`];
    if (provider.isKeyProblem(status, json)) {
      parts.push(
        `Check the API key ("${provider.keySetting}" in ${settings.path}, or the ${provider.envVar} environment variable).`,
      );
    }
    if (status === 429)
      parts.push(`Rate or quota limit reached${retryAfter ? `; retry after ${retryAfter} s` : ""}.`);
    throw new Error(parts.join(" "));
  }
  if (json === undefined) {
    throw new Error(
      `websearch: ${provider.label} answered something that is not JSON: ${cut(body.trim(), 200)}`,
    );
  }
  let found: SearchResult[];
  try {
    found = provider.parse(json);
  } catch (error) {
    if (!(error instanceof MalformedAnswerError)) throw error;
    throw new Error(`websearch: ${provider.label}'s answer has an unexpected shape: ${error.message}`);
  }
  const results = found.slice(0, count).map((r) => ({
    title: cut(plain(r.title), MAX_TITLE_CHARS),
    url: cut(r.url.trim(), MAX_URL_CHARS),
    snippet: cut(plain(r.snippet), MAX_SNIPPET_CHARS),
  }));
  const lines = [
    results.length === 0
      ? `No results for "${query}" (${provider.label}).`
      : `Results for "${query}" (${provider.label}, ${results.length}):`,
  ];
  results.forEach((r, i) => {
    lines.push("", `${i + 1}. ${r.title || "(no title)"}`, `   ${r.url}`);
    if (r.snippet) lines.push(`   ${r.snippet}`);
  });
  const full = lines.join("\n");
  const kept = truncateHead(full, { maxBytes: MAX_TEXT_BYTES, maxLines: Number.MAX_SAFE_INTEGER });
  const text = kept.truncated
    ? `${kept.content}\n\n[Results cut at ${formatSize(MAX_TEXT_BYTES)}: ${kept.outputLines} of ${kept.totalLines} lines shown]`
    : full;
  return { text, details: { provider: provider.id, query, results, truncated: kept.truncated } };
}

export const websearchTool: ToolDefinition<typeof schema, WebSearchDetails> = {
  name: "websearch",
  label: "web search",
  description: [
    "Search the web and get back titles, URLs and short snippets of the top results.",
    "Use it for information that is newer than your training or not in the project: documentation, releases, errors.",
    "Read a result in full with webfetch.",
  ].join(" "),
  promptSnippet: "websearch: search the web (titles, URLs, snippets)",
  parameters: schema,
  annotations: {
    title: "Search the web",
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: true,
  },
  async execute(_id, params, signal, _onUpdate, ctx) {
    const { text, details } = await search(ctx, params, signal);
    return { content: [{ type: "text", text }], details };
  },
};
