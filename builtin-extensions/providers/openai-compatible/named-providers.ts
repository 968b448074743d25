/**
 * The named providers of builtin:openai-compatible: hosted services that speak Chat Completions (groq, openrouter,
 * deepseek, ...), each with its base URL, the environment variable of its key and the models of pi-ai's catalogue
 * (catalogue.generated.ts). They are registered as fallbacks, so an extension's registration of the same name
 * wins; a models.json entry of the same name is laid over the registration as for any provider (one that sets only
 * `baseUrl` keeps the catalogue, one that lists `models` replaces it).
 *
 * The registration and the compat of each request are the kit's (`namedProviderConfig`, `namedCompat`): the
 * provider's compat, then the model's, then the models.json entry's. A Responses provider (xAI) gets no
 * `streamSimple` here: builtin:openai implements its API.
 */
export {
  type NamedModel,
  type NamedProvider,
  namedCompat,
  namedProviderConfig,
} from "@knightcodeai/cli/kit";
