/**
 * The search APIs `websearch` can use, chosen by the `provider` setting. Each provider turns a query into one HTTP
 * request and the answer into `{title, url, snippet}` results; the tool does the rest (keys, deadline, limits). A
 * provider is a plain object, so adding one is adding an entry to `PROVIDERS`.
 *
 * - Brave Search API: `GET <base>/web/search?q=&count=` with the key in `X-Subscription-Token`; results in
 *   `web.results[]` (`title`, `url`, `description` with `<strong>` highlights). Errors are
 *   `{"type":"ErrorResponse","error":{"code","detail","status"}}`; a wrong key is HTTP 422 `SUBSCRIPTION_TOKEN_INVALID`.
 * - Tavily: `POST <base>/search` with `Authorization: Bearer <key>` and `{query, max_results}`; results in
 *   `results[]` (`title`, `url`, `content`). Errors are `{"detail":{"error": "..."}}`.
 */

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

export interface SearchRequest {
  url: string;
  init: { method: "GET" | "POST"; headers: Record<string, string>; body?: string };
}

export interface SearchProvider {
  id: string;
  /** The name messages use. */
  label: string;
  /** The tools.json key of its API key, and the environment variable read when that is not set. */
  keySetting: string;
  envVar: string;
  /** The tools.json key that overrides its base URL, and the default. */
  baseUrlSetting: string;
  defaultBaseUrl: string;
  /** Most results one request may ask for. */
  maxCount: number;
  request(base: string, key: string, query: string, count: number): SearchRequest;
  /** The results of a 2xx answer's JSON; throws `MalformedAnswerError` when its shape is not the provider's. */
  parse(body: unknown): SearchResult[];
  /** The provider's own words from an error answer's JSON (or undefined). */
  errorMessage(body: unknown): string | undefined;
  /** Whether an error answer means the key is wrong or missing. */
  isKeyProblem(status: number, body: unknown): boolean;
}

export class MalformedAnswerError extends Error {}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const text = (value: unknown): string => (typeof value === "string" ? value : "");

function results(list: unknown, where: string, snippetField: string): SearchResult[] {
  if (!Array.isArray(list)) throw new MalformedAnswerError(`${where} is not a list`);
  return list.map((item, i) => {
    if (!isObject(item) || typeof item.url !== "string") {
      throw new MalformedAnswerError(`${where}[${i}] has no url`);
    }
    return { title: text(item.title), url: item.url, snippet: text(item[snippetField]) };
  });
}

const brave: SearchProvider = {
  id: "brave",
  label: "Brave Search",
  keySetting: "braveApiKey",
  envVar: "BRAVE_API_KEY",
  baseUrlSetting: "braveBaseUrl",
  defaultBaseUrl: "https://api.search.brave.com/res/v1",
  maxCount: 20,
  request(base, key, query, count) {
    const url = new URL(`${base.replace(/\/+$/, "")}/web/search`);
    url.searchParams.set("q", query);
    url.searchParams.set("count", String(count));
    return {
      url: url.href,
      init: { method: "GET", headers: { accept: "application/json", "x-subscription-token": key } },
    };
  },
  parse(body) {
    if (!isObject(body)) throw new MalformedAnswerError("the answer is not a JSON object");
    // Brave leaves `web` out when the web index has nothing for the query.
    if (body.web === undefined) return [];
    if (!isObject(body.web)) throw new MalformedAnswerError("web is not an object");
    return results(body.web.results ?? [], "web.results", "description");
  },
  errorMessage(body) {
    if (!isObject(body)) return undefined;
    const error = isObject(body.error) ? body.error : Array.isArray(body.errors) ? body.errors[0] : undefined;
    if (!isObject(error)) return undefined;
    const detail = text(error.detail);
    const code = text(error.code);
    return [detail, code ? `(${code})` : ""].filter(Boolean).join(" ") || undefined;
  },
  isKeyProblem(status, body) {
    if (status === 401 || status === 403) return true;
    const message = this.errorMessage(body) ?? "";
    return /SUBSCRIPTION_TOKEN|x-subscription-token/i.test(message);
  },
};

const tavily: SearchProvider = {
  id: "tavily",
  label: "Tavily",
  keySetting: "tavilyApiKey",
  envVar: "TAVILY_API_KEY",
  baseUrlSetting: "tavilyBaseUrl",
  defaultBaseUrl: "https://api.tavily.com",
  maxCount: 20,
  request(base, key, query, count) {
    return {
      url: `${base.replace(/\/+$/, "")}/search`,
      init: {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: JSON.stringify({ query, max_results: count, search_depth: "basic" }),
      },
    };
  },
  parse(body) {
    if (!isObject(body)) throw new MalformedAnswerError("the answer is not a JSON object");
    return results(body.results, "results", "content");
  },
  errorMessage(body) {
    if (!isObject(body)) return undefined;
    const detail = body.detail;
    if (typeof detail === "string") return detail;
    if (isObject(detail) && typeof detail.error === "string") return detail.error;
    if (typeof body.error === "string") return body.error;
    return undefined;
  },
  isKeyProblem(status) {
    return status === 401 || status === 403;
  },
};

export const PROVIDERS: readonly SearchProvider[] = [brave, tavily];
