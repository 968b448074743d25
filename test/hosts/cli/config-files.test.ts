/**
 * Damaged JSON configuration files met by the built CLI: a file nested 20,000 levels deep (regression: a settings
 * file ended the run with "Maximum call stack size exceeded", naming no file). Every file is reported once by
 * path with the reason, and the run goes on without it.
 */
import { mkdirSync } from "node:fs";
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
        expect(run.code, run.stderr).to.equal(0);
        expect(run.stdout).to.contain("the answer");
      });
    }

    it("agent/tools.json (read by the tool settings)", () => {
      const path = tmp.write("agent/tools.json", deeplyNested());
      expect(readToolsConfig(agentDir()).warning).to.equal(`${path}:1:1006: nested deeper than 1000 levels`);
    });
  });
});
