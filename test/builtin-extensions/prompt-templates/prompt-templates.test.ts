/** builtin:prompt-templates: Markdown files as `/<name>` commands whose expanded text is the user's message. */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings hold prompt-template placeholders such as ${@:2}, not JavaScript templates

import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ExtensionAPI, ProviderStreamRequest } from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import {
  expandTemplate,
  loadTemplates,
  splitArgs,
} from "../../../builtin-extensions/prompt-templates/templates.js";
import { discoverSkills } from "../../../builtin-extensions/skills/discover.js";
import { RpcProcess } from "../../helpers/rpc-process.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const bin = join(root, "dist", "hosts", "cli", "main.js");

describe("builtin:prompt-templates", () => {
  describe("placeholders and arguments", () => {
    it("fills $1..$9, $@, $ARGUMENTS and ${@:N} / ${@:N:L}; missing arguments expand to nothing", () => {
      const args = ["a", "b", "c"];
      expect(expandTemplate("1=$1 2=$2 3=$3 4=[$4]", args)).to.equal("1=a 2=b 3=c 4=[]");
      expect(expandTemplate("all=$@ also=$ARGUMENTS", args)).to.equal("all=a b c also=a b c");
      expect(expandTemplate("rest=${@:2} one=${@:2:1} none=[${@:9}]", args)).to.equal(
        "rest=b c one=b none=[]",
      );
      expect(expandTemplate("$9", ["1", "2", "3", "4", "5", "6", "7", "8", "nine"])).to.equal("nine");
      expect(expandTemplate("no placeholders", [])).to.equal("no placeholders");
    });

    it("never expands placeholders that an argument brings in", () => {
      expect(expandTemplate("$1 then $@", ["$2", "x"])).to.equal("$2 then $2 x");
      expect(expandTemplate("${@:1}", ["$ARGUMENTS"])).to.equal("$ARGUMENTS");
    });

    it("splits arguments on whitespace, with single or double quotes grouping", () => {
      expect(splitArgs(`one "two words" 'three more'  four`)).to.deep.equal([
        "one",
        "two words",
        "three more",
        "four",
      ]);
      expect(splitArgs(`x 'say "hi" there'`)).to.deep.equal(["x", 'say "hi" there']);
      expect(splitArgs(`a "" b`)).to.deep.equal(["a", "", "b"]);
      expect(splitArgs(`pre"fix mid"post`)).to.deep.equal(["prefix midpost"]);
      expect(splitArgs("  ")).to.deep.equal([]);
    });
  });

  describe("frontmatter", () => {
    const tmp = useTempDir("kc-prompts-frontmatter-");

    it("reads YAML frontmatter (quoted or not, comments skipped) and keeps the rest as the body", async () => {
      const file = tmp.write(
        "review.md",
        '---\ndescription: "Review: the diff"\n# a comment\nargument-hint: <file>\n---\nBody $1\n',
      );
      const { templates, warnings } = await loadTemplates([{ path: file, scope: "user", optional: false }]);
      expect(warnings).to.deep.equal([]);
      expect(templates[0]).to.deep.include({
        name: "review",
        description: "Review: the diff",
        body: "Body $1\n",
      });
    });

    it("unquotes values exactly as a skill does: single quotes, double quotes with escapes, plain text", async () => {
      const values = [
        ["'it''s a \"test\"'", 'it\'s a "test"'],
        [
          '"tab\\there, \\"quoted\\", back\\\\slash, \\u00e9, colon: ok"',
          'tab\there, "quoted", back\\slash, é, colon: ok',
        ],
        ["plain words # and a comment", "plain words"],
      ];
      for (const [index, [yaml, expected]] of values.entries()) {
        const template = tmp.write(`t${index}.md`, `---\ndescription: ${yaml}\n---\nText`);
        const skill = tmp.write(
          `s${index}/SKILL.md`,
          `---\nname: s${index}\ndescription: ${yaml}\n---\nText`,
        );
        const fromTemplate = await loadTemplates([{ path: template, scope: "user", optional: false }]);
        const fromSkill = await discoverSkills([skill]);
        expect([...fromTemplate.warnings, ...fromSkill.warnings], yaml).to.deep.equal([]);
        expect(fromTemplate.templates[0]!.description, yaml).to.equal(expected);
        expect(fromSkill.skills[0]!.description, yaml).to.equal(expected);
      }
    });

    it("reports invalid YAML and an unclosed block with file and line, uses the text, and never throws", async () => {
      const bad = tmp.write("bad.md", "---\ndescription: ok\n- a list item\n---\nText");
      const open = tmp.write("open.md", "---\ndescription: never closed\nText");
      tmp.write("plain.md", "No frontmatter");
      const { templates, warnings } = await loadTemplates([
        { path: tmp.path, scope: "user", optional: false },
      ]);
      expect(templates.map((t) => [t.name, t.description, t.body])).to.deep.equal([
        ["bad", "Text", "Text"],
        ["open", "---", "---\ndescription: never closed\nText"],
        ["plain", "No frontmatter", "No frontmatter"],
      ]);
      expect(warnings).to.deep.equal([
        `prompt template ${bad}: frontmatter line 3, column 1: invalid YAML: Implicit keys need to be on a single line (each line of the block is \`key: value\`); the frontmatter is ignored`,
        `prompt template ${open}: frontmatter line 1, column 1: the frontmatter block has no closing \`---\` line; the frontmatter is ignored`,
      ]);
    });

    it("reports a description that is not text and falls back to the first line", async () => {
      const file = tmp.write("listed.md", "---\ndescription: [a, b]\n---\nFirst line\nSecond");
      const { templates, warnings } = await loadTemplates([{ path: file, scope: "user", optional: false }]);
      expect(templates[0]!.description).to.equal("First line");
      expect(warnings).to.deep.equal([
        `prompt template ${file}: its \`description\` is not text (quote it); the first line of the text is used`,
      ]);
    });
  });

  describe("in a session", () => {
    const tmp = useTempDir("kc-prompts-");
    let t: TestSession | undefined;
    afterEach(async () => {
      await t?.dispose();
      t = undefined;
    });

    /** A script step that records each request's last user text and answers "ok". */
    function recording(sent: string[]) {
      return (request: ProviderStreamRequest) => {
        const user = request.messages.findLast((m) => m.role === "user");
        const content = user?.content;
        sent.push(
          typeof content === "string"
            ? content
            : (content ?? []).map((c) => (c.type === "text" ? c.text : "")).join(""),
        );
        return { text: "ok" };
      };
    }

    it("sends the expanded personal template as the user message the model receives", async () => {
      const agentDir = join(tmp.path, "agent");
      tmp.write(
        "agent/prompts/review.md",
        "---\ndescription: Review a file\n---\nReview $1 for $2. Notes: ${@:3}. All: $@",
      );
      const sent: string[] = [];
      t = await createTestSession({ agentDir, script: [recording(sent)] });
      await t.prompt(`/review src/a.ts "race conditions" be brief`);
      expect(sent).to.deep.equal([
        "Review src/a.ts for race conditions. Notes: be brief. All: src/a.ts race conditions be brief",
      ]);
      const review = t.session.getCommands().find((c) => c.name === "review");
      expect(review).to.deep.include({
        description: "Review a file",
        source: "prompt",
        owner: "builtin:prompt-templates",
      });
      expect(review?.sourceInfo).to.deep.include({
        path: join(agentDir, "prompts", "review.md"),
        scope: "user",
      });
    });

    it("ignores a project's templates until the project is trusted", async () => {
      const cwd = join(tmp.path, "project");
      tmp.write("project/.knightcode/prompts/deploy.md", "Deploy $1");
      t = await createTestSession({ cwd, agentDir: join(tmp.path, "agent") });
      expect(t.session.getCommands().map((c) => c.name)).not.to.include("deploy");
      await t.dispose();

      const sent: string[] = [];
      t = await createTestSession({
        cwd,
        agentDir: join(tmp.path, "agent"),
        script: [recording(sent)],
        approve: true,
      });
      const deploy = t.session.getCommands().find((c) => c.name === "deploy");
      expect(deploy).to.deep.include({ description: "Deploy $1", source: "prompt" });
      expect(deploy?.sourceInfo?.scope).to.equal("project");
      await t.prompt("/deploy staging");
      expect(sent).to.deep.equal(["Deploy staging"]);
    });

    it("applies each scope's `prompts` patterns to its folder (! globs, +/- paths)", async () => {
      const cwd = join(tmp.path, "project");
      tmp.write("agent/prompts/keep.md", "k");
      tmp.write("agent/prompts/draft-a.md", "a");
      tmp.write("agent/prompts/draft-b.md", "b");
      tmp.write("agent/settings.json", JSON.stringify({ prompts: ["!draft-*", "+prompts/draft-b.md"] }));
      tmp.write("project/.knightcode/prompts/deploy.md", "d");
      tmp.write("project/.knightcode/prompts/ship.md", "s");
      tmp.write("project/.knightcode/settings.json", JSON.stringify({ prompts: ["-prompts/ship.md"] }));
      t = await createTestSession({ cwd, agentDir: join(tmp.path, "agent"), approve: true });
      const names = t.session.getCommands().map((c) => c.name);
      expect(names).to.include.members(["keep", "draft-b", "deploy"]);
      expect(names).to.not.include.members(["draft-a"]);
      expect(names).to.not.include("ship");
    });

    it("warns naming the file and line on malformed frontmatter and still offers the template", async () => {
      const file = tmp.write("agent/prompts/odd.md", "---\ndescription: Odd one\nnot a pair\n---\nOdd $1");
      t = await createTestSession({ agentDir: join(tmp.path, "agent") });
      expect(t.logs.map((l) => `${l.level} ${l.message}`)).to.include(
        `warn prompt template ${file}: frontmatter line 3, column 1: invalid YAML: Implicit map keys need to be followed by map values (each line of the block is \`key: value\`); the frontmatter is ignored`,
      );
      expect(t.session.getCommands().find((c) => c.name === "odd")?.description).to.equal("Odd $1");
    });

    it("keeps the first of two templates with one name and reports a file name that is no command name", async () => {
      const first = tmp.write("agent/prompts/fix.md", "Personal fix");
      const second = tmp.write("extra/fix.md", "Extra fix");
      const spaced = tmp.write("agent/prompts/two words.md", "Spaced");
      t = await createTestSession({
        agentDir: join(tmp.path, "agent"),
        extensions: [(kc: ExtensionAPI) => kc.on("resources_discover", () => ({ promptPaths: [second] }))],
      });
      const prompts = t.session.getCommands().filter((c) => c.source === "prompt");
      expect(prompts.map((c) => [c.name, c.sourceInfo?.path])).to.deep.equal([["fix", first]]);
      const warnings = t.logs.filter((l) => l.level === "warn").map((l) => l.message);
      expect(warnings).to.include(`prompt template ${second}: /fix is already defined by ${first}; ignored`);
      expect(
        warnings.some(
          (w) => w.startsWith(`prompt template ${spaced}:`) && w.includes("not a valid command name"),
        ),
      ).to.equal(true);
    });

    it("refuses a template whose text starts with a template command instead of expanding forever", async () => {
      const loop = tmp.write("agent/prompts/loop.md", "/loop $@");
      tmp.write("agent/prompts/chain.md", "/loop again");
      const sent: string[] = [];
      t = await createTestSession({ agentDir: join(tmp.path, "agent"), script: [recording(sent)] });
      await t.prompt("/loop x");
      await t.prompt("/chain");
      expect(sent).to.deep.equal([]);
      expect(t.ui.notifications.map((n) => n.message)).to.deep.equal([
        `/loop was not sent: its text starts with the template command /loop (${loop})`,
        `/chain was not sent: its text starts with the template command /loop (${join(tmp.path, "agent", "prompts", "chain.md")})`,
      ]);
    });

    it("loads resources_discover's prompt paths (files or folders) and reads them again on reload", async () => {
      const extra = join(tmp.path, "extra");
      tmp.write("extra/a.md", "A $1");
      tmp.write("extra/notes.txt", "not a template");
      const single = tmp.write("single/b.md", "B");
      t = await createTestSession({
        agentDir: join(tmp.path, "agent"),
        extensions: [
          (kc: ExtensionAPI) =>
            kc.on("resources_discover", () => ({ promptPaths: [extra, single, join(tmp.path, "missing")] })),
        ],
      });
      const names = () =>
        t!.session
          .getCommands()
          .filter((c) => c.source === "prompt")
          .map((c) => c.name);
      expect(names()).to.deep.equal(["a", "b"]);
      expect(
        t.logs.some((l) => l.level === "warn" && l.message.includes(join(tmp.path, "missing"))),
      ).to.equal(true);
      tmp.write("extra/c.md", "C");
      await t.session.reload();
      expect(names()).to.deep.equal(["a", "c", "b"]);
    });
  });

  describe("RPC", () => {
    const tmp = useTempDir("kc-prompts-rpc-");
    const running: RpcProcess[] = [];
    afterEach(() => {
      for (const p of running.splice(0)) p.kill();
    });

    it("get_commands lists a template with its source, and the prompt runs its expansion", async () => {
      const template = tmp.write(
        "agent/prompts/explain.md",
        "---\ndescription: Explain code\n---\nExplain $@ simply.",
      );
      const script = join(tmp.path, "script.json");
      writeFileSync(
        script,
        JSON.stringify({
          steps: [{ text: "explained", expect: { lastUserText: "Explain the parser simply." } }],
        }),
      );
      const child = spawn(
        process.execPath,
        [bin, "--mode", "rpc", "--provider", "scripted", "--script", script, "--no-session"],
        { cwd: tmp.path, env: { ...process.env, KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") } },
      );
      const p = new RpcProcess(child);
      running.push(p);
      const listed = await p.request("1", "get_commands");
      const commands = (listed.data as { commands: Record<string, unknown>[] }).commands;
      const explain = commands.find((c) => c.name === "explain");
      expect(explain).to.deep.include({ description: "Explain code", source: "prompt" });
      expect(explain?.sourceInfo).to.deep.include({ path: template, scope: "user" });
      expect((await p.request("2", "prompt", { message: "/explain the parser" })).success).to.equal(true);
      await p.waitFor((r) => r.type === "agent_settled");
      const messages = await p.request("3", "get_messages");
      const users = (messages.data as { messages: { role: string; content: unknown }[] }).messages.filter(
        (m) => m.role === "user",
      );
      expect(JSON.stringify(users)).to.contain("Explain the parser simply.");
      expect((await p.request("4", "get_last_assistant_text")).data).to.deep.equal({ text: "explained" });
      expect(await p.end()).to.equal(0);
    });
  });
});
