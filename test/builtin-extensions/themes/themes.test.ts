/**
 * builtin:themes in real sessions (the test UI keeps a real ThemeSelection): theme files from the agent folder, a
 * trusted project and a package-style path, the `theme` setting making one `ctx.ui.theme`, and invalid files
 * reported by name.
 */
import { join } from "node:path";
import type { ExtensionAPI, UITheme } from "@knightcodeai/cli";
import { expect } from "chai";
import { themeFromFile } from "../../../plugins/kit/theme.js";
import { createTestSession, type TestSession } from "../../../testing.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("builtin:themes", () => {
  const tmp = useTempDir("kc-themes-");
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  const night = JSON.stringify({
    name: "night",
    vars: { sky: "#102030" },
    colors: { accent: "sky", error: 196, selectedBg: "#000000" },
  });

  it("reads a theme file: vars, 256-colour indexes and hex, the rest from the base theme", () => {
    const path = tmp.write("night.json", night);
    const loaded = themeFromFile(path, { color: true });
    if ("error" in loaded) throw new Error(loaded.error);
    expect(loaded.theme.name).to.equal("night");
    expect(loaded.theme.sourcePath).to.equal(path);
    expect(loaded.theme.fg("accent", "x")).to.equal("\x1b[38;2;16;32;48mx\x1b[39m");
    expect(loaded.theme.fg("error", "x")).to.equal("\x1b[38;5;196mx\x1b[39m");
    expect(loaded.theme.bg("selectedBg", "x")).to.equal("\x1b[48;2;0;0;0mx\x1b[49m");
    expect(loaded.theme.fg("success", "x")).to.not.equal("x");
  });

  it("refuses a file that is not a theme, naming it and the problem", () => {
    const cases: [string, RegExp][] = [
      ["{not json", /cannot be read/],
      [JSON.stringify({ colors: {} }), /has no "name"/],
      [JSON.stringify({ name: "x" }), /has no "colors"/],
      [JSON.stringify({ name: "x", colors: { accent: "blue" } }), /colour of "accent"/],
      [JSON.stringify({ name: "x", base: "sepia", colors: {} }), /"base" must be one of dark, light/],
    ];
    for (const [text, problem] of cases) {
      const path = tmp.write("bad.json", text);
      const loaded = themeFromFile(path);
      expect("error" in loaded && loaded.error)
        .to.match(problem)
        .and.to.contain(path);
    }
  });

  async function session(
    settings: Record<string, unknown>,
    options: { approve?: boolean; themePaths?: string[] } = {},
  ) {
    let seen: UITheme | undefined;
    const probe = (kc: ExtensionAPI) => {
      kc.on("resources_discover", () => ({ themePaths: options.themePaths ?? [] }));
      kc.on("agent_start", (_event, ctx) => {
        seen = ctx.ui.theme;
      });
    };
    t = await createTestSession({
      cwd: join(tmp.path, "project"),
      agentDir: join(tmp.path, "agent"),
      settings,
      extensions: [probe],
      script: [{ text: "ok" }],
      ...(options.approve !== undefined ? { approve: options.approve } : {}),
    });
    await t.prompt("hi");
    return seen;
  }

  const themeWarnings = () =>
    t!.logs.filter((l) => l.extension === "builtin:themes" && l.level === "warn").map((l) => l.message);

  it("makes the `theme` setting's file theme ctx.ui.theme, from the agent folder", async () => {
    tmp.write("agent/themes/night.json", night);
    const theme = await session({ theme: "night" });
    expect(theme?.name).to.equal("night");
    expect(themeWarnings()).to.deep.equal([]);
  });

  it("loads a trusted project's themes and discovered theme paths, but not an untrusted project's", async () => {
    tmp.write("project/.knightcode/themes/proj.json", JSON.stringify({ name: "proj", colors: {} }));
    tmp.write("pkg/themes/pkg.json", JSON.stringify({ name: "pkg", colors: {} }));
    expect((await session({ theme: "proj" }, { approve: true }))?.name).to.equal("proj");
    await t!.dispose();
    const untrusted = await session({ theme: "proj" }, { approve: false });
    expect(untrusted?.name).to.equal("dark");
    expect(themeWarnings().join("\n")).to.contain('no theme named "proj"');
    await t!.dispose();
    expect(
      (await session({ theme: "pkg" }, { themePaths: [join(tmp.path, "pkg", "themes")] }))?.name,
    ).to.equal("pkg");
  });

  it("warns about an invalid theme file by name and keeps the others; a built-in name works too", async () => {
    const bad = tmp.write("agent/themes/broken.json", "{oops");
    tmp.write("agent/themes/night.json", night);
    expect((await session({ theme: "light" }))?.name).to.equal("light");
    const warnings = themeWarnings();
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.contain(bad);
  });

  it("honours the `themes` patterns of the user's settings", async () => {
    tmp.write("agent/themes/night.json", night);
    tmp.write("agent/settings.json", JSON.stringify({ themes: ["-themes/night.json"] }));
    expect((await session({ theme: "night" }))?.name).to.equal("dark");
    expect(themeWarnings().join("\n")).to.contain('no theme named "night"');
  });
});
