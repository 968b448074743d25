/** `resources_discover`: emitted once extensions are in, at startup and on reload; contributions are concatenated. */

import { join } from "node:path";
import type { ExtensionAPI, ResourcesDiscoverEvent } from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";

describe("resources_discover", () => {
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it("collects every handler's paths, resolved against the cwd, at startup and again on reload", async () => {
    const seen: ResourcesDiscoverEvent[] = [];
    t = await createTestSession({
      extensions: [
        (kc: ExtensionAPI) =>
          kc.on("resources_discover", (event) => {
            seen.push({ ...event });
            return { skillPaths: ["skills"], promptPaths: ["/abs/prompts"] };
          }),
        (kc: ExtensionAPI) =>
          kc.on("resources_discover", () => ({ skillPaths: ["more-skills", 7 as never], themePaths: ["t"] })),
      ],
    });
    const cwd = t.cwd;
    const expected = {
      skillPaths: [join(cwd, "skills"), join(cwd, "more-skills")],
      promptPaths: ["/abs/prompts"],
      themePaths: [join(cwd, "t")],
    };
    expect(t.session.discoveredResources()).to.deep.equal(expected);
    expect(seen).to.deep.equal([{ cwd, reason: "startup" }]);
    expect(
      t.warnings.some((w) => w.includes("skillPaths entries must be non-empty strings; ignored 7")),
    ).to.equal(true);
    await t.session.reload();
    expect(seen.map((e) => e.reason)).to.deep.equal(["startup", "reload"]);
    expect(t.session.discoveredResources()).to.deep.equal(expected);
  });

  it("gives empty lists when no extension contributes, and a throwing handler is reported, not fatal", async () => {
    t = await createTestSession({
      extensions: [
        (kc: ExtensionAPI) =>
          kc.on("resources_discover", () => {
            throw new Error("discovery broke");
          }),
      ],
    });
    expect(t.session.discoveredResources()).to.deep.equal({
      skillPaths: [],
      promptPaths: [],
      themePaths: [],
    });
    expect(t.warnings.some((w) => w.includes("discovery broke"))).to.equal(true);
  });
});
