/** The gate's deterministic step: rule syntax and precedence, shell command splitting, protected paths, routing. */
import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { realPath } from "../../../builtin-extensions/classifier-gate/paths.js";
import {
  type PendingCall,
  type PolicyConfig,
  route,
} from "../../../builtin-extensions/classifier-gate/policy.js";
import { matchRules, parseRules, type Rule } from "../../../builtin-extensions/classifier-gate/rules.js";
import { useTempDir } from "../../helpers/temp-dir.js";

function rules(spec: { allow?: string; ask?: string; deny?: string }): Rule[] {
  const all: Rule[] = [];
  for (const action of ["allow", "ask", "deny"] as const) {
    const parsed = parseRules(spec[action], action);
    expect(parsed.errors).to.deep.equal([]);
    all.push(...parsed.rules);
  }
  return all;
}

const cmd = (text: string) => ({ kind: "command" as const, text });
const path = (text: string) => ({ kind: "path" as const, text });

describe("builtin:classifier-gate rules", () => {
  it("parses comma-separated rules, keeping commas inside parentheses, and lists", () => {
    const parsed = parseRules("bash(git log --format=%h,%s), edit(src/**),\nmcp__github__*", "allow");
    expect(parsed.rules.map((r) => r.source)).to.deep.equal([
      "bash(git log --format=%h,%s)",
      "edit(src/**)",
      "mcp__github__*",
    ]);
    expect(parseRules(["read", "bash(ls *)"], "deny").rules.map((r) => r.pattern)).to.deep.equal([
      undefined,
      "ls *",
    ]);
  });

  it("names a malformed rule and what to write instead", () => {
    expect(parseRules("bash(git", "allow").errors[0]).to.contain('"bash(git"').and.contain("tool(pattern)");
    expect(parseRules("bash()", "deny").errors[0]).to.contain("empty pattern");
    expect(parseRules(42, "ask").errors[0]).to.contain("string or a list");
  });

  it("lets deny win over ask and ask over allow, whatever the order", () => {
    const list = rules({ allow: "bash(git *)", ask: "bash(git push*)", deny: "bash(git push --force*)" });
    expect(matchRules(list, "bash", cmd("git status"))).to.deep.equal({
      action: "allow",
      rule: "bash(git *)",
    });
    expect(matchRules(list, "bash", cmd("git push origin"))?.action).to.equal("ask");
    expect(matchRules(list, "bash", cmd("git push --force origin"))).to.deep.equal({
      action: "deny",
      rule: "bash(git push --force*)",
    });
    expect(matchRules(list, "bash", cmd("npm test"))).to.equal(undefined);
  });

  it("allows a compound command only when every part is allowed, and never one with a substitution or redirect", () => {
    const list = rules({ allow: "bash(git status*), bash(git diff*)" });
    expect(matchRules(list, "bash", cmd("git status && git diff HEAD"))?.action).to.equal("allow");
    expect(matchRules(list, "bash", cmd("git status; rm -rf ~"))).to.equal(undefined);
    expect(matchRules(list, "bash", cmd("git status | sh"))).to.equal(undefined);
    expect(matchRules(list, "bash", cmd("git status $(rm -rf ~)"))).to.equal(undefined);
    expect(matchRules(list, "bash", cmd("git status `id`"))).to.equal(undefined);
    expect(matchRules(list, "bash", cmd("git status > ~/.bashrc"))).to.equal(undefined);
  });

  it("denies a compound command when any part is denied", () => {
    const list = rules({ allow: "bash", deny: "bash(rm -rf*)" });
    expect(matchRules(list, "bash", cmd("ls && rm -rf build"))?.action).to.equal("deny");
  });

  it("matches paths with * inside one folder and ** across folders, and tool names with *", () => {
    const list = rules({ allow: "edit(src/**), write(*.md), mcp__github__*" });
    expect(matchRules(list, "edit", path("src/a/b.ts"))?.action).to.equal("allow");
    expect(matchRules(list, "edit", path("src"))?.action).to.equal("allow");
    expect(matchRules(list, "edit", path("test/a.ts"))).to.equal(undefined);
    expect(matchRules(list, "write", path("README.md"))?.action).to.equal("allow");
    expect(matchRules(list, "write", path("docs/README.md"))).to.equal(undefined);
    expect(matchRules(list, "mcp__github__create_issue", { kind: "arguments", text: "{}" })?.action).to.equal(
      "allow",
    );
    expect(matchRules(list, "mcp__gitlab__x", { kind: "arguments", text: "{}" })).to.equal(undefined);
  });
});

