/** Plan mode's readers: the plan in a reply, the steps of an edited plan, `[DONE:n]`, and the bash allowlist. */
import { expect } from "chai";
import {
  doneMarkers,
  extractPlan,
  refuseCommand,
  stepsOf,
} from "../../../builtin-extensions/plan-mode/index.js";

describe("builtin:plan-mode plan text", () => {
  it("finds the numbered list under the last Plan heading, with its indented details", () => {
    const reply = [
      "I looked at the parser.",
      "",
      "Plan: (draft)",
      "1. not this one",
      "",
      "## Plan",
      "Some context first.",
      "1. **Split** the `lexer` module:",
      "   - move tokens out",
      "2) Add tests",
      "",
      "3. Update the docs",
      "",
      "Tell me if this works.",
    ].join("\n");
    const plan = extractPlan(reply)!;
    expect(plan.steps).to.deep.equal(["Split the lexer module", "Add tests", "Update the docs"]);
    expect(plan.text).to.equal(
      "## Plan\n1. **Split** the `lexer` module:\n   - move tokens out\n2) Add tests\n\n3. Update the docs",
    );
    expect(extractPlan("**Plan:**\n1. one")!.steps).to.deep.equal(["one"]);
    expect(extractPlan("Plan:\n1. old\n\nPlan:\n1. new")!.steps).to.deep.equal(["new"]);
  });

  it("has no plan without a heading followed by numbered items", () => {
    expect(extractPlan("1. a\n2. b")).to.equal(undefined);
    expect(extractPlan("Plan:\nnothing numbered here")).to.equal(undefined);
    expect(extractPlan("Plan:\n## Other\n1. a")).to.equal(undefined);
    expect(extractPlan("The plan: do it")).to.equal(undefined);
  });

  it("reads an edited plan's items anywhere, or its first line as one step", () => {
    expect(stepsOf("Plan:\n1. a\n2. b")).to.deep.equal(["a", "b"]);
    expect(stepsOf("intro\n1. a\nnote\n2. b")).to.deep.equal(["a", "b"]);
    expect(stepsOf("\n  just do the one thing\nsecond line")).to.deep.equal(["just do the one thing"]);
    expect(stepsOf("  \n")).to.deep.equal([]);
  });

  it("reads [DONE:n] markers", () => {
    expect(doneMarkers("did it [DONE:1], then [done: 3] and [DONE:x]")).to.deep.equal([1, 3]);
    expect(doneMarkers("nothing")).to.deep.equal([]);
  });
});

describe("builtin:plan-mode bash allowlist", () => {
  it("lets read-only commands through, piped and chained", () => {
    for (const command of [
      "cat notes.txt | wc -l",
      "ls -la && git status",
      "rg -n TODO src 2>/dev/null | head -20",
      "git log --oneline -5; git diff HEAD~1",
      "find . -name '*.ts' -type f",
      "git branch -a",
      "grep -r foo . 2>&1 | sort | uniq -c",
    ]) {
      expect(refuseCommand(command), command).to.equal(undefined);
    }
  });

  it("refuses writes, other programs and ways around the list, saying why", () => {
    const cases: [string, string][] = [
      ["echo hi > a.txt", "redirections"],
      ["cat a >> b", "redirections"],
      ["rm -rf build", '"rm" is not one of the read-only commands'],
      ["ls && npm install", '"npm" is not one of'],
      ["cat $(echo secret)", "command substitution"],
      ["cat `ls`", "command substitution"],
      ["sleep 100 &", "background jobs"],
      ["find . -delete", '"find -delete" can change things'],
      ["find . -exec rm {} ;", '"find -exec" can change things'],
      ["rg --pre ./evil x", '"rg --pre" can change things'],
      ["sort -o out.txt in.txt", '"sort -o" can change things'],
      ["git commit -m x", '"git commit" is not one of the read-only git commands'],
      ["git -c core.pager=evil log", '"git -c" can change things'],
      ["git diff --output=patch.txt", '"git --output=patch.txt" can change things'],
      ["git branch -D main", '"git branch -D" can change branches'],
      ["FOO=1 ls", "environment variables"],
      ["sed -i s/a/b/ f", '"sed" is not one of'],
    ];
    for (const [command, reason] of cases) {
      expect(refuseCommand(command), command).to.be.a("string").and.contain(reason);
    }
  });
});
