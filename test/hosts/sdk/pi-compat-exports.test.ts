/**
 * The table of pi's exports in docs/extensions.md cannot drift: it is what scripts/gen-pi-exports-doc.ts writes from
 * hosts/sdk/pi-compat/exports.ts, and the pi modules extension files get agree with that list, name by name, under
 * both scopes (a supported or mapped name is a real value, a refused one a stand-in that gives its reason).
 */

import { readFileSync } from "node:fs";
import "@knightcodeai/cli";
import { expect } from "chai";
import { PI_COMPAT_SET, packageModules } from "../../../hosts/sdk/package-modules.js";
import { PI_EXPORTS, type PiModuleName } from "../../../hosts/sdk/pi-compat/exports.js";
import { refusalOf } from "../../../hosts/sdk/pi-compat/modules.js";
import { PI_EXPORTS_DOC, withTable } from "../../../scripts/gen-pi-exports-doc.js";

describe("the table of pi's exports", () => {
  it("in docs/extensions.md is the one the list writes (regenerate: scripts/gen-pi-exports-doc.ts)", () => {
    const doc = readFileSync(PI_EXPORTS_DOC, "utf8");
    expect(withTable(doc) === doc, "docs/extensions.md's table of pi's exports is out of date").to.equal(
      true,
    );
  });

  for (const scope of ["@mariozechner", "@earendil-works"]) {
    it(`matches the ${scope} modules extension files import`, async () => {
      const modules = await packageModules(PI_COMPAT_SET);
      for (const [name, exports] of Object.entries(PI_EXPORTS) as [
        PiModuleName,
        (typeof PI_EXPORTS)[PiModuleName],
      ][]) {
        const module = (await modules[`${scope}/${name}`]) as Record<string, unknown>;
        for (const offered of [...exports.supported, ...Object.keys(exports.mapped)]) {
          expect(module[offered], `${scope}/${name} ${offered}`).to.not.equal(undefined);
          expect(refusalOf(module[offered]), `${scope}/${name} ${offered}`).to.equal(undefined);
        }
        for (const { reason, names } of exports.refused) {
          for (const refused of names)
            expect(refusalOf(module[refused]), `${scope}/${name} ${refused}`).to.equal(reason);
        }
      }
    });
  }
});
