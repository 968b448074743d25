import { join } from "node:path";
import { expect } from "chai";
import type { SystemPromptOptions } from "../../../kernel/api/events.js";
import {
  BASE_PROMPT,
  buildSystemPrompt,
  defaultSystemPromptOptions,
  GENERAL_GUIDELINES,
  loadSystemPromptFiles,
  type PromptTool,
  renderSystemPrompt,
} from "../../../plugins/resources/system-prompt.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const tools: PromptTool[] = [
  {
    name: "read",
    promptSnippet: "Read a file",
    promptGuidelines: ["Read before you edit.", "Prefer read over cat."],
  },
  { name: "bash", promptSnippet: "Run a shell command", promptGuidelines: ["Read before you edit."] },
  { name: "secret" },
];
const contextFiles = [
  { path: "/home/u/.knightcode/agent/AGENTS.md", content: "Personal rules.\n" },
  { path: "/repo/AGENTS.md", content: "Use pnpm." },
];
const date = new Date(2031, 4, 6, 12, 0, 0);

describe("plugins/resources system prompt", () => {
  const tmp = useTempDir("kc-prompt-");

  it("builds the sections in order with tools, de-duplicated guidelines, context and environment", () => {
    const options = defaultSystemPromptOptions({ cwd: "/repo", tools, contextFiles, date });
    expect(options.sections.map((s) => s.id)).to.deep.equal([
      "base",
      "tools",
      "guidelines",
      "context",
      "skills",
      "environment",
    ]);
    expect(options.tools).to.deep.equal(["read", "bash", "secret"]);
    expect(options.guidelines).to.deep.equal([
      "Read before you edit.",
      "Prefer read over cat.",
      ...GENERAL_GUIDELINES,
    ]);
    const text = Object.fromEntries(options.sections.map((s) => [s.id, s.text]));
    expect(text.base).to.equal(BASE_PROMPT);
    expect(text.base).to.contain("KnightCode");
    expect(text.tools).to.equal("Available tools:\n- read: Read a file\n- bash: Run a shell command");
    expect(text.guidelines!.split("\n")[0]).to.equal("Guidelines:");
    expect(text.guidelines).to.contain("- Read before you edit.\n- Prefer read over cat.\n");
    expect(text.guidelines!.match(/Read before you edit/g)).to.have.length(1);
    expect(text.context).to.equal(
      "# Project context\n\n" +
        "Instructions from context files; later files are more specific and take precedence.\n\n" +
        "## /home/u/.knightcode/agent/AGENTS.md\n\nPersonal rules.\n\n" +
        "## /repo/AGENTS.md\n\nUse pnpm.",
    );
    expect(text.environment).to.equal("Current date: 2031-05-06\nCurrent working directory: /repo");
  });

  it("renders non-empty sections joined by blank lines", () => {
    const options = defaultSystemPromptOptions({
      cwd: "/repo",
      tools: [{ name: "x" }],
      contextFiles: [],
      date,
    });
    expect(options.sections.find((s) => s.id === "tools")!.text).to.equal("");
    expect(options.sections.find((s) => s.id === "context")!.text).to.equal("");
    const rendered = renderSystemPrompt(options);
    const parts = rendered.split("\n\n");
    expect(parts[0]).to.equal(BASE_PROMPT.split("\n\n")[0]);
    expect(rendered).to.not.contain("Available tools");
    expect(rendered).to.not.contain("Project context");
    expect(rendered).to.not.match(/\n\n\n/);
    expect(rendered.endsWith("Current working directory: /repo")).to.equal(true);
    expect(
      renderSystemPrompt({
        sections: [
          { id: "a", text: "  one \n" },
          { id: "b", text: " \n " },
          { id: "c", text: "two" },
        ],
      }),
    ).to.equal("one\n\ntwo");
  });

  it("lets extensions edit sections by id", () => {
    const options = defaultSystemPromptOptions({ cwd: "/repo", tools, contextFiles, date });
    const original = structuredClone(options);
    options.sections = options.sections.filter((s) => s.id !== "environment");
    options.sections.find((s) => s.id === "base")!.text = "You are a pirate.";
    options.sections.splice(1, 0, { id: "my-ext", text: "Extra rule." });
    const prompt = buildSystemPrompt(options, { tools, original });
    expect(prompt.startsWith("You are a pirate.\n\nExtra rule.\n\nAvailable tools:")).to.equal(true);
    expect(prompt).to.not.contain("Current date");
  });

  it("carries changes of the tools and guidelines arrays into their sections unless the text was edited", () => {
    const catalog: PromptTool[] = [
      ...tools,
      { name: "grep", promptSnippet: "Search", promptGuidelines: ["Use grep."] },
    ];
    const active = tools.slice(0, 2);
    const base = () => defaultSystemPromptOptions({ cwd: "/repo", tools: active, contextFiles: [], date });

    // Selected tools changed: the tool list and the tool-derived guidelines follow; general ones stay.
    const selected = base();
    const original = structuredClone(selected);
    selected.tools = ["bash", "grep"];
    const prompt = buildSystemPrompt(selected, { tools: catalog, original });
    expect(prompt).to.contain("Available tools:\n- bash: Run a shell command\n- grep: Search\n");
    expect(prompt).to.contain("- Read before you edit.\n- Use grep.\n");
    expect(prompt).to.not.contain("Prefer read over cat.");
    expect(prompt).to.contain(GENERAL_GUIDELINES[0]!);

    // A guideline pushed by an extension.
    const pushed = base();
    const original2 = structuredClone(pushed);
    pushed.guidelines.push("Always answer in French.");
    expect(buildSystemPrompt(pushed, { tools: catalog, original: original2 })).to.contain(
      "- Always answer in French.",
    );

    // An edited section text wins over the arrays.
    const edited = base();
    const original3 = structuredClone(edited);
    edited.tools = ["grep"];
    edited.sections.find((s) => s.id === "tools")!.text = "Tools: whatever I say.";
    const editedPrompt = buildSystemPrompt(edited, { tools: catalog, original: original3 });
    expect(editedPrompt).to.contain("Tools: whatever I say.");
    expect(editedPrompt).to.not.contain("- grep: Search");

    // Without the original, the sections are rendered as they are.
    const plain = base();
    plain.guidelines.push("Ignored without original.");
    expect(buildSystemPrompt(plain)).to.equal(renderSystemPrompt(plain));
    expect(buildSystemPrompt(plain)).to.not.contain("Ignored without original.");
  });

  it("renders a skills section from an edited skills list, escaped, unless the section text was edited", () => {
    const original = defaultSystemPromptOptions({ cwd: "/repo", tools, contextFiles, date });
    expect(renderSystemPrompt(original)).to.not.contain("# Skills");
    const skill = { name: "pdf", description: "Fill <PDF> forms & more", filePath: "/s/pdf/SKILL.md" };
    const edited = { ...structuredClone(original), skills: [skill] };
    const prompt = buildSystemPrompt(edited, { original, tools });
    expect(prompt).to.contain("# Skills");
    expect(prompt).to.contain(
      '<skill name="pdf" path="/s/pdf/SKILL.md">Fill &lt;PDF&gt; forms &amp; more</skill>',
    );
    expect(prompt.indexOf("# Skills")).to.be.greaterThan(prompt.indexOf("# Project context"));
    expect(prompt.indexOf("# Skills")).to.be.lessThan(prompt.indexOf("Current date:"));

    const replaced = structuredClone(edited);
    replaced.sections.find((s) => s.id === "skills")!.text = "My own skills text.";
    const own = buildSystemPrompt(replaced, { original, tools });
    expect(own).to.contain("My own skills text.");
    expect(own).to.not.contain("<skills>");
  });

  it("uses SYSTEM.md as the base (no tools or guidelines sections) and APPEND_SYSTEM.md as the last section", () => {
    const options: SystemPromptOptions = defaultSystemPromptOptions({
      cwd: "/repo",
      tools,
      contextFiles,
      date,
      customPrompt: "Custom base.",
      appendPrompt: "Appended.",
    });
    expect(options.sections.map((s) => s.id)).to.deep.equal([
      "base",
      "context",
      "skills",
      "environment",
      "append",
    ]);
    const prompt = renderSystemPrompt(options);
    expect(prompt.startsWith("Custom base.\n\n# Project context")).to.equal(true);
    expect(prompt.endsWith("Current working directory: /repo\n\nAppended.")).to.equal(true);
  });

  it("gives the options the peer's shape too: selectedTools (the same array as tools), snippets, skills, files", () => {
    const options = defaultSystemPromptOptions({
      cwd: "/repo",
      tools,
      contextFiles,
      date,
      appendPrompt: "More.",
    });
    expect(options.selectedTools).to.equal(options.tools);
    expect(options).to.deep.include({
      cwd: "/repo",
      selectedTools: ["read", "bash", "secret"],
      toolSnippets: { read: "Read a file", bash: "Run a shell command" },
      promptGuidelines: ["Read before you edit.", "Prefer read over cat."],
      appendSystemPrompt: "More.",
      contextFiles,
      skills: [],
    });
    expect(options).to.not.have.property("customPrompt");
    const custom = defaultSystemPromptOptions({
      cwd: "/repo",
      tools,
      contextFiles,
      date,
      customPrompt: "Mine.",
    });
    expect(custom.customPrompt).to.equal("Mine.");
    expect(custom).to.not.have.property("appendSystemPrompt");
  });

  it("carries edits of the peer's fields into the prompt, unless the field or section they mirror was edited", () => {
    const catalog: PromptTool[] = [
      ...tools,
      { name: "grep", promptSnippet: "Search", promptGuidelines: ["Use grep."] },
    ];
    const base = () =>
      defaultSystemPromptOptions({ cwd: "/repo", tools: tools.slice(0, 2), contextFiles: [], date });
    const build = (edit: (o: SystemPromptOptions) => void) => {
      const options = base();
      const original = structuredClone(options);
      edit(options);
      return buildSystemPrompt(options, { tools: catalog, original });
    };

    // selectedTools replaced, as an extension written for the peer does.
    const selected = build((o) => {
      o.selectedTools = ["grep"];
    });
    expect(selected).to.contain("Available tools:\n- grep: Search\n");
    expect(selected).to.contain("- Use grep.");
    expect(selected).to.not.contain("- read: Read a file");
    // ...and in place, through the shared array.
    expect(build((o) => void o.selectedTools.push("grep"))).to.contain(
      "- bash: Run a shell command\n- grep: Search",
    );
    // tools edited too: KnightCode's own field wins.
    const both = build((o) => {
      o.selectedTools = ["grep"];
      o.tools = ["bash"];
    });
    expect(both).to.contain("Available tools:\n- bash: Run a shell command\n\n");

    const guided = build((o) => {
      o.promptGuidelines = ["Prefer read over cat.", "Answer in French."];
    });
    expect(guided).to.contain("- Answer in French.");
    expect(guided).to.not.contain("Read before you edit.");
    expect(guided).to.contain(GENERAL_GUIDELINES[0]!);

    const snippets = build((o) => {
      o.toolSnippets.read = "Read a file, any file";
      delete o.toolSnippets.bash;
    });
    expect(snippets).to.contain("Available tools:\n- read: Read a file, any file\n\n");

    const appended = build((o) => {
      o.appendSystemPrompt = "Always cite the file.";
    });
    expect(appended.endsWith("Current working directory: /repo\n\nAlways cite the file.")).to.equal(true);

    const replaced = build((o) => {
      o.customPrompt = "You are a pirate.";
    });
    expect(replaced.startsWith("You are a pirate.\n\nAvailable tools:")).to.equal(true);
    const sectionWins = build((o) => {
      o.customPrompt = "You are a pirate.";
      o.sections[0]!.text = "You are a poet.";
    });
    expect(sectionWins.startsWith("You are a poet.")).to.equal(true);
  });

  it("loads SYSTEM.md and APPEND_SYSTEM.md from a trusted project, else from the agent dir", async () => {
    const agentDir = join(tmp.path, "agent");
    const cwd = join(tmp.path, "repo");
    tmp.write("agent/SYSTEM.md", "personal system");
    tmp.write("agent/APPEND_SYSTEM.md", "personal append");
    tmp.write("repo/.knightcode/SYSTEM.md", "project system");
    expect(await loadSystemPromptFiles({ cwd, agentDir, projectTrusted: true })).to.deep.equal({
      customPrompt: "project system",
      appendPrompt: "personal append",
    });
    expect(await loadSystemPromptFiles({ cwd, agentDir, projectTrusted: false })).to.deep.equal({
      customPrompt: "personal system",
      appendPrompt: "personal append",
    });
    expect(
      await loadSystemPromptFiles({ cwd, agentDir: join(tmp.path, "none"), projectTrusted: false }),
    ).to.deep.equal({});
  });
});
