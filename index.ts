/**
 * @knightcodeai/cli: the public API. Extensions import types and run-time helpers from here (everything in
 * `@knightcodeai/cli/kit`); hosts and applications use the SDK exported here too.
 */

import * as sdk from "./hosts/sdk/index.js";
import { publishPackageEntries } from "./hosts/sdk/package-modules.js";
import * as kit from "./kit.js";

export * from "./hosts/sdk/index.js";
export * from "./kit.js";

publishPackageEntries({
  kit,
  sdk,
  testing: () => import("./testing.js"),
  plugin: () => import("./plugin.js"),
  tui: () => import("./tui.js"),
});
