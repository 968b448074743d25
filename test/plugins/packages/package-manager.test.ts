/**
 * PackageManager.resolve over real folders: what a session would load from the resource folders, the resource
 * settings and packages of both scopes, with the settings patterns applied per scope, and setEnabled writing
 * `+`/`-` patterns.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { expect } from "chai";
import {
  PackageError,
  PackageManager,
  type ResolvedResource,
} from "../../../plugins/packages/package-manager.js";

describe("PackageManager.resolve", () => {
  let dir: string;
  let agentDir: string;
  let cwd: string;
  const write = (path: string, text: string) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    return path;
  };
  const skill = (name: string) => `---\nname: ${name}\ndescription: d\n---\n`;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "kc-resolve-"));
    agentDir = join(dir, "agent");
    cwd = join(dir, "project");
    write(join(agentDir, "extensions", "keep.ts"), "export default () => {};\n");
    write(join(agentDir, "extensions", "legacy.ts"), "export default () => {};\n");
    write(join(agentDir, "skills", "a", "SKILL.md"), skill("a"));
    write(join(agentDir, "skills", "old-b", "SKILL.md"), skill("old-b"));
    write(join(agentDir, "prompts", "p.md"), "p\n");
    write(join(agentDir, "themes", "night.json"), "{}\n");
    write(join(cwd, ".knightcode", "prompts", "proj.md"), "x\n");
    write(join(dir, "extra", "more.md"), "more\n");
    const pkg = join(dir, "pkg");
    write(
      join(pkg, "package.json"),
      JSON.stringify({ name: "pkg", knightcode: { prompts: ["prompts/*.md"] } }),
    );
    write(join(pkg, "prompts", "one.md"), "1\n");
    write(join(pkg, "prompts", "two.md"), "2\n");
    write(join(pkg, "skills", "ignored", "SKILL.md"), skill("ignored"));
    write(
      join(agentDir, "settings.json"),
      JSON.stringify({
        extensions: ["-extensions/legacy.ts"],
        skills: ["!old-*"],
        prompts: ["../extra/more.md"],
        packages: [{ source: pkg, prompts: ["!prompts/two.md"] }],
      }),
    );
    write(
      join(cwd, ".knightcode", "settings.json"),
      JSON.stringify({ prompts: ["-prompts/proj.md"], packages: ["../../pkg"] }),
    );
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const state = (resources: ResolvedResource[]) =>
    Object.fromEntries(resources.map((r) => [`${r.scope}:${r.type}:${r.name}`, `${r.enabled}:${r.source}`]));

  it("applies each scope's patterns to its folders, settings entries and package filters", async () => {
    const manager = new PackageManager({ agentDir, cwd });
    const resolved = await manager.resolve({ scopes: ["user"], projectTrusted: false });
    const pkg = join(dir, "pkg");
    expect(state(resolved.resources)).to.deep.equal({
      "user:prompts:one": `true:${pkg}`,
      "user:prompts:two": `false:${pkg}`,
      "user:extensions:keep": "true:auto",
      "user:extensions:legacy": "false:auto",
      "user:skills:a": "true:auto",
      "user:skills:old-b": "false:auto",
      "user:prompts:more": "true:settings",
      "user:prompts:p": "true:auto",
      "user:themes:night": "true:auto",
    });
    // The manifest lists only prompts: the package's skills folder is not offered.
    expect(resolved.resources.some((r) => r.name === "ignored")).to.equal(false);
    expect(resolved.warnings).to.deep.equal([]);
  });

  it("reports an untrusted project's packages without resolving them; a trusted project's entry wins", async () => {
    const manager = new PackageManager({ agentDir, cwd });
    const untrusted = await manager.resolve({ scopes: ["user", "project"], projectTrusted: false });
    expect(untrusted.untrustedPackages).to.deep.equal(["../../pkg"]);
    expect(untrusted.resources.some((r) => r.scope === "project")).to.equal(false);
    const trusted = await manager.resolve({ scopes: ["user", "project"], projectTrusted: true });
    const s = state(trusted.resources);
    // The project lists the same package without a filter: its entry wins, so both templates are on.
    expect(s["project:prompts:one"]).to.equal(`true:../../pkg`);
    expect(s["project:prompts:two"]).to.equal(`true:../../pkg`);
    expect(s["project:prompts:proj"]).to.equal("false:auto");
  });

  it("setEnabled writes +/- patterns into the scope's setting or the package's filter", async () => {
    const manager = new PackageManager({ agentDir, cwd });
    const find = async (name: string) =>
      (await manager.resolve({ scopes: ["user"], projectTrusted: false })).resources.find(
        (r) => r.name === name,
      )!;
    manager.setEnabled(await find("legacy"), true);
    manager.setEnabled(await find("p"), false);
    manager.setEnabled(await find("two"), true);
    const settings = JSON.parse(readFileSync(join(agentDir, "settings.json"), "utf8"));
    expect(settings.extensions).to.deep.equal(["+extensions/legacy.ts"]);
    expect(settings.prompts).to.deep.equal(["../extra/more.md", "-prompts/p.md"]);
    expect(settings.packages[0].prompts).to.deep.equal(["!prompts/two.md", "+prompts/two.md"]);
    expect((await find("legacy")).enabled).to.equal(true);
    expect((await find("p")).enabled).to.equal(false);
    expect((await find("two")).enabled).to.equal(true);
  });

  describe("install refusals leave the settings file byte for byte", () => {
    const settingsText = () => readFileSync(join(agentDir, "settings.json"), "utf8");

    it("a failed npm install, quoting npm's error output", async () => {
      const manager = new PackageManager({
        agentDir,
        cwd,
        env: { ...process.env, npm_config_offline: "true" },
      });
      const before = settingsText();
      const error = await manager
        .install(`npm:nothing@file:${join(dir, "nothing.tgz")}`, "user")
        .catch((e) => e);
      expect(error).to.be.instanceOf(PackageError);
      expect(error.message).to.contain("`npm install").and.contain("nothing.tgz");
      expect(settingsText()).to.equal(before);
    });

    it("a package already installed (one that offers nothing installs, and says so)", async () => {
      const manager = new PackageManager({ agentDir, cwd });
      write(join(dir, "empty", "README.md"), "nothing\n");
      const empty = await manager.install(join(dir, "empty"), "user");
      expect(empty.offersNothing).to.equal(true);
      expect(JSON.parse(settingsText()).packages).to.include(join(dir, "empty"));
      await manager.remove(join(dir, "empty"), "user");
      const before = settingsText();
      const twice = await manager.install(`${join(dir, "pkg")}/`, "user").catch((e) => e);
      expect(twice.message).to.contain("already installed");
      expect(settingsText()).to.equal(before);
    });
  });

  describe("a package is held to its own real folder", () => {
    const outsideFile = () => write(join(dir, "outside", "outside.ts"), "export default () => {};\n");
    const install = (folder: string) =>
      new PackageManager({ agentDir, cwd }).install(folder, "user").catch((e: Error) => e);

    it("refuses an absolute manifest entry and one in a folder extension's own package.json", async () => {
      const file = outsideFile();
      const absolute = join(dir, "absolute");
      write(join(absolute, "package.json"), JSON.stringify({ knightcode: { extensions: [file] } }));
      const a = await install(absolute);
      expect(a).to.be.instanceOf(Error);
      expect((a as Error).message).to.contain(`"extensions" entry "${file}" is an absolute path`);

      const nested = join(dir, "nested");
      write(
        join(nested, "extensions", "sub", "package.json"),
        JSON.stringify({ knightcode: { extensions: ["../../../outside/outside.ts"] } }),
      );
      const n = await install(nested);
      expect((n as Error).message)
        .to.contain(`package ${nested}: extensions/sub/package.json entry "../../../outside/outside.ts"`)
        .and.contain("climbs out");
    });

    it("refuses a linked file inside a conventional folder, and keeps links that stay inside", async () => {
      outsideFile();
      const linked = join(dir, "linked");
      mkdirSync(join(linked, "extensions"), { recursive: true });
      symlinkSync(join(dir, "outside", "outside.ts"), join(linked, "extensions", "evil.ts"));
      const refused = await install(linked);
      expect((refused as Error).message).to.contain(
        `package ${linked}: extensions/evil.ts resolves through a symbolic link to ${join(dir, "outside", "outside.ts")}`,
      );

      const fine = join(dir, "fine");
      write(join(fine, "lib", "real.ts"), "export default () => {};\n");
      mkdirSync(join(fine, "extensions"), { recursive: true });
      symlinkSync(join(fine, "lib", "real.ts"), join(fine, "extensions", "alias.ts"));
      const ok = await install(fine);
      expect(ok).to.not.be.instanceOf(Error);
      const resolved = await new PackageManager({ agentDir, cwd }).resolve({
        scopes: ["user"],
        projectTrusted: false,
      });
      expect(resolved.resources.map((r) => r.path)).to.include(join(fine, "extensions", "alias.ts"));
      expect(resolved.warnings).to.deep.equal([]);
    });
  });
});
