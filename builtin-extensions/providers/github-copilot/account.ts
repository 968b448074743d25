/**
 * The models a GitHub Copilot account has, as pi reads them. Copilot's `GET <endpoint>/models` (with the Copilot
 * token) answers `{data: [{id, model_picker_enabled, policy: {state}, capabilities: {supports: {tool_calls}}}, ...]}`:
 *
 * - a model that cannot call tools (`supports.tool_calls: false`) is of no use to an agent and is left out;
 * - the account has the models its picker shows (`model_picker_enabled`) unless their policy is `disabled`;
 * - on the individual plan's endpoint, an account whose picker shows nothing (some do, with enabled policies) has
 *   the models whose policy is `enabled` instead;
 * - a catalogue model whose policy is `unconfigured` (and that the picker shows, or any with that fallback) is
 *   switched on at sign-in with `POST <endpoint>/models/<id>/policy` `{"state": "enabled"}`; each one switched on
 *   is added to what the account has.
 *
 * The ids are kept with the credential as `availableModelIds` (pi's field), read again at each renewal of the
 * Copilot token (without switching policies on), and `usableModels` offers only those.
 */
import { COPILOT_DEFAULT_BASE_URL, COPILOT_HEADERS } from "./models.js";

/** The API version pi asks Copilot's model list for. */
const COPILOT_API_VERSION = "2026-06-01";
/** How long one request to Copilot's model or policy endpoint may take. */
const REQUEST_TIMEOUT_MS = 5000;

/** What Copilot's model list says about the account. */
export interface CopilotAccountModels {
  /** The ids the account can use now. */
  available: string[];
  /** Catalogue models whose policy is not set yet, which the sign-in switches on. */
  toEnable: string[];
}

const record = (value: unknown): Record<string, unknown> | undefined =>
  value && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;

/**
 * Reads Copilot's model list answer. `individualPlan` allows the fallback to enabled policies when the picker
 * shows nothing; `catalogue` is the ids the registration knows (only those are switched on).
 */
export function parseCopilotModels(
  body: unknown,
  options: { individualPlan: boolean; catalogue: readonly string[] },
): CopilotAccountModels {
  const data = record(body)?.data;
  if (!Array.isArray(data)) throw new Error("the answer has no `data` list of models");
  const models = data.flatMap((raw) => {
    const item = record(raw);
    if (!item || typeof item.id !== "string") return [];
    if (record(record(item.capabilities)?.supports)?.tool_calls === false) return [];
    return [{ id: item.id, picker: item.model_picker_enabled === true, policy: record(item.policy)?.state }];
  });
  const picked = models.filter((m) => m.picker && m.policy !== "disabled").map((m) => m.id);
  const fallback = options.individualPlan && picked.length === 0;
  const available = fallback ? models.filter((m) => m.policy === "enabled").map((m) => m.id) : picked;
  const known = new Set(options.catalogue);
  const toEnable = models
    .filter((m) => m.policy === "unconfigured" && known.has(m.id) && (m.picker || fallback))
    .map((m) => m.id);
  return { available, toEnable };
}

/** `status: text`, the body flattened and cut short. */
async function httpProblem(response: Response): Promise<string> {
  const text = (await response.text().catch(() => "")).replace(/\s+/g, " ").trim();
  return `HTTP ${response.status}${text ? `: ${text.length > 200 ? `${text.slice(0, 200)}…` : text}` : ""}`;
}

/**
 * One request to Copilot, each try bounded by REQUEST_TIMEOUT_MS; a 429 is tried again (after its `retry-after`,
 * else 0.5 s, 1 s, ...) up to `retries` times within `budgetMs`. The last answer is returned, whatever it is.
 */
