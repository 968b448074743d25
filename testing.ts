/** @knightcodeai/cli/testing: helpers for testing extensions and plugins. */
export { type DisposableLeakTracker, trackDisposables } from "./plugins/testing/leak-tracker.js";
