/** @knightcodeai/cli/testing: helpers for testing extensions and plugins. */

import * as sdk from "./hosts/sdk/index.js";
import { publishPackageEntries } from "./hosts/sdk/package-modules.js";
import * as testing from "./hosts/testing/index.js";
import * as kit from "./kit.js";

export * from "./hosts/testing/index.js";

publishPackageEntries({
  kit,
  sdk,
  testing: () => testing,
  plugin: () => import("./plugin.js"),
  tui: () => import("./tui.js"),
});
