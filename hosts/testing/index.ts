/** The test kit behind `@knightcodeai/cli/testing`. */
export type { ScriptEntry, ScriptStep } from "../../builtin-extensions/scripted-provider/index.js";
export { type DisposableLeakTracker, trackDisposables } from "./leak-tracker.js";
export {
  createTestSession,
  type TestSession,
  type TestSessionOptions,
  type ToolCallRecord,
} from "./test-session.js";
export type { DialogAnswer, TestUIRecord } from "./test-ui.js";
