/**
 * builtin:skills in real sessions against a local OpenAI-compatible server: skills are real folders in temp dirs
 * (the agent dir, a fake home, a project and its parent), and the system prompt is read from the request body the
 * server received.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { ExtensionAPI, ExtensionLogEntry } from "@knightcodeai/cli";
import { expect } from "chai";
import openaiCompatible from "../../../builtin-extensions/providers/openai-compatible/index.js";
import {
  type AgentSessionHandle,
  createAgentSession,
  createStandardKernel,
} from "../../../hosts/sdk/create-agent-session.js";
import { createTestUI } from "../../../hosts/testing/test-ui.js";
import type { Kernel } from "../../../kernel/index.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { startTestServer, type TestServer, writeSse } from "../../helpers/sse-server.js";
import { textStream } from "../providers/openai-compatible/fixtures.js";

const skillFile = (name: string, description: string, body = `Steps for ${name}.`) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`;

describe("builtin:skills in a session", () => {
  let server: TestServer;
  let dir: string;
  let agentDir: string;
  let home: string;
  let project: string;
  let kernel: Kernel | undefined;
  let savedHome: string | undefined;
  const handles: AgentSessionHandle[] = [];
  let logs: ExtensionLogEntry[];

  const write = (path: string, text: string) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    return path;
  };

  beforeEach(async () => {
    server = await startTestServer();
    server.respond((_req, res) => writeSse(res, textStream("ok")));
    dir = mkdtempSync(join(tmpdir(), "kc-skills-"));
    agentDir = join(dir, "agent");
    home = join(dir, "home");
    // The project sits two levels below `dir`, so `dir/.agents/skills` is an ancestor's.
    project = join(dir, "work", "project");
    mkdirSync(project, { recursive: true });
    mkdirSync(home, { recursive: true });
    savedHome = process.env.HOME;
    process.env.HOME = home;
    writeLocalModels(agentDir, {
      baseUrl: `${server.url}/v1`,
      apiKey: "sk-test",
      models: [{ id: "m1", contextWindow: 32768, maxTokens: 1024 }],
    });
    logs = [];
  });

  afterEach(async () => {
    for (const handle of handles.splice(0)) await handle.dispose();
    await kernel?.dispose();
    kernel = undefined;
    await server.close();
    if (savedHome === undefined) delete process.env.HOME;
    else process.env.HOME = savedHome;
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(
    options: {
      approve?: boolean;
      settings?: Record<string, unknown>;
      skillPaths?: string[];
      extensions?: ((kc: ExtensionAPI) => void)[];
    } = {},
  ) {
    kernel ??= await createStandardKernel({ agentDir, cacheDir: false });
    const { ui, record } = createTestUI(() => undefined);
    const discover = (kc: ExtensionAPI) => {
      kc.on("resources_discover", () => ({ skillPaths: options.skillPaths ?? [] }));
    };
    const handle = await createAgentSession({
      cwd: project,
      agentDir,
      kernel,
      provider: "local",
      model: "m1",
      session: { inMemory: true },
      ...(options.approve === undefined ? {} : { approve: options.approve }),
      settings: { retry: { enabled: false }, ...options.settings },
      extensions: [openaiCompatible, discover, ...(options.extensions ?? [])],
      ui,
      hasUI: true,
      warn: () => {},
      log: (entry) => logs.push(entry),
    });
    handles.push(handle);
    return { handle, record };
  }

  const systemPrompt = (i = 0): string => server.requests[i]!.body.messages[0].content as string;
  const lastUserMessage = (i = 0) => {
    const messages = server.requests[i]!.body.messages as { role: string; content: unknown }[];
    return messages.filter((m) => m.role === "user").at(-1)!.content;
  };
  const skillWarnings = () => logs.filter((l) => l.extension === "builtin:skills" && l.level === "warn");

  function writeAllPlaces(): Record<string, string> {
    return {
      user: write(
        join(agentDir, "skills", "user-skill", "SKILL.md"),
        skillFile("user-skill", "From the agent dir"),
      ),
      home: write(
        join(home, ".agents", "skills", "home-skill", "SKILL.md"),
        skillFile("home-skill", "From home"),
      ),
      project: write(
        join(project, ".knightcode", "skills", "project-skill", "SKILL.md"),
        skillFile("project-skill", "From the project"),
      ),
      cwdAgents: write(
        join(project, ".agents", "skills", "cwd-skill", "SKILL.md"),
        skillFile("cwd-skill", "From the cwd .agents folder"),
      ),
      ancestor: write(
        join(dir, ".agents", "skills", "group", "ancestor-skill", "SKILL.md"),
        skillFile("ancestor-skill", "From an ancestor, grouped in a sub-folder"),
      ),
      discovered: write(
        join(dir, "extra", "found-skill", "SKILL.md"),
        skillFile("found-skill", "From resources_discover"),
      ),
    };
  }

  it("lists skills from every place in the system prompt of a trusted project's request", async () => {
    const paths = writeAllPlaces();
    const { handle } = await open({ approve: true, skillPaths: [join(dir, "extra")] });
    await handle.prompt("hello");
    const prompt = systemPrompt();
    expect(prompt).to.contain("# Skills");
    for (const [name, description, path] of [
      ["user-skill", "From the agent dir", paths.user],
      ["home-skill", "From home", paths.home],
      ["project-skill", "From the project", paths.project],
      ["cwd-skill", "From the cwd .agents folder", paths.cwdAgents],
      ["ancestor-skill", "From an ancestor, grouped in a sub-folder", paths.ancestor],
      ["found-skill", "From resources_discover", paths.discovered],
    ] as const) {
      expect(prompt, name).to.contain(`<skill name="${name}" path="${path}">${description}</skill>`);
    }
    // The full instructions are not in the prompt: the model reads them on demand.
    expect(prompt).to.not.contain("Steps for user-skill.");
    expect(skillWarnings()).to.deep.equal([]);
  });

  it("leaves project and ancestor skills out of an untrusted project, and keeps the user's", async () => {
    writeAllPlaces();
    const { handle } = await open({ approve: false });
    await handle.prompt("hello");
    const prompt = systemPrompt();
    expect(prompt).to.contain('<skill name="user-skill"');
    expect(prompt).to.contain('<skill name="home-skill"');
    for (const name of ["project-skill", "cwd-skill", "ancestor-skill"]) expect(prompt).to.not.contain(name);
  });

  it("applies each scope's `skills` patterns to its own folders", async () => {
    writeAllPlaces();
    write(join(agentDir, "settings.json"), JSON.stringify({ skills: ["-skills/user-skill"] }));
    write(join(project, ".knightcode", "settings.json"), JSON.stringify({ skills: ["!project-*"] }));
    const { handle } = await open({ approve: true });
    await handle.prompt("hello");
    const prompt = systemPrompt();
    for (const name of ["home-skill", "cwd-skill", "ancestor-skill"])
      expect(prompt).to.contain(`name="${name}"`);
    expect(prompt).to.not.contain("user-skill").and.not.contain("project-skill");
  });

  it("asks for trust for a project whose only skills are in .agents/skills, and loads them when trusted", async () => {
    const path = write(
      join(project, ".agents", "skills", "only", "SKILL.md"),
      skillFile("only", "Only here"),
    );
    const { handle } = await open({ approve: true });
    await handle.prompt("hello");
    expect(systemPrompt()).to.contain(`<skill name="only" path="${path}">Only here</skill>`);
  });

  it("reads the skills once, at the first run, and again after a reload", async () => {
    write(join(agentDir, "skills", "first", "SKILL.md"), skillFile("first", "One"));
    const { handle } = await open();
    await handle.prompt("hello");
    const later = write(join(agentDir, "skills", "later", "SKILL.md"), skillFile("later", "Two"));
    await handle.prompt("again");
    expect(systemPrompt(1)).to.contain('<skill name="first"');
    expect(systemPrompt(1)).to.not.contain("later");
    await handle.reload();
    await handle.prompt("after reload");
    expect(systemPrompt(2)).to.contain(`<skill name="later" path="${later}">Two</skill>`);
  });

  it("warns about invalid frontmatter and duplicate names, naming the files, and loads the rest", async () => {
    const good = write(join(agentDir, "skills", "good", "SKILL.md"), skillFile("good", "Works"));
    const noFrontmatter = write(join(agentDir, "skills", "plain", "SKILL.md"), "Just text.\n");
    const badName = write(join(agentDir, "skills", "bad", "SKILL.md"), skillFile("Bad_Name", "Nope"));
    const noDescription = write(
      join(agentDir, "skills", "nodesc", "SKILL.md"),
      "---\nname: nodesc\n---\nx\n",
    );
    const duplicate = write(join(home, ".agents", "skills", "good", "SKILL.md"), skillFile("good", "Second"));
    const { handle } = await open();
    await handle.prompt("hello");
    expect(systemPrompt()).to.contain(`<skill name="good" path="${good}">Works</skill>`);
    expect(systemPrompt()).to.not.contain("Second");
    const messages = skillWarnings().map((l) => l.message);
    expect(messages).to.have.length(4);
    expect(messages.find((m) => m.includes(noFrontmatter))).to.contain("does not start with a `---`");
    expect(messages.find((m) => m.includes(badName))).to.contain('name "Bad_Name"');
    expect(messages.find((m) => m.includes(noDescription))).to.contain("no `description`");
    expect(messages.find((m) => m.includes(duplicate))).to.contain(`${good} already defines it`);
    // Warned once, not on every run.
    await handle.prompt("again");
    expect(skillWarnings()).to.have.length(4);
  });

  it("sends a skill's instructions and the arguments as the user's message for /skill:name args", async () => {
    const path = write(
      join(agentDir, "skills", "release", "SKILL.md"),
      skillFile("release", "Cut a release", "Run scripts/release.sh, then tag."),
    );
    const { handle } = await open();
    await handle.prompt("/skill:release version 2.1");
    expect(lastUserMessage()).to.equal(
      `<skill name="release" path="${path}">\nPaths in this skill are relative to ${dirname(path)}.\n\n` +
        "Run scripts/release.sh, then tag.\n</skill>\n\nversion 2.1",
    );
  });

  it("refuses an unknown /skill: name with a notice, sending nothing", async () => {
    const { handle, record } = await open();
    await handle.prompt("/skill:missing now");
    expect(server.requests).to.have.length(0);
    expect(record.notifications).to.deep.include({
      message: 'No skill named "missing"; nothing was sent',
      level: "error",
    });
  });

  it("sends /skill: text as typed when enableSkillCommands is false, and still lists the skills", async () => {
    write(join(agentDir, "skills", "release", "SKILL.md"), skillFile("release", "Cut a release"));
    const { handle } = await open({ settings: { enableSkillCommands: false } });
    await handle.prompt("/skill:release now");
    expect(lastUserMessage()).to.equal("/skill:release now");
    expect(systemPrompt()).to.contain('<skill name="release"');
  });

  it("lists each skill as a skill:<name> command with its description and file, and runs it", async () => {
    const path = write(
      join(agentDir, "skills", "release", "SKILL.md"),
      skillFile("release", "Cut a release", "Run scripts/release.sh, then tag."),
    );
    write(join(agentDir, "skills", "audit", "SKILL.md"), skillFile("audit", "Audit dependencies"));
    const { handle } = await open();
    const skills = handle.getCommands().filter((c) => c.source === "skill");
    expect(skills.map((c) => [c.name, c.description])).to.deep.equal([
      ["skill:audit", "Audit dependencies"],
      ["skill:release", "Cut a release"],
    ]);
    expect(skills[1]!.sourceInfo).to.deep.include({ path, scope: "user", baseDir: dirname(path) });
    await handle.runCommand("skill:release", "version 3");
    await handle.waitForIdle();
    expect(lastUserMessage()).to.equal(
      `<skill name="release" path="${path}">\nPaths in this skill are relative to ${dirname(path)}.\n\n` +
        "Run scripts/release.sh, then tag.\n</skill>\n\nversion 3",
    );
  });

  it("lists no skill commands when enableSkillCommands is false", async () => {
    write(join(agentDir, "skills", "release", "SKILL.md"), skillFile("release", "Cut a release"));
    const { handle } = await open({ settings: { enableSkillCommands: false } });
    expect(handle.getCommands().filter((c) => c.source === "skill")).to.deep.equal([]);
  });

  it("keeps a disable-model-invocation skill out of the prompt, and still runs it as /skill:name", async () => {
    write(
      join(agentDir, "skills", "manual", "SKILL.md"),
      "---\nname: manual\ndescription: Only on request\ndisable-model-invocation: true\n---\nManual steps.\n",
    );
    write(join(agentDir, "skills", "auto", "SKILL.md"), skillFile("auto", "Any time"));
    const { handle } = await open();
    await handle.prompt("hello");
    expect(systemPrompt()).to.contain('<skill name="auto"').and.not.contain("manual");
    expect(handle.getCommands().map((c) => c.name)).to.include("skill:manual");
    await handle.prompt("/skill:manual now");
    expect(lastUserMessage(1)).to.contain("Manual steps.").and.contain("now");
  });

  it("reads skills whose frontmatter has nested YAML (maps, lists, flow collections)", async () => {
    const path = write(
      join(agentDir, "skills", "nested", "SKILL.md"),
      [
        "---",
        "name: nested",
        "description: >-",
        "  Folded description",
        "  over two lines",
        "license: MIT",
        "allowed-tools: [read, bash]",
        "metadata:",
        "  author: someone",
        "  tags:",
        "    - docs",
        "    - release",
        "  limits: { runs: 3, strict: true }",
        "---",
        "Body.",
        "",
      ].join("\n"),
    );
    const { handle } = await open();
    await handle.prompt("hello");
    expect(systemPrompt()).to.contain(
      `<skill name="nested" path="${path}">Folded description over two lines</skill>`,
    );
    expect(skillWarnings()).to.deep.equal([]);
  });

  it("keeps the skills section when a later extension returns event.systemPrompt plus its own text", async () => {
    write(join(agentDir, "skills", "release", "SKILL.md"), skillFile("release", "Cut a release"));
    const appender = (kc: ExtensionAPI) => {
      kc.on("before_agent_start", (event) => ({
        systemPrompt: `${event.systemPrompt}\n\nHOUSE RULE: be brief.`,
      }));
    };
    const { handle } = await open({ extensions: [appender] });
    await handle.prompt("hello");
    expect(systemPrompt()).to.contain('<skill name="release"').and.contain("HOUSE RULE: be brief.");
  });
});
