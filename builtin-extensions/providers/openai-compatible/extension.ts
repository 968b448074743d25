/**
 * The `builtin:openai-compatible` registration: the `openai-completions` API (custom providers in models.json name
 * it) and the named providers of catalogue.generated.ts (groq, openrouter, deepseek, ...), each with the
 * environment variable of its key. The request code loads on the first request to any of them.
 */
import { type ExtensionAPI, lazyStreamSimple } from "@knightcodeai/cli/kit";
import { NAMED_PROVIDERS } from "./catalogue.generated.js";
import { namedProviderConfig } from "./named-providers.js";
import { OPENAI_COMPLETIONS_API, OPENAI_COMPLETIONS_PROVIDER } from "./names.js";

export default function openaiCompatible(knightcode: ExtensionAPI): void {
  const options = { warn: (message: string) => knightcode.log.warn(message) };
  const streamSimple = lazyStreamSimple(async () => {
    const { streamOpenAICompletions } = await import("./provider.js");
    return (request) => streamOpenAICompletions(request, options);
  });
  knightcode.registerProvider(
    OPENAI_COMPLETIONS_PROVIDER,
    { api: OPENAI_COMPLETIONS_API, streamSimple },
    { fallback: true },
  );
  // Fallbacks: a registration of the same name by another extension wins.
  for (const provider of NAMED_PROVIDERS) {
    knightcode.registerProvider(
      provider.name,
      namedProviderConfig(provider, { [OPENAI_COMPLETIONS_API]: streamSimple }),
      {
        fallback: true,
      },
    );
  }
}
