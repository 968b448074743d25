/**
 * The `builtin:scripted` registration: the `--script` flag and the provider's name and model. The request code (the
 * script schema, its compiled checks, the streaming wire) loads on the first request, so a session that never
 * picks the scripted provider never loads it.
 */
import { type ExtensionAPI, lazyStreamSimple } from "@knightcodeai/cli/kit";
import { SCRIPT_FLAG, SCRIPTED_API, SCRIPTED_MODEL, SCRIPTED_PROVIDER } from "./names.js";

export default function scriptedProvider(knightcode: ExtensionAPI): void {
  knightcode.registerFlag(SCRIPT_FLAG, {
    type: "string",
    description: "JSON file of scripted provider steps",
  });
  knightcode.registerProvider(
    SCRIPTED_PROVIDER,
    {
      api: SCRIPTED_API,
      models: [{ ...SCRIPTED_MODEL }],
      // Offered in no model list: it answers from a script, for tests and offline runs.
      testOnly: true,
      streamSimple: lazyStreamSimple(async () => {
        const [{ scriptedStream }, { scriptFileSteps }] = await Promise.all([
          import("./provider.js"),
          import("./script-file.js"),
        ]);
        return scriptedStream(scriptFileSteps(knightcode));
      }),
    },
    { fallback: true },
  );
}
