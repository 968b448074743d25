/**
 * Damaged JSON configuration files met by the built CLI: a file nested 20,000 levels deep (regression: a settings
 * file ended the run with "Maximum call stack size exceeded", naming no file), and a models.json or auth.json that
 * is a directory or cannot be read (regression: every built-in provider failed to load with "the factory threw:
 * EISDIR", and auth.json was called "not valid JSON"). Every file is reported by path with the reason, and the run
 * goes on without it.
 */
import { chmodSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { readToolsConfig } from "../../../plugins/settings/tools-config.js";
import { runCli } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const DEPTH = 20_000;
const deeplyNested = () => `{"x": ${"[".repeat(DEPTH)}${"]".repeat(DEPTH)}}`;

describe("knightcode: damaged JSON configuration files", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-config-files-");
  const agentDir = () => join(tmp.path, "agent");
  const project = () => join(tmp.path, "project");

  /** A scripted print run in the project; `approve` trusts the project. */
  async function printRun(approve = true) {
    mkdirSync(agentDir(), { recursive: true });
    mkdirSync(join(project(), ".knightcode"), { recursive: true });
    const script = tmp.write("script.json", JSON.stringify({ steps: [{ text: "the answer" }] }));
    return runCli(
      [
        ...(approve ? ["--approve"] : []),
        "--provider",
        "scripted",
        "--script",
        script,
        "--no-session",
        "-p",
        "hi",
      ],
      { cwd: project(), env: { KNIGHTCODE_AGENT_DIR: agentDir(), HOME: join(tmp.path, "home") } },
    );
  }

  describe("a file nested 20,000 levels deep is refused by name, and the run goes on", () => {
    const cases: { file: string; approve?: boolean; tail: string }[] = [
      { file: "agent/settings.json", tail: " (the global settings were not loaded)" },
      { file: "project/.knightcode/settings.json", tail: " (the project settings were not loaded)" },
      { file: "agent/models.json", tail: "; the file was ignored" },
      { file: "agent/auth.json", tail: "; stored credentials were ignored" },
      { file: "agent/mcp.json", tail: "" },
      { file: "project/.knightcode/mcp.json", tail: "" },
      { file: "agent/trust.json", approve: false, tail: "; saved trust decisions are ignored." },
    ];
    for (const { file, approve, tail } of cases) {
      it(file, async () => {
        const path = tmp.write(file, deeplyNested());
        // A project with settings of its own, so that an untrusted one asks about trust (and reads trust.json).
        if (!file.startsWith("project/.knightcode/settings"))
          tmp.write("project/.knightcode/settings.json", "{}");
        const run = await printRun(approve ?? true);
        expect(run.stderr).to.not.contain("Maximum call stack");
        expect(run.stderr).to.contain(`${path}:1:1006: nested deeper than 1000 levels${tail}`);
        // The settings loader says it once, and the package manager (which reads the file too) once more at most.
        const mentions = run.stderr.split("\n").filter((line) => line.includes(path));
        expect(mentions.length, run.stderr).to.be.at.most(file.endsWith("settings.json") ? 2 : 1);
        expect(run.code, run.stderr).to.equal(0);
        expect(run.stdout).to.contain("the answer");
      });
    }

    it("agent/tools.json (read by the tool settings)", () => {
      const path = tmp.write("agent/tools.json", deeplyNested());
      expect(readToolsConfig(agentDir()).warning).to.equal(`${path}:1:1006: nested deeper than 1000 levels`);
    });
  });

  describe("models.json or auth.json that cannot be read is reported once, by name and cause", () => {
    const problems = (stderr: string, name: string) =>
      stderr.split("\n").filter((line) => line.includes(name));

    it("models.json that is a directory: one warning, and the built-in providers still load", async () => {
      mkdirSync(join(agentDir(), "models.json"), { recursive: true });
      const run = await printRun();
      const path = join(agentDir(), "models.json");
      expect(problems(run.stderr, "models.json")).to.deep.equal([
        `knightcode: ${path}: cannot be read: it is a directory; the file was ignored`,
      ]);
      expect(run.stderr).to.not.contain("failed to load").and.not.contain("EISDIR");
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.contain("the answer");
      const listed = await runCli(["--list-models"], {
        cwd: project(),
        env: { KNIGHTCODE_AGENT_DIR: agentDir(), HOME: join(tmp.path, "home"), ANTHROPIC_API_KEY: "sk-x" },
      });
      expect(listed.stdout)
        .to.match(/^anthropic\s/m)
        .and.not.contain("scripted");
      expect(listed.stderr).to.not.contain("failed to load");
    });

    it("models.json that is a symbolic link loop", async () => {
      mkdirSync(agentDir(), { recursive: true });
      const path = join(agentDir(), "models.json");
      symlinkSync(path, path);
      const run = await printRun();
      expect(problems(run.stderr, "models.json")).to.deep.equal([
        `knightcode: ${path}: cannot be read: it is a symbolic link loop; the file was ignored`,
      ]);
      expect(run.code, run.stderr).to.equal(0);
    });

    it("models.json without read permission", async function () {
      if (process.getuid?.() === 0) this.skip(); // root reads it anyway
      const path = tmp.write("agent/models.json", '{"providers": {}}');
      chmodSync(path, 0o000);
      const run = await printRun();
      expect(problems(run.stderr, "models.json")).to.deep.equal([
        `knightcode: ${path}: cannot be read: permission denied; the file was ignored`,
      ]);
      expect(run.code, run.stderr).to.equal(0);
    });

    it("auth.json that is a directory is not called 'not valid JSON'", async () => {
      mkdirSync(join(agentDir(), "auth.json"), { recursive: true });
      const run = await printRun();
      const path = join(agentDir(), "auth.json");
      expect(problems(run.stderr, "auth.json")).to.deep.equal([
        `knightcode: ${path}: cannot be read: it is a directory; stored credentials were ignored`,
      ]);
      expect(run.code, run.stderr).to.equal(0);
      expect(run.stdout).to.contain("the answer");
    });
  });
});
