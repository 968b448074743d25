/**
 * The host's synchronous view of workspaces agrees with the git engine it stands in for: the turn entry type,
 * where managed worktrees live, and which cwd lies in one.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import {
  describeWorkspace,
  inManagedWorktree,
  TURN_ENTRY_TYPE,
  WorktreesSetting,
} from "../../../builtin-extensions/mode-app-server/workspace.js";
import { TURN_ENTRY_TYPE as SERVICE_TURN_ENTRY_TYPE } from "../../../builtin-extensions/worktrees/git/turns.js";
import { worktreeSettings } from "../../../builtin-extensions/worktrees/git/worktrees.js";
import { createStandaloneHostServices } from "../../../hosts/sdk/session-plugins.js";

describe("app-server workspaces (host side)", () => {
  let agentDir = "";
  beforeEach(() => {
    agentDir = mkdtempSync(join(tmpdir(), "kc-appserver-ws-"));
  });
  afterEach(() => rmSync(agentDir, { recursive: true, force: true }));

  it("reads turn records under the entry type builtin:worktrees writes", () => {
    expect(TURN_ENTRY_TYPE).to.equal(SERVICE_TURN_ENTRY_TYPE);
  });

  it("finds the worktrees root as the services do, by default and from worktrees.root (~ expanded)", () => {
    const host = createStandaloneHostServices({ agentDir });
    const setting = new WorktreesSetting(host);
    expect(setting.root()).to.equal(worktreeSettings(agentDir, {}).root);
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ worktrees: { root: "~/trees" } }));
    expect(setting.root()).to.equal(worktreeSettings(agentDir, { root: "~/trees" }).root);
    expect(setting.root()).to.equal(join(process.env.HOME ?? "", "trees"));
    host.dispose();
  });

  it("describes a cwd in a managed worktree from its record, and anything else as local", () => {
    const root = join(agentDir, "worktrees");
    const path = join(root, "ab12", "project");
    mkdirSync(join(path, "pkg"), { recursive: true });
    writeFileSync(
      join(root, "ab12.json"),
      JSON.stringify({ path, projectCwd: "/src/project", deleted: false }),
    );
    expect(inManagedWorktree(root, join(path, "pkg"))).to.equal(true);
    expect(describeWorkspace(root, join(path, "pkg"))).to.deep.equal({
      mode: "worktree",
      path,
      projectCwd: "/src/project",
      deleted: false,
    });
    rmSync(path, { recursive: true });
    expect(describeWorkspace(root, path)).to.deep.include({ deleted: true });
    // A folder of the root that is not a managed worktree's, and one outside it.
    expect(inManagedWorktree(root, join(root, "notes"))).to.equal(false);
    expect(describeWorkspace(root, join(root, "cd34", "x"))).to.deep.equal({ mode: "local" });
    expect(describeWorkspace(root, agentDir)).to.deep.equal({ mode: "local" });
  });
});
