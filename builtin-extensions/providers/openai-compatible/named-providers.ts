/**
 * The named providers of builtin:openai-compatible: hosted services that speak Chat Completions (groq, openrouter,
 * deepseek, ...), each with its base URL, the environment variable of its key and the models of pi-ai's catalogue
 * (catalogue.generated.ts). They are registered as fallbacks, so an extension's registration of the same name
 * wins; a models.json entry of the same name is laid over the registration as for any provider (one that sets only
 * `baseUrl` keeps the catalogue, one that lists `models` replaces it).
 *
 * A model's own compat (its thinking-level map, its thinking format) lives in the catalogue, not in the
 * registration: the request of a catalogue model gets the provider's compat, then the model's, then the compat of
 * the provider's models.json entry, if any, over both.
 */
import type {
  ProviderConfig,
  ProviderModelConfig,
  ProviderStreamRequest,
  StreamSimple,
} from "@knightcodeai/cli/kit";

export interface NamedModel extends ProviderModelConfig {
  /** What this model needs besides the provider's compat. */
  compat?: Record<string, unknown>;
}

export interface NamedProvider {
  name: string;
  /** The environment variable that holds the key. */
  apiKey: string;
  api: "openai-completions" | "openai-responses";
  baseUrl: string;
  headers?: Record<string, string>;
  /** The compat all of the provider's models share. */
  compat?: Record<string, unknown>;
  models: NamedModel[];
}

/** The compat a request of `provider` sends: the catalogue's for the model, the configured (models.json) over it. */
export function namedCompat(
  provider: NamedProvider,
  models: ReadonlyMap<string, NamedModel>,
  request: Pick<ProviderStreamRequest, "model" | "compat">,
): Record<string, unknown> | undefined {
  const own = models.get(request.model.id)?.compat;
  if (!provider.compat && !own) return request.compat;
  return { ...provider.compat, ...own, ...request.compat };
}

/**
 * The registration of one named provider. Chat Completions ones go to `stream` with their compat; a Responses one
 * (xAI) names its API only, which builtin:openai implements.
 */
export function namedProviderConfig(provider: NamedProvider, stream: StreamSimple): ProviderConfig {
  const config: ProviderConfig = {
    api: provider.api,
    baseUrl: provider.baseUrl,
    apiKey: provider.apiKey,
    ...(provider.headers ? { headers: { ...provider.headers } } : {}),
    // The level map goes on the model too, so the session offers only the model's levels.
    models: provider.models.map(({ compat, ...model }) => {
      const map = (model.thinkingLevelMap ?? compat?.thinkingLevelMap ?? provider.compat?.thinkingLevelMap) as
        | ProviderModelConfig["thinkingLevelMap"]
        | undefined;
      return map && model.reasoning ? { ...model, thinkingLevelMap: map } : model;
    }),
  };
  if (provider.api === "openai-completions") {
    let models: Map<string, NamedModel> | undefined;
    config.streamSimple = (request) => {
      models ??= new Map(provider.models.map((model) => [model.id, model]));
      const compat = namedCompat(provider, models, request);
      return stream(compat ? { ...request, compat } : request);
    };
  }
  return config;
}