describe("builtin:classifier-gate routing", () => {
  const tmp = useTempDir("kc-gate-route-");
  const config = (over: Partial<PolicyConfig> = {}): PolicyConfig => {
    const project = realPath(tmp.path);
    return {
      cwd: project,
      rules: [],
      paths: { project, agentDir: join(project, "..", "agent-of-test"), extra: [] },
      ...over,
    };
  };
  const core = {
    read: { readOnlyHint: true, destructiveHint: false },
    edit: { readOnlyHint: false, destructiveHint: true },
    bash: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
  };
  const call = (toolName: string, input: Record<string, unknown>, over: Partial<PendingCall> = {}) => ({
    toolName,
    input,
    annotations: (core as Record<string, PendingCall["annotations"]>)[toolName],
    reachesTools: false,
    ...over,
  });

  it("allows reads anywhere and edits inside the project, and sends shell commands to the classifier", () => {
    expect(route(call("read", { path: "/etc/hosts" }), config()).kind).to.equal("allow");
    expect(route(call("edit", { path: "src/a.ts" }), config())).to.include({ kind: "allow", by: "policy" });
    expect(route(call("edit", { path: "/tmp/elsewhere.ts" }), config()).kind).to.equal("classify");
    expect(route(call("bash", { command: "ls" }), config()).kind).to.equal("classify");
  });

  it("follows symlinks: an edit through a link that leaves the project goes to the classifier", () => {
    mkdirSync(join(tmp.path, "outside"));
    mkdirSync(join(tmp.path, "project"));
    symlinkSync(join(tmp.path, "outside"), join(tmp.path, "project", "link"));
    const project = realPath(join(tmp.path, "project"));
    const inner = config({ cwd: project, paths: { project, agentDir: "/nonexistent-agent", extra: [] } });
    expect(route(call("write", { path: "link/x.ts" }), inner).kind).to.equal("classify");
  });

  it("applies the annotation rule with MCP defaults for missing hints", () => {
    const mcp = (annotations: PendingCall["annotations"]) =>
      route(call("mcp__s__t", {}, { annotations }), config()).kind;
    expect(mcp({ readOnlyHint: true })).to.equal("allow");
    expect(mcp({ destructiveHint: false, openWorldHint: false })).to.equal("allow");
    expect(mcp({ destructiveHint: false })).to.equal("classify");
    expect(mcp(undefined)).to.equal("classify");
    expect(mcp({ readOnlyHint: true, destructiveHint: true })).to.equal("classify");
  });

  it("never auto-approves a protected path, not even with an allow rule", () => {
    const allowAll = config({ rules: rules({ allow: "edit, write, bash" }) });
    for (const target of [
      ".git/config",
      ".knightcode/settings.json",
      ".env",
      ".env.local",
      "sub/.git/HEAD",
    ]) {
      expect(route(call("edit", { path: target }), allowAll), target).to.include({
        kind: "ask",
        by: "policy",
      });
    }
    const agentDir = join(realPath(tmp.path), "agent");
    const own = config({ paths: { project: realPath(tmp.path), agentDir, extra: ["secrets/**"] } });
    expect(route(call("write", { path: join(agentDir, "auth.json") }), own).reason).to.contain(
      "agent folder",
    );
    expect(route(call("write", { path: "secrets/a.pem" }), own).reason).to.contain("secrets/**");
    expect(route(call("bash", { command: "rm -rf .git" }), allowAll).kind).to.equal("ask");
    expect(route(call("bash", { command: "cat .env" }), allowAll).kind).to.equal("ask");
    expect(route(call("bash", { command: "git status" }), allowAll).kind).to.equal("allow");
    // Reading one is not changing it.
    expect(route(call("read", { path: ".env" }), config()).kind).to.equal("allow");
  });

  it("lets a deny rule block even a read, and asks a person for everything when tools.json is malformed", () => {
    expect(
      route(call("read", { path: "secret.txt" }), config({ rules: rules({ deny: "read(secret*)" }) })),
    ).to.include({ kind: "deny", rule: "read(secret*)" });
    expect(
      route(call("read", { path: "a" }), config({ malformed: "tools.json:1:2: invalid JSON" })).kind,
    ).to.equal("ask");
  });

  it("lets a tool that only reaches other tools through, since each nested call is gated", () => {
    expect(route(call("codemode", { script: "x" }, { reachesTools: true }), config()).kind).to.equal("allow");
  });
});
