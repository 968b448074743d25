import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import {
  applyResourcePatterns,
  enabledByOverrides,
  globToRegExp,
  resourceFilter,
} from "../../../plugins/kit/resource-patterns.js";

describe("resource patterns (globs, !exclusions, +/- forcing)", () => {
  const base = "/pkg";
  const files = [
    "/pkg/extensions/a.ts",
    "/pkg/extensions/legacy.ts",
    "/pkg/extensions/sub/b.ts",
    "/pkg/skills/review/SKILL.md",
    "/pkg/skills/old-lint/SKILL.md",
  ];

  it("globs: * stays in one folder, ** crosses folders, ? is one character", () => {
    expect(globToRegExp("extensions/*.ts").test("extensions/a.ts")).to.equal(true);
    expect(globToRegExp("extensions/*.ts").test("extensions/sub/b.ts")).to.equal(false);
    expect(globToRegExp("extensions/**/*.ts").test("extensions/sub/b.ts")).to.equal(true);
    expect(globToRegExp("extensions/**/*.ts").test("extensions/a.ts")).to.equal(true);
    expect(globToRegExp("?.ts").test("a.ts")).to.equal(true);
    expect(globToRegExp("a.ts").test("abts")).to.equal(false);
  });

  it("plain globs select, ! excludes, + forces back in, - forces out", () => {
    const on = (patterns: string[]) => [...applyResourcePatterns(files, patterns, base)];
    expect(on([])).to.deep.equal(files);
    expect(on(["extensions/*.ts"])).to.deep.equal(["/pkg/extensions/a.ts", "/pkg/extensions/legacy.ts"]);
    expect(on(["extensions/*.ts", "!extensions/legacy.ts"])).to.deep.equal(["/pkg/extensions/a.ts"]);
    expect(on(["extensions/*.ts", "!extensions/legacy.ts", "+extensions/legacy.ts"])).to.include(
      "/pkg/extensions/legacy.ts",
    );
    expect(on(["+extensions/legacy.ts", "-extensions/legacy.ts"])).to.not.include(
      "/pkg/extensions/legacy.ts",
    );
    // A skill is matched by its folder too.
    expect(on(["!skills/old-*"])).to.not.include("/pkg/skills/old-lint/SKILL.md");
    expect(on(["-skills/review"])).to.not.include("/pkg/skills/review/SKILL.md");
    // + and - are exact: a glob after them matches nothing.
    expect(on(["-extensions/*.ts"])).to.deep.equal(files);
  });

  it("overrides alone filter what a folder holds; plain entries do not", () => {
    expect(enabledByOverrides("/pkg/extensions/a.ts", ["extensions/other.ts"], base)).to.equal(true);
    expect(enabledByOverrides("/pkg/extensions/a.ts", ["!extensions/*"], base)).to.equal(false);
    expect(enabledByOverrides("/pkg/extensions/a.ts", ["!extensions/*", "+extensions/a.ts"], base)).to.equal(
      true,
    );
  });

  it("resourceFilter reads each scope's own settings file", () => {
    const dir = mkdtempSync(join(tmpdir(), "kc-patterns-"));
    try {
      const agentDir = join(dir, "agent");
      const cwd = join(dir, "project");
      mkdirSync(agentDir, { recursive: true });
      mkdirSync(join(cwd, ".knightcode"), { recursive: true });
      writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ skills: ["-skills/a"] }));
      writeFileSync(join(cwd, ".knightcode", "settings.json"), JSON.stringify({ skills: ["!skills/b*"] }));
      const enabled = resourceFilter("skills", { agentDir, cwd });
      expect(enabled(join(agentDir, "skills", "a", "SKILL.md"), "user")).to.equal(false);
      expect(enabled(join(agentDir, "skills", "b", "SKILL.md"), "user")).to.equal(true);
      expect(enabled(join(cwd, ".knightcode", "skills", "b", "SKILL.md"), "project")).to.equal(false);
      expect(enabled(join(cwd, ".knightcode", "skills", "a", "SKILL.md"), "project")).to.equal(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
