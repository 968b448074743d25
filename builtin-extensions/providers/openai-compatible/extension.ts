/**
 * The `builtin:openai-compatible` registration. It registers no models (custom providers in models.json name its
 * API); the request code loads on the first request to such a provider.
 */
import { type ExtensionAPI, lazyStreamSimple } from "@knightcodeai/cli/kit";
import { OPENAI_COMPLETIONS_API, OPENAI_COMPLETIONS_PROVIDER } from "./names.js";

export default function openaiCompatible(knightcode: ExtensionAPI): void {
  const options = { warn: (message: string) => knightcode.log.warn(message) };
  knightcode.registerProvider(
    OPENAI_COMPLETIONS_PROVIDER,
    {
      api: OPENAI_COMPLETIONS_API,
      streamSimple: lazyStreamSimple(async () => {
        const { streamOpenAICompletions } = await import("./provider.js");
        return (request) => streamOpenAICompletions(request, options);
      }),
    },
    { fallback: true },
  );
}
