/**
 * Named providers: hosted services registered by name with a generated catalogue (a base URL, the environment
 * variable of the key, the models and the compat they need), served by a built-in wire API implementation. Shared by
 * the built-in providers that register such catalogues (builtin:openai-compatible's groq, deepseek, ...;
 * builtin:anthropic's kimi-coding, minimax, ...; services that speak several APIs, such as opencode).
 *
 * A model's own compat lives in the catalogue, not in the registration: the request of a catalogue model gets the
 * provider's compat, then the model's, then the compat of the provider's models.json entry, if any, over both.
 *
 * A base URL may name environment variables as `{NAME}` (Cloudflare's account id): they are filled from the
 * environment when a request goes, and a request whose variable is unset fails with a message naming it.
 */
import type {
  ProviderConfig,
  ProviderErrorKind,
  ProviderModelConfig,
  ProviderStreamRequest,
} from "../../../kernel/index.js";
import { AssistantMessageWriter } from "./assistant-writer.js";
import type { StreamSimple } from "./lazy-stream.js";

export interface NamedModel extends ProviderModelConfig {
  /** What this model needs besides the provider's compat. */
  compat?: Record<string, unknown>;
}

export interface NamedProvider {
  name: string;
  /** The environment variable that holds the key. */
  apiKey: string;
  /** The API of the models that name none. */
  api: string;
  baseUrl: string;
  /**
   * For a provider whose models use several APIs: what each API's requests append to the base URL (`"/v1"`, or
   * `""`), so a models.json `baseUrl` moves them all.
   */
  apiPaths?: Record<string, string>;
  headers?: Record<string, string>;
  /** The compat all of the provider's models share. */
  compat?: Record<string, unknown>;
  /**
   * The APIs its models use, when the catalogue says so: the registration then need not read the models (a
   * catalogue from `lazyCatalogue` reads them on first use). Without it they are read at registration.
   */
  apis?: readonly string[];
  models: NamedModel[];
}

/**
 * A generated catalogue's providers, each keeping its models as JSON text until something reads `models`: a run
 * that uses one provider parses none of the others' hundreds of models (JSON text parses faster than the same data
 * as object literals compiles, and text never read costs only its reading). `models[i]` is provider `i`'s.
 */
export function lazyCatalogue(
  providers: readonly Omit<NamedProvider, "models">[],
  models: readonly string[],
): NamedProvider[] {
  if (models.length !== providers.length) {
    throw new Error(`a catalogue of ${providers.length} providers has ${models.length} model lists`);
  }
  return providers.map((provider, index) => withLazyModels(provider, () => JSON.parse(models[index]!)));
}

/** `target` with a `models` property computed by `read` on first use, then kept. */
function withLazyModels<T extends object, M>(target: T, read: () => M): T & { models: M } {
  let models: M | undefined;
  let done = false;
  return Object.defineProperty(target, "models", {
    enumerable: true,
    configurable: true,
    get: () => {
      if (!done) {
        models = read();
        done = true;
      }
      return models as M;
    },
  }) as T & { models: M };
}

/** The compat a request of `provider` sends: the catalogue's for the model, the configured (models.json) over it. */
export function namedCompat(
  provider: Pick<NamedProvider, "compat">,
  models: ReadonlyMap<string, NamedModel>,
  request: Pick<ProviderStreamRequest, "model" | "compat">,
): Record<string, unknown> | undefined {
  const own = models.get(request.model.id)?.compat;
  if (!provider.compat && !own) return request.compat;
  return { ...provider.compat, ...own, ...request.compat };
}

const URL_VARIABLE = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** `url` with each `{NAME}` replaced by the variable's value; `missing` names the unset ones. */
export function fillUrlVariables(
  url: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
): { url: string; missing: string[] } {
  const missing: string[] = [];
  const filled = url.replace(URL_VARIABLE, (whole, name: string) => {
    const value = env[name];
    if (value) return encodeURIComponent(value);
    if (!missing.includes(name)) missing.push(name);
    return whole;
  });
  return { url: filled, missing };
}

/** A stream that fails at once with `message`; nothing is sent. */
export function failedRequestStream(
  request: ProviderStreamRequest,
  kind: ProviderErrorKind,
  message: string,
) {
  const writer = new AssistantMessageWriter(request.model);
  writer.fail(kind, message);
  return writer.stream;
}

/**
 * The registration of one named provider. `streams` gives the implementation of each API the provider's models
 * use; a provider whose API has none here (xAI's Responses, registered by builtin:openai-compatible) gets no
 * `streamSimple`, and the model service sends its requests to whichever extension implements the API.
 *
 * A provider whose models use several APIs (opencode) gets a `streamSimple` when `streams` has any of them: each
 * request goes to its model's API, implemented here or, through `request.streamApi`, by the extension that
 * registered that API, at the base URL (the registration's or the models.json entry's) with the API's `apiPaths`
 * suffix appended.
 */
export function namedProviderConfig(
  named: NamedProvider,
  streams: Readonly<Record<string, StreamSimple | undefined>>,
  options: {
    /** Compat the registering extension adds to the provider's own (laid under the models' and models.json's). */
    compat?: Record<string, unknown>;
  } = {},
): ProviderConfig {
  // Read through `named`, never copied with a spread, so a lazy catalogue's models stay unread until used.
  const provider = {
    name: named.name,
    api: named.api,
    baseUrl: named.baseUrl,
    apiPaths: named.apiPaths,
    compat: options.compat ? { ...named.compat, ...options.compat } : named.compat,
  };
  const base: ProviderConfig = {
    api: provider.api,
    baseUrl: provider.baseUrl,
    apiKey: named.apiKey,
    ...(named.headers ? { headers: { ...named.headers } } : {}),
  };
  // The level map goes on the model too, so the session offers only the model's levels.
  const config = withLazyModels(base, () =>
    named.models.map(({ compat, ...model }) => {
      const map = (model.thinkingLevelMap ?? compat?.thinkingLevelMap ?? provider.compat?.thinkingLevelMap) as
        | ProviderModelConfig["thinkingLevelMap"]
        | undefined;
      return map && model.reasoning ? { ...model, thinkingLevelMap: map } : model;
    }),
  ) as ProviderConfig;
  const apis = new Set([provider.api, ...(named.apis ?? named.models.map((m) => m.api ?? provider.api))]);
  if (![...apis].some((api) => streams[api])) return config;
  let models: Map<string, NamedModel> | undefined;
  config.streamSimple = (request) => {
    const api = request.model.api || provider.api;
    // An API the registering extension does not implement goes to the extension that does (the model service's).
    const stream = streams[api] ?? request.streamApi?.(api);
    if (!stream) {
      return failedRequestStream(
        request,
        "bad_request",
        `${provider.name}: no implementation of the "${api}" API (model ${request.model.id})`,
      );
    }
    const path = provider.apiPaths?.[api] ?? "";
    const { url, missing } = fillUrlVariables(
      `${(request.baseUrl || provider.baseUrl).replace(/\/+$/, "")}${path}`,
    );
    if (missing.length > 0) {
      return failedRequestStream(
        request,
        "auth",
        `${provider.name} needs ${missing.join(" and ")} set in the environment (its base URL names ` +
          `${missing.map((name) => `{${name}}`).join(", ")}): ${url}`,
      );
    }
    models ??= new Map(named.models.map((model) => [model.id, model]));
    const compat = namedCompat(provider, models, request);
    return stream({ ...request, baseUrl: url, ...(compat ? { compat } : {}) });
  };
  return config;
}