async function copilotFetch(
  url: string,
  init: { method: "GET" | "POST"; headers: Record<string, string>; body?: string },
  options: { signal?: AbortSignal; retries: number; budgetMs: number },
): Promise<Response> {
  const deadline = Date.now() + options.budgetMs;
  for (let attempt = 0; ; attempt++) {
    const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
    const response = await fetch(url, {
      ...init,
      signal: options.signal ? AbortSignal.any([options.signal, timeout]) : timeout,
      redirect: "error",
    });
    if (response.status !== 429 || attempt >= options.retries) return response;
    const after = response.headers.get("retry-after");
    let waitMs = 500 * 2 ** attempt;
    if (after) {
      const seconds = Number(after);
      waitMs = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(after) - Date.now();
      if (!Number.isFinite(waitMs)) return response;
    }
    waitMs = Math.max(0, waitMs);
    if (waitMs >= deadline - Date.now()) return response;
    await response.body?.cancel().catch(() => {});
    await new Promise<void>((resolve, reject) => {
      const stop = () => {
        clearTimeout(timer);
        reject(options.signal!.reason);
      };
      const timer = setTimeout(() => {
        options.signal?.removeEventListener("abort", stop);
        resolve();
      }, waitMs);
      options.signal?.addEventListener("abort", stop, { once: true });
    });
  }
}

/**
 * Reads the account's models from `<apiUrl>/models`. `tokenBaseUrl` is the endpoint the token names (not an
 * override), which says whether the account is on the individual plan. Throws with what went wrong.
 */
export async function readCopilotModels(
  token: string,
  urls: { apiUrl: string; tokenBaseUrl: string },
  options: { catalogue: readonly string[]; signal?: AbortSignal; retries: number },
): Promise<CopilotAccountModels> {
  const url = `${urls.apiUrl}/models`;
  let response: Response;
  try {
    response = await copilotFetch(
      url,
      {
        method: "GET",
        headers: {
          accept: "application/json",
          authorization: `Bearer ${token}`,
          ...COPILOT_HEADERS,
          "x-github-api-version": COPILOT_API_VERSION,
        },
      },
      { ...(options.signal ? { signal: options.signal } : {}), retries: options.retries, budgetMs: 5000 },
    );
  } catch (error) {
    if (options.signal?.aborted) throw error;
    throw new Error(`could not reach ${url}: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!response.ok) throw new Error(`${url} answered ${await httpProblem(response)}`);
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new Error(`${url} answered with something other than JSON`);
  }
  try {
    return parseCopilotModels(body, {
      individualPlan: urls.tokenBaseUrl === COPILOT_DEFAULT_BASE_URL,
      catalogue: options.catalogue,
    });
  } catch (error) {
    throw new Error(`${url}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * Switches each model's policy on (`POST <apiUrl>/models/<id>/policy` `{"state": "enabled"}`), one after the other.
 * A model Copilot refuses (or that cannot be reached) is reported and skipped; when Copilot keeps answering 429 the
 * rest are not tried. Resolves the ids switched on.
 */
export async function enableCopilotModels(
  token: string,
  apiUrl: string,
  ids: readonly string[],
  report: (message: string) => void,
  signal?: AbortSignal,
): Promise<string[]> {
  const enabled: string[] = [];
  for (const [n, id] of ids.entries()) {
    let response: Response;
    try {
      response = await copilotFetch(
        `${apiUrl}/models/${encodeURIComponent(id)}/policy`,
        {
          method: "POST",
          headers: {
            "content-type": "application/json",
            authorization: `Bearer ${token}`,
            ...COPILOT_HEADERS,
            "openai-intent": "chat-policy",
            "x-interaction-type": "chat-policy",
          },
          body: JSON.stringify({ state: "enabled" }),
        },
        { ...(signal ? { signal } : {}), retries: 2, budgetMs: 5000 },
      );
    } catch (error) {
      if (signal?.aborted) throw error;
      report(
        `Could not switch on ${id} for the Copilot account (${error instanceof Error ? error.message : String(error)}); it is left out.`,
      );
      continue;
    }
    if (response.ok) {
      await response.body?.cancel().catch(() => {});
      enabled.push(id);
      continue;
    }
    const problem = await httpProblem(response);
    if (response.status === 429) {
      const rest = ids.slice(n);
      report(
        `Copilot is limiting requests (${problem}); not switched on: ${rest.join(", ")}. ` +
          "Sign in again later to switch them on.",
      );
      break;
    }
    report(`Copilot refused to switch on ${id} for the account (${problem}); it is left out.`);
  }
  return enabled;
}

/** The account's model ids kept with a credential, when it holds a list of strings. */
export function storedModelIds(credential: { [field: string]: unknown }): string[] | undefined {
  const ids = credential.availableModelIds;
  return Array.isArray(ids) && ids.every((id) => typeof id === "string") ? ids : undefined;
}
