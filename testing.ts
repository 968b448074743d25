/** @knightcodeai/cli/testing: helpers for testing extensions and plugins. */
export type { ScriptEntry, ScriptStep } from "./builtin-extensions/scripted-provider/index.js";
export { type DisposableLeakTracker, trackDisposables } from "./plugins/testing/leak-tracker.js";
export {
  createTestSession,
  type DialogAnswer,
  type TestSession,
  type TestSessionOptions,
  type ToolCallRecord,
} from "./plugins/testing/test-session.js";
