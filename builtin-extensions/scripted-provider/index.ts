/**
 * builtin:scripted — a provider that answers from a script instead of a model, streamed like a network provider.
 *
 *   knightcode --provider scripted --script examples/scripts/hello.json
 *
 * Each step of the script answers one request, in order; see schema.ts for the format. A `before_provider_request`
 * handler may put a `scriptedStep` field into the payload: that step then answers the request instead of the
 * script's step for it (the request still counts, so request N+1 gets step N+1).
 */

export { default } from "./extension.js";
export { SCRIPT_FLAG, SCRIPTED_API, SCRIPTED_MODEL, SCRIPTED_PROVIDER } from "./names.js";
export {
  chunkText,
  codeSteps,
  createScriptedProvider,
  type RawBlockKind,
  type RawUsage,
  type ScriptEntry,
  type ScriptedRawEvent,
  type ScriptStepFunction,
  type StepLoader,
  scriptedProviderConfig,
  scriptedStream,
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
export { scriptFileSteps } from "./script-file.js";
