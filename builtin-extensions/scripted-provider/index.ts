/**
 * builtin:scripted — a provider that answers from a script instead of a model, streamed like a network provider.
 *
 *   knightcode --provider scripted --script examples/scripts/hello.json
 *
 * Each step of the script answers one request, in order; see schema.ts for the format. A `before_provider_request`
 * handler may put a `scriptedStep` field into the payload: that step then answers the request instead of the
 * script's step for it (the request still counts, so request N+1 gets step N+1).
 */
import type { ExtensionAPI } from "@knightcodeai/cli/kit";
import { SCRIPTED_PROVIDER, scriptedProviderConfig } from "./provider.js";
import { SCRIPT_FLAG, scriptFileSteps } from "./script-file.js";

export {
  chunkText,
  codeSteps,
  createScriptedProvider,
  type RawBlockKind,
  type RawUsage,
  SCRIPTED_API,
  SCRIPTED_MODEL,
  SCRIPTED_PROVIDER,
  type ScriptEntry,
  type ScriptedRawEvent,
  type ScriptStepFunction,
  type StepLoader,
  scriptedProviderConfig,
} from "./provider.js";
export {
  type Checked,
  jsonPath,
  parseScript,
  type Script,
  type ScriptErrorKind,
  ScriptErrorKindSchema,
  ScriptErrorSchema,
  ScriptExpectSchema,
  ScriptSchema,
  type ScriptStep,
  ScriptStepSchema,
  ScriptToolCallSchema,
  ScriptUsageSchema,
  validateScript,
  validateStep,
} from "./schema.js";
export { SCRIPT_FLAG, scriptFileSteps } from "./script-file.js";

export default function scriptedProvider(knightcode: ExtensionAPI): void {
  knightcode.registerFlag(SCRIPT_FLAG, {
    type: "string",
    description: "JSON file of scripted provider steps",
  });
  knightcode.registerProvider(SCRIPTED_PROVIDER, scriptedProviderConfig(scriptFileSteps(knightcode)));
}
