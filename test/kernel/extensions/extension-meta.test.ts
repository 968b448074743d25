/**
 * What an extension declares it needs (`export const meta = { apiVersion, requires }`, or `apiVersion`/`requires` in
 * its package's `knightcode` field) is checked before its factory runs: a mismatch is a load failure naming the
 * extension and what is missing, the other extensions still load, and a satisfied declaration changes nothing.
 * Real extension files through the real loader (test kit), the semver subset on its own, and the built CLI.
 */
import { join } from "node:path";
import { VERSION } from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { satisfies } from "../../../kernel/extensions/version-range.js";
import { runCli } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

/** An extension file that registers the command `name` (so a test sees whether its factory ran), with `meta`. */
const extension = (name: string, meta?: unknown) =>
  `${meta === undefined ? "" : `export const meta = ${JSON.stringify(meta)};\n`}` +
  `export default function (kc) {\n  kc.registerCommand(${JSON.stringify(name)}, { description: "probe", handler: () => "${name} ran" });\n}\n`;

describe("extension metadata: apiVersion and requires", () => {
  const tmp = useTempDir("kc-ext-meta-");
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  const commands = () => t!.session.getCommands().map((c) => c.name);
  const failures = () => t!.warnings.join("\n");

  it("runs an extension whose declaration holds: this API version, a loaded built-in, a package it names", async () => {
    tmp.write(
      "pkg/package.json",
      JSON.stringify({ name: "probe-pkg", knightcode: { extensions: ["./a.ts"] } }),
    );
    const a = tmp.write("pkg/a.ts", extension("pkg-a"));
    const b = tmp.write(
      "b.ts",
      extension("needs-all", { apiVersion: `^${VERSION}`, requires: ["builtin:mcp", "probe-pkg"] }),
    );
    t = await createTestSession({ cwd: tmp.path, extensions: [b, a] });
    expect(commands()).to.include.members(["pkg-a", "needs-all"]);
    expect(failures()).to.equal("");
  });

  it("refuses an extension that needs another API version, naming it, the range and the running version", async () => {
    const file = tmp.write("future.ts", extension("future", { apiVersion: ">=99.0.0" }));
    const other = tmp.write("other.ts", extension("other"));
    t = await createTestSession({ cwd: tmp.path, extensions: [file, other] });
    expect(commands()).to.include("other").and.not.include("future");
    expect(failures()).to.contain(
      `Extension ${file} failed to load: it needs the KnightCode API >=99.0.0 (its meta.apiVersion), and this is KnightCode ${VERSION}`,
    );
  });

  it("refuses an extension whose required extension is switched off or failed, before its factory runs", async () => {
    const needsMcp = tmp.write("needs-mcp.ts", extension("needs-mcp", { requires: ["builtin:mcp"] }));
    const broken = tmp.write("broken.ts", 'export default function () {\n  throw new Error("no");\n}\n');
    const needsBroken = tmp.write(
      "needs-broken.ts",
      extension("needs-broken", { requires: [`cli:${broken}`] }),
    );
    t = await createTestSession({
      cwd: tmp.path,
      disableBuiltins: ["builtin:mcp"],
      extensions: [needsMcp, broken, needsBroken],
    });
    expect(commands()).to.not.include.any.members(["needs-mcp", "needs-broken"]);
    expect(failures()).to.contain(
      `Extension ${needsMcp} failed to load: it requires builtin:mcp, which is not loaded in this session`,
    );
    expect(failures()).to.contain(
      `Extension ${needsBroken} failed to load: it requires cli:${broken}, which failed to load`,
    );
  });

  it("checks a package's declaration (package.json knightcode.apiVersion) for each of its extensions", async () => {
    tmp.write(
      "old-pkg/package.json",
      JSON.stringify({ name: "old-pkg", knightcode: { extensions: ["./a.ts"], apiVersion: "~0.0.1" } }),
    );
    const a = tmp.write("old-pkg/a.ts", extension("old-a"));
    t = await createTestSession({ cwd: tmp.path, extensions: [join(tmp.path, "old-pkg")] });
    expect(commands()).to.not.include("old-a");
    expect(failures()).to.contain(
      `Extension ${a} failed to load: it needs the KnightCode API ~0.0.1 ("knightcode.apiVersion" in ${join(tmp.path, "old-pkg", "package.json")}), and this is KnightCode ${VERSION}`,
    );
  });

  it("says what is wrong with a malformed declaration", async () => {
    const badRange = tmp.write("bad-range.ts", extension("bad-range", { apiVersion: "soon" }));
    const badRequires = tmp.write("bad-requires.ts", extension("bad-requires", { requires: "builtin:mcp" }));
    t = await createTestSession({ cwd: tmp.path, extensions: [badRange, badRequires] });
    expect(commands()).to.not.include.any.members(["bad-range", "bad-requires"]);
    expect(failures()).to.contain(
      `Extension ${badRange} failed to load: its meta.apiVersion "soon" is not a version range`,
    );
    expect(failures()).to.contain(
      `Extension ${badRequires} failed to load: its meta export: requires must be a list of extension ids or package names`,
    );
  });

  it("reads the semver subset as npm's semver does", () => {
    const cases: [string, string, boolean][] = [
      ["0.1.0", "^0.1", true],
      ["0.1.9", "^0.1.2", true],
      ["0.2.0", "^0.1", false],
      ["0.0.3", "^0.0.3", true],
      ["0.0.4", "^0.0.3", false],
      ["1.9.0", "^1.2.3", true],
      ["2.0.0", "^1.2.3", false],
      ["1.2.9", "~1.2.3", true],
      ["1.3.0", "~1.2.3", false],
      ["1.9.0", "~1", true],
      ["0.1.0", "0.1.0", true],
      ["0.1.1", "0.1.0", false],
      ["0.1.7", "0.1", true],
      ["0.1.7", "0.1.x", true],
      ["5.0.0", "*", true],
      ["0.2.5", ">=0.1.0 <0.3", true],
      ["0.3.0", ">=0.1.0 <0.3", false],
      ["1.3.0", ">1.2", true],
      ["1.2.9", ">1.2", false],
      ["1.2.9", "<=1.2", true],
      ["1.3.0", "<=1.2", false],
      ["3.0.0", "^1 || ^3", true],
      ["2.0.0", "^1 || ^3", false],
      ["0.2.0-beta.1", "^0.1", false],
      ["0.2.0-beta.1", ">=0.2.0-beta.0 <0.3", true],
      ["0.2.0-beta.1", ">=0.2.0-beta.2", false],
      ["0.2.0", ">= 0.2.0", true],
    ];
    for (const [version, range, expected] of cases) {
      expect(satisfies(version, range), `${version} in ${range}`).to.equal(expected);
    }
    expect(() => satisfies("0.1.0", "soon")).to.throw('"soon" is not a version or a comparator');
    expect(() => satisfies("0.1.0", "")).to.throw("the range is empty");
  });

  it("the built knightcode reports a refused extension on stderr and runs the others", async () => {
    const file = tmp.write("future.ts", extension("future", { apiVersion: "^99" }));
    const hello = tmp.write("hello.ts", extension("hello"));
    const result = await runCli(["-e", file, "-e", hello, "--list-extensions"], {
      cwd: tmp.path,
      env: { KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") },
    });
    expect(result.stderr).to.contain(
      `Extension ${file} failed to load: it needs the KnightCode API ^99 (its meta.apiVersion), and this is KnightCode ${VERSION}`,
    );
    expect(result.stdout).to.contain(`cli:${hello}`).and.not.contain(`cli:${file}`);
  });
});
