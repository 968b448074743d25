import { createHash } from "node:crypto";
import { chmodSync, lstatSync, readdirSync, readFileSync, statSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { DEFAULT_SETTINGS, loadSettings } from "../../../plugins/settings/settings.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

describe("plugins/settings loadSettings", () => {
  const tmp = useTempDir("kc-settings-");
  const agentDir = () => join(tmp.path, "agent");
  const cwd = () => join(tmp.path, "project");
  const writeGlobal = (value: unknown) =>
    tmp.write("agent/settings.json", typeof value === "string" ? value : JSON.stringify(value, null, 2));
  const writeProject = (value: unknown) =>
    tmp.write(
      "project/.knightcode/settings.json",
      typeof value === "string" ? value : JSON.stringify(value, null, 2),
    );
  const load = (projectTrusted = true, overrides?: object) =>
    loadSettings({ agentDir: agentDir(), cwd: cwd(), projectTrusted, overrides });

  it("gives the defaults when there are no files", () => {
    const settings = load();
    expect(settings.all()).to.deep.equal(DEFAULT_SETTINGS);
    expect(settings.get("retry.maxRetries")).to.equal(3);
    expect(settings.get("defaultProjectTrust")).to.equal("ask");
    expect(settings.get("defaultModel")).to.equal(undefined);
    expect(settings.origin("retry.baseDelayMs")).to.equal("default");
    expect(settings.origin("defaultModel")).to.equal(undefined);
    expect(settings.versions).to.deep.equal({});
    expect(settings.warnings).to.deep.equal([]);
  });

  it("deep-merges defaults < global < project < overrides, with origins and versions", () => {
    const globalText = JSON.stringify({
      retry: { maxRetries: 5, baseDelayMs: 100 },
      defaultTools: ["+grep", "-write"],
      defaultModel: "global-model",
      myExtension: { color: "red", size: 1, list: [1, 2, 3] },
    });
    const projectText = JSON.stringify({
      retry: { baseDelayMs: 500 },
      defaultTools: ["+find"],
      myExtension: { size: 2, list: [9] },
    });
    writeGlobal(globalText);
    writeProject(projectText);
    const settings = load(true, { defaultModel: "cli-model", retry: { enabled: false } });

    expect(settings.get("retry")).to.deep.equal({
      enabled: false,
      maxRetries: 5,
      baseDelayMs: 500,
      maxDelayMs: 60000,
    });
    expect(settings.get("defaultTools")).to.deep.equal(["+find"]); // arrays replace
    expect(settings.get("myExtension")).to.deep.equal({ color: "red", size: 2, list: [9] }); // unknown keys kept
    expect(settings.get("defaultModel")).to.equal("cli-model");

    expect(settings.origin("retry.enabled")).to.equal("override");
    expect(settings.origin("retry.maxRetries")).to.equal("global");
    expect(settings.origin("retry.baseDelayMs")).to.equal("project");
    expect(settings.origin("retry.maxDelayMs")).to.equal("default");
    expect(settings.origin("retry")).to.equal("override");
    expect(settings.origin("myExtension.color")).to.equal("global");
    expect(settings.origin("myExtension.list")).to.equal("project");
    expect(settings.origin("myExtension.list.1")).to.equal(undefined);
    expect(settings.origin("defaultModel")).to.equal("override");

    expect(settings.versions).to.deep.equal({ global: sha256(globalText), project: sha256(projectText) });
    expect(settings.warnings).to.deep.equal([]);
  });

  it("returns a deep-frozen copy from all() that does not reach the files' objects", () => {
    writeGlobal({ retry: { maxRetries: 1 }, ext: { nested: { a: 1 } } });
    const settings = load();
    const all = settings.all() as any;
    expect(Object.isFrozen(all)).to.equal(true);
    expect(Object.isFrozen(all.retry)).to.equal(true);
    expect(Object.isFrozen(all.ext.nested)).to.equal(true);
    expect(() => {
      all.ext.nested.a = 2;
    }).to.throw(TypeError);
    expect(Object.isFrozen(settings.get("defaultTools"))).to.equal(true);
    expect(settings.get("toString")).to.equal(undefined);
  });

  it("does not read the project file of an untrusted project", () => {
    writeGlobal({ defaultModel: "g" });
    writeProject({ defaultModel: "p", projectOnly: true });
    const settings = load(false);
    expect(settings.get("defaultModel")).to.equal("g");
    expect(settings.get("projectOnly")).to.equal(undefined);
    expect(settings.versions.project).to.equal(undefined);
    expect(settings.versions.global).to.be.a("string");
    expect(settings.projectTrusted).to.equal(false);
  });

  it("reports malformed global JSON with line and column and still loads the project", () => {
    const file = writeGlobal('{\n  "defaultModel": "x",\n  "retry": { "maxRetries": }\n}\n');
    writeProject({ defaultModel: "p" });
    const settings = load();
    expect(settings.warnings).to.have.length(1);
    expect(settings.warnings[0]).to.contain(`${file}:3:28:`);
    expect(settings.warnings[0]).to.contain("global settings were not loaded");
    expect(settings.get("defaultModel")).to.equal("p");
    expect(settings.get("retry.maxRetries")).to.equal(3);
    expect(settings.versions.global).to.be.a("string"); // the file exists, so it has a version
  });

  it("reports malformed project JSON (a trailing comma) and still loads the global file", () => {
    writeGlobal({ defaultModel: "g" });
    const file = writeProject('{\n  "defaultModel": "p",\n}');
    const settings = load();
    expect(settings.warnings).to.have.length(1);
    expect(settings.warnings[0]).to.match(new RegExp(`^${escapeRegExp(file)}:3:1: invalid JSON: `));
    expect(settings.warnings[0]).to.contain("project settings were not loaded");
    expect(settings.get("defaultModel")).to.equal("g");
  });

  it("rejects comments, a non-object top level, and reads an empty file as {}", () => {
    const file = writeGlobal('// my settings\n{ "defaultModel": "x" }');
    expect(load().warnings[0]).to.contain(`${file}:1:1: invalid JSON`);
    writeGlobal('\n  ["a"]');
    const array = load();
    expect(array.warnings[0]).to.contain(`${file}:2:3: the top level must be a JSON object, found an array`);
    writeGlobal("  \n");
    const empty = load();
    expect(empty.warnings).to.deep.equal([]);
    expect(empty.get("retry.maxRetries")).to.equal(3);
  });

  it("drops a wrong-typed known key with a warning naming file and key; the rest of the file applies", () => {
    writeGlobal({ retry: { maxRetries: 7, baseDelayMs: 10 } });
    const file = writeProject({
      retry: { maxRetries: "five", enabled: false },
      defaultThinkingLevel: "extreme",
      defaultTools: ["+a", 3],
      defaultModel: "m",
      custom: 1,
    });
    const settings = load();
    expect(settings.get("retry.maxRetries")).to.equal(7); // the global value stays in force
    expect(settings.origin("retry.maxRetries")).to.equal("global");
    expect(settings.get("retry.enabled")).to.equal(false);
    expect(settings.get("defaultThinkingLevel")).to.equal(undefined);
    expect(settings.get("defaultTools")).to.deep.equal([]);
    expect(settings.get("defaultModel")).to.equal("m");
    expect(settings.get("custom")).to.equal(1);
    expect(settings.warnings).to.have.length(3);
    expect(settings.warnings.join("\n")).to.contain(
      `${file}: setting "retry.maxRetries" ignored: expected an integer`,
    );
    expect(settings.warnings.join("\n")).to.contain(`"defaultThinkingLevel" ignored: expected one of "off"`);
    expect(settings.warnings.join("\n")).to.contain(`"defaultTools" ignored`);
  });

  it("drops a whole object given the wrong type, and validates overrides", () => {
    writeGlobal({ retry: 5 });
    const settings = load(true, { defaultProvider: 42 });
    expect(settings.get("retry")).to.deep.equal(DEFAULT_SETTINGS.retry);
    expect(settings.warnings).to.have.length(2);
    expect(settings.warnings[0]).to.contain('setting "retry" ignored: expected an object, found 5');
    expect(settings.warnings[1]).to.contain('settings overrides: setting "defaultProvider" ignored');
  });

  it("ignores defaultProjectTrust in project settings, honours it globally and from overrides", () => {
    writeGlobal({ defaultProjectTrust: "never" });
    const file = writeProject({ defaultProjectTrust: "always", defaultModel: "p" });
    const settings = load();
    expect(settings.get("defaultProjectTrust")).to.equal("never");
    expect(settings.origin("defaultProjectTrust")).to.equal("global");
    expect(settings.get("defaultModel")).to.equal("p");
    expect(settings.warnings).to.have.length(1);
    expect(settings.warnings[0]).to.contain(file).and.to.contain("a project cannot trust itself");
    expect(load(true, { defaultProjectTrust: "always" }).get("defaultProjectTrust")).to.equal("always");
  });

  describe("saveGlobal", () => {
    it("read-modify-writes the file atomically, keeps other keys and the mode, and updates the settings", () => {
      const file = writeGlobal({ keep: { me: true }, retry: { maxRetries: 1, baseDelayMs: 5 }, drop: 1 });
      chmodSync(file, 0o640);
      const settings = load();
      // Someone else changes the file after it was loaded: their change survives.
      writeGlobal({ keep: { me: true }, retry: { maxRetries: 1, baseDelayMs: 5 }, drop: 1, other: "later" });
      settings.saveGlobal({ retry: { maxRetries: 9 }, defaultModel: "remembered", drop: undefined });

      const onDisk = JSON.parse(readFileSync(file, "utf8"));
      expect(onDisk).to.deep.equal({
        keep: { me: true },
        retry: { maxRetries: 9, baseDelayMs: 5 },
        other: "later",
        defaultModel: "remembered",
      });
      expect(statSync(file).mode & 0o777).to.equal(0o640);
      expect(readdirSync(agentDir())).to.deep.equal(["settings.json"]); // no temp file left
      expect(settings.get("retry.maxRetries")).to.equal(9);
      expect(settings.get("defaultModel")).to.equal("remembered");
      expect(settings.versions.global).to.equal(sha256(readFileSync(file, "utf8")));
    });

    it("creates the file and its folder when missing, and follows a symlink", () => {
      const settings = load();
      settings.saveGlobal({ defaultProvider: "p" });
      expect(JSON.parse(readFileSync(join(agentDir(), "settings.json"), "utf8"))).to.deep.equal({
        defaultProvider: "p",
      });

      const real = tmp.write("dotfiles/settings.json", '{"a": 1}');
      const link = join(tmp.path, "linked-agent", "settings.json");
      tmp.write("linked-agent/.keep", "");
      symlinkSync(real, link);
      loadSettings({
        agentDir: join(tmp.path, "linked-agent"),
        cwd: cwd(),
        projectTrusted: false,
      }).saveGlobal({
        b: 2,
      });
      expect(lstatSync(link).isSymbolicLink()).to.equal(true);
      expect(JSON.parse(readFileSync(real, "utf8"))).to.deep.equal({ a: 1, b: 2 });
    });

    it("refuses a wrong-typed patch and a malformed file without touching it", () => {
      const settings = load();
      expect(() => settings.saveGlobal({ retry: { maxRetries: -1 } })).to.throw(
        TypeError,
        /retry\.maxRetries/,
      );
      const broken = "{ nope";
      const file = writeGlobal(broken);
      expect(() => settings.saveGlobal({ defaultModel: "x" })).to.throw(/not valid JSON|invalid JSON/);
      expect(readFileSync(file, "utf8")).to.equal(broken);
    });
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
