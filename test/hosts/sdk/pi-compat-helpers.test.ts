/**
 * builtin:pi-compat, issue 29: pi's helpers do their work in pi's shapes, every subpath pi's packages export
 * resolves under both scopes, pi's event names read as pi meant them for extensions written for pi (and stay an
 * error for KnightCode's own), and an imported name KnightCode refuses is a warning at load and an error when used.
 */

import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { PI_AI_PATTERN_FILES, PI_SUBPATHS } from "../../../hosts/sdk/pi-compat/exports.js";
import { useTempDir } from "../../helpers/temp-dir.js";

type Seen = Record<string, any>;
const g = globalThis as unknown as { __piSeen?: Seen; __piEvents?: string[] };

/** A 1x1 PNG, and the header of a 3000x10 one (its size is all resizeImage reads before refusing). */
const PNG_1X1 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
function pngHeader(width: number, height: number): Buffer {
  const head = Buffer.from(PNG_1X1, "base64");
  head.writeUInt32BE(width, 16);
  head.writeUInt32BE(height, 20);
  return head;
}

describe("builtin:pi-compat helpers, subpaths and event names", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-pi-helpers-");
  let t: TestSession | undefined;
  const saved = {
    PATH: process.env.PATH,
    DISPLAY: process.env.DISPLAY,
    WAYLAND_DISPLAY: process.env.WAYLAND_DISPLAY,
  };
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
    delete g.__piSeen;
    delete g.__piEvents;
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  it("do real work: frontmatter, skills, skill blocks, the event bus, session context, thinking levels, images, code, clipboard", async () => {
    const skills = join(tmp.path, "skills");
    mkdirSync(join(skills, "deploy"), { recursive: true });
    writeFileSync(
      join(skills, "deploy", "SKILL.md"),
      "---\nname: deploy\ndescription: Ships it\nmetadata:\n  tags: [a, b]\n---\nRun the deploy.\n",
    );
    mkdirSync(join(skills, "hidden"), { recursive: true });
    writeFileSync(
      join(skills, "hidden", "SKILL.md"),
      "---\ndescription: Only by command\ndisable-model-invocation: true\n---\nx\n",
    );
    writeFileSync(join(skills, "notes.md"), "---\ndescription: A root file skill\n---\nnotes\n");
    writeFileSync(join(skills, "README.md"), "no frontmatter, not a skill\n");
    // A fake xclip on PATH: copyToClipboard pipes the text to it, and it writes what it got to a file.
    const bin = join(tmp.path, "bin");
    mkdirSync(bin);
    const clip = join(tmp.path, "clipboard.txt");
    writeFileSync(join(bin, "xclip"), `#!/bin/sh\ncat > "${clip}"\n`);
    chmodSync(join(bin, "xclip"), 0o755);
    process.env.PATH = `${bin}:${process.env.PATH}`;
    delete process.env.WAYLAND_DISPLAY;
    process.env.DISPLAY = ":0";
    const file = tmp.write(
      "helpers.ts",
      `import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import {
  parseFrontmatter, stripFrontmatter, loadSkillsFromDir, loadSkills, parseSkillBlock, formatSkillsForPrompt,
  createEventBus, buildSessionContext, getLanguageFromPath, highlightCode, resizeImage, copyToClipboard,
  estimateTokens, CONFIG_DIR_NAME,
} from "@earendil-works/pi-coding-agent";
import { getSupportedThinkingLevels, clampThinkingLevel } from "@earendil-works/pi-ai";
import { clampThinkingLevel as clampFromModels } from "@mariozechner/pi-ai/models";

export default function (pi: ExtensionAPI) {
  pi.registerCommand("helpers", {
    description: "exercise pi's helpers",
    handler: async (_args, ctx) => {
      const seen: Record<string, unknown> = {};
      seen.frontmatter = parseFrontmatter("---\\r\\ntitle: T\\r\\nnested:\\r\\n  deep: [1, 2]\\r\\n---\\r\\nBody text\\r\\n");
      seen.stripped = stripFrontmatter("---\\na: 1\\n---\\nonly body");
      seen.none = parseFrontmatter("plain");
      try { parseFrontmatter("---\\na: [unclosed\\n---\\n"); } catch (error) { seen.badYaml = (error as Error).message; }
      const dir = loadSkillsFromDir({ dir: ${JSON.stringify(skills)}, source: "test" });
      seen.dirSkills = dir.skills.map((s) => [s.name, s.description, s.disableModelInvocation]).sort();
      seen.loaded = loadSkills({ cwd: ${JSON.stringify(tmp.path)}, agentDir: ${JSON.stringify(join(tmp.path, "none"))}, skillPaths: ["skills"], includeDefaults: false }).skills.length;
      seen.prompt = formatSkillsForPrompt(dir.skills);
      seen.block = parseSkillBlock('<skill name="deploy" location="/s/SKILL.md">\\nRun it.\\n</skill>\\n\\nnow please');
      seen.notBlock = parseSkillBlock("hello");
      const bus = createEventBus();
      const got: unknown[] = [];
      const off = bus.on("ch", (data) => { got.push(data); });
      bus.on("ch", () => { throw new Error("one bad handler"); });
      bus.emit("ch", 1);
      off();
      bus.emit("ch", 2);
      await new Promise((r) => setTimeout(r, 10));
      seen.bus = got;
      const entries = ctx.sessionManager.getEntries();
      const context = buildSessionContext(entries);
      seen.context = { count: context.messages.length, roles: context.messages.map((m: any) => m.role), model: context.model };
      seen.levels = getSupportedThinkingLevels({ reasoning: true, thinkingLevelMap: { minimal: null, xhigh: "xhigh" } } as any);
      seen.noReasoning = getSupportedThinkingLevels({ reasoning: false } as any);
      seen.clamped = [clampThinkingLevel({ reasoning: true, thinkingLevelMap: { minimal: null } } as any, "minimal"), clampThinkingLevel({ reasoning: true } as any, "max"), clampFromModels({ reasoning: false } as any, "high")];
      seen.language = [getLanguageFromPath("src/a.tsx"), getLanguageFromPath("x.py"), getLanguageFromPath("Makefile"), getLanguageFromPath("blob.unknownext")];
      seen.highlighted = highlightCode("const a = 1;\\nreturn a;", "typescript");
      const small = await resizeImage(Buffer.from("${PNG_1X1}", "base64"), "image/png");
      seen.small = { width: small.width, height: small.height, wasResized: small.wasResized, same: small.data === "${PNG_1X1}" };
      try { await resizeImage(Buffer.from("${pngHeader(3000, 10).toString("base64")}", "base64"), "image/png"); } catch (error) { seen.big = (error as Error).message; }
      await copyToClipboard("copied by pi's helper");
      seen.tokens = estimateTokens({ role: "user", content: [{ type: "text", text: "12345678" }], timestamp: 0 } as any);
      seen.configDir = CONFIG_DIR_NAME;
      (globalThis as any).__piSeen = seen;
    },
  });
}
`,
    );
    t = await createTestSession({ extensions: [file], script: [{ text: "first answer" }] });
    expect(t.session.extensions().failed).to.deep.equal([]);
    await t.session.prompt("hello");
    await t.session.runCommand("helpers");
    const seen = g.__piSeen!;
    expect(seen.frontmatter).to.deep.equal({
      frontmatter: { title: "T", nested: { deep: [1, 2] } },
      body: "Body text",
    });
    expect(seen.stripped).to.equal("only body");
    expect(seen.none).to.deep.equal({ frontmatter: {}, body: "plain" });
    expect(seen.badYaml).to.match(/^invalid frontmatter: /);
    expect(seen.dirSkills).to.deep.equal([
      ["deploy", "Ships it", false],
      ["hidden", "Only by command", true],
      // pi names a skill without a `name` after its folder, a root file's too.
      ["skills", "A root file skill", false],
    ]);
    expect(seen.loaded).to.equal(3);
    expect(seen.prompt)
      .to.contain("<name>deploy</name>")
      .and.contain("<description>A root file skill</description>");
    expect(seen.prompt).not.to.contain("hidden");
    expect(seen.block).to.deep.equal({
      name: "deploy",
      location: "/s/SKILL.md",
      content: "Run it.",
      userMessage: "now please",
    });
    expect(seen.notBlock).to.equal(null);
    expect(seen.bus).to.deep.equal([1]);
    expect(seen.context).to.deep.equal({
      count: 2,
      roles: ["user", "assistant"],
      model: { provider: "scripted", modelId: "scripted" },
    });
    expect(seen.levels).to.deep.equal(["off", "low", "medium", "high", "xhigh"]);
    expect(seen.noReasoning).to.deep.equal(["off"]);
    expect(seen.clamped).to.deep.equal(["low", "high", "off"]);
    expect(seen.language).to.deep.equal(["typescript", "python", "makefile", undefined]);
    expect(seen.highlighted).to.have.length(2);
    expect(seen.highlighted[0]).to.contain("const a = 1;");
    expect(seen.small).to.deep.equal({ width: 1, height: 1, wasResized: false, same: true });
    expect(seen.big).to.match(/the 3000x10 image .* KnightCode has no image resizer/);
    expect(readFileSync(clip, "utf8")).to.equal("copied by pi's helper");
    expect(seen.tokens).to.equal(2);
    expect(seen.configDir).to.equal(".knightcode");
  });

  it("resolves every subpath pi's packages export, under both scopes, and typebox/compile compiles", async () => {
    const subpaths = [
      ...Object.keys(PI_SUBPATHS),
      ...Object.entries(PI_AI_PATTERN_FILES).flatMap(([folder, files]) =>
        files.map((f) => `pi-ai/${folder}/${f}`),
      ),
    ];
    const specifiers = ["@mariozechner", "@earendil-works"].flatMap((scope) =>
      subpaths.map((s) => `${scope}/${s}`),
    );
    const file = tmp.write(
      "subpaths.ts",
      `${specifiers.map((s, i) => `import * as m${i} from ${JSON.stringify(s)};`).join("\n")}
import { getModels as compatGetModels, streamSimpleOpenAICompletions } from "@earendil-works/pi-ai/compat";
import { Compile } from "typebox/compile";
import CompileDefault from "@sinclair/typebox/compile";
import { Type } from "typebox";

export default function () {
  const all = [${specifiers.map((_s, i) => `m${i}`).join(", ")}];
  const validator = Compile(Type.Object({ n: Type.Number() }));
  // TypeBox 1.x compiles plain JSON Schema inside its types (pi-subagents writes such schemas).
  const plain = Compile(Type.Object({ c: Type.Union([{ type: "object", maxProperties: 1 } as any, Type.String()]) }));
  let refused = "";
  try { (streamSimpleOpenAICompletions as any)(); } catch (error) { refused = (error as Error).message; }
  (globalThis as any).__piSeen = {
    objects: all.filter((m) => typeof m === "object" && m !== null).length,
    compat: typeof compatGetModels,
    check: [validator.Check({ n: 1 }), validator.Check({ n: "x" }), validator.Errors({ n: "x" }).length > 0],
    plain: [plain.Check({ c: { a: 1 } }), plain.Check({ c: "s" }), plain.Check({ c: { a: 1, b: 2 } }), plain.Errors({ c: 3 }).length > 0],
    sameCompile: CompileDefault === Compile,
    refused,
  };
}
`,
    );
    t = await createTestSession({ extensions: [file] });
    expect(t.session.extensions().failed).to.deep.equal([]);
    expect(g.__piSeen).to.deep.include({ objects: specifiers.length, compat: "function", sameCompile: true });
    expect(g.__piSeen!.check).to.deep.equal([true, false, true]);
    expect(g.__piSeen!.plain).to.deep.equal([true, true, false, true]);
    expect(g.__piSeen!.refused).to.match(
      /^streamSimpleOpenAICompletions from @earendil-works\/pi-ai is not supported by KnightCode: pi-ai's own provider implementations/,
    );
    expect(specifiers).to.include.members([
      "@earendil-works/pi-ai/providers/all",
      "@mariozechner/pi-ai/models",
    ]);
  });

  it("reads pi's older event names for an extension written for pi: session_switch on /new, an unknown name warned about", async () => {
    const file = tmp.write(
      "events.ts",
      `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
  const events = ((globalThis as any).__piEvents ??= []);
  pi.on("session_switch" as any, (event: any) => { events.push("switch:" + event.type + ":" + event.reason); });
  pi.on("session_fork" as any, (event: any) => { events.push("fork:" + event.type); });
  pi.on("no_such_event_anywhere" as any, () => { events.push("never"); });
  pi.on("session_start", (event) => { events.push("start:" + event.reason); });
}
`,
    );
    t = await createTestSession({ extensions: [file], persist: true });
    expect(t.session.extensions().failed).to.deep.equal([]);
    const warned = t.logs.filter((e) => e.level === "warn").map((e) => e.message);
    expect(warned).to.deep.equal([
      'listens to "no_such_event_anywhere", an event KnightCode does not emit (nor does the current pi): the handler never runs',
    ]);
    expect(t.logs.find((e) => e.level === "warn")!.extension).to.contain("events.ts");
    await t.session.newSession();
    expect(g.__piEvents).to.deep.equal(["start:startup", "switch:session_switch:new", "start:new"]);
  });

  it("reads an npm-installed package the same way: its files under node_modules, not its own dependencies", async () => {
    // As `install npm:<name>` lays a package out (pi-sync-system-theme listens to session_switch this way).
    const root = join(tmp.path, "agent", "npm", "node_modules", "pi-themed");
    mkdirSync(join(root, "lib"), { recursive: true });
    mkdirSync(join(root, "node_modules", "helper"), { recursive: true });
    writeFileSync(
      join(root, "node_modules", "helper", "index.ts"),
      `import { compact } from "@earendil-works/pi-coding-agent";\nexport const helper = () => typeof compact;\n`,
    );
    writeFileSync(
      join(root, "lib", "ui.ts"),
      `import { InteractiveMode } from "@mariozechner/pi-coding-agent";\nexport const mode = () => typeof InteractiveMode;\n`,
    );
    const file = join(root, "index.ts");
    writeFileSync(
      file,
      `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { mode } from "./lib/ui.js";
import { helper } from "helper";

export default function (pi: ExtensionAPI) {
  const events = ((globalThis as any).__piEvents ??= []);
  pi.on("session_switch" as any, (event: any) => { events.push("switch:" + event.reason + ":" + mode() + ":" + helper()); });
}
`,
    );
    t = await createTestSession({ extensions: [file], persist: true });
    expect(t.session.extensions().failed).to.deep.equal([]);
    const warned = t.logs.filter((e) => e.level === "warn");
    expect(warned.map((e) => e.message)).to.deep.equal([
      "imports InteractiveMode from @mariozechner/pi-coding-agent, which KnightCode does not support (pi's interactive mode's own components; draw with pi-tui and `ctx.ui.custom()`); using it throws",
    ]);
    expect(warned[0]!.extension).to.contain("node_modules/pi-themed/index.ts");
    await t.session.newSession();
    expect(g.__piEvents).to.deep.equal(["switch:new:function:function"]);
  });

  it("reads a package published for pi with pi's event names even when its compiled JavaScript imports nothing of pi", async () => {
    // context-mode's pi adapter: build/adapters/pi/extension.js, a `pi` manifest, an event pi 1.6 does not emit.
    const root = join(tmp.path, "compiled");
    mkdirSync(join(root, "build"), { recursive: true });
    writeFileSync(
      join(root, "package.json"),
      JSON.stringify({ name: "compiled", type: "module", pi: { extensions: ["./build/extension.js"] } }),
    );
    writeFileSync(join(root, "build", "package.json"), JSON.stringify({ type: "module" }));
    const file = join(root, "build", "extension.js");
    writeFileSync(
      file,
      `export default function (pi) {
  pi.on("before_provider_response", () => {});
  pi.registerCommand("compiled", { handler: async () => {} });
}
`,
    );
    t = await createTestSession({ extensions: [file] });
    expect(t.session.extensions().failed).to.deep.equal([]);
    expect(t.session.getCommands().some((c) => c.name === "compiled")).to.equal(true);
    expect(t.logs.filter((e) => e.level === "warn").map((e) => e.message)).to.deep.equal([
      'listens to "before_provider_response", an event KnightCode does not emit (nor does the current pi): the handler never runs',
    ]);
  });

  it("keeps the strict error for an extension not written for pi", async () => {
    const file = tmp.write(
      "strict.ts",
      `import type { ExtensionAPI } from "@knightcodeai/cli";
export default function (knightcode: ExtensionAPI) {
  knightcode.on("session_switch" as any, () => {});
}
`,
    );
    t = await createTestSession({ extensions: [file] });
    const failed = t.session.extensions().failed;
    expect(failed).to.have.length(1);
    expect(failed[0]).to.match(/Unknown event "session_switch"/);
  });

  it("warns at load about each refused or missing name an extension imports, and throws where it is used", async () => {
    mkdirSync(join(tmp.path, "pkg", "lib"), { recursive: true });
    writeFileSync(
      join(tmp.path, "pkg", "lib", "agent.ts"),
      `import { agentLoop } from "@earendil-works/pi-agent-core";
export const makeAgent = () => (agentLoop as any)([], {});
`,
    );
    const file = join(tmp.path, "pkg", "index.ts");
    writeFileSync(
      file,
      `import { type ExtensionAPI, defineTool, InteractiveMode, notAPiName } from "@earendil-works/pi-coding-agent";
import { makeAgent } from "./lib/agent.js";

export default function (pi: ExtensionAPI) {
  pi.registerCommand("agent", {
    description: "start pi's Agent",
    handler: async () => {
      try { makeAgent(); } catch (error) { (globalThis as any).__piSeen = { error: (error as Error).message, defineTool: typeof defineTool, mode: typeof InteractiveMode, missing: typeof notAPiName }; }
    },
  });
}
`,
    );
    t = await createTestSession({ extensions: [file] });
    expect(t.session.extensions().failed).to.deep.equal([]);
    expect(t.session.getCommands().some((c) => c.name === "agent")).to.equal(true);
    const warned = t.logs.filter((e) => e.level === "warn");
    expect(warned.every((e) => e.extension.endsWith("pkg/index.ts"))).to.equal(true);
    expect(warned.map((e) => e.message)).to.deep.equal([
      "imports InteractiveMode from @earendil-works/pi-coding-agent, which KnightCode does not support (pi's interactive mode's own components; draw with pi-tui and `ctx.ui.custom()`); using it throws",
      "imports notAPiName from @earendil-works/pi-coding-agent, which KnightCode does not export (it is undefined there)",
      "imports agentLoop from @earendil-works/pi-agent-core, which KnightCode does not support (pi-agent-core's own agent loop; run a subagent as a KnightCode session with `createAgentSession` from pi-coding-agent); using it throws",
    ]);
    await t.session.runCommand("agent");
    expect(g.__piSeen).to.deep.include({ defineTool: "function", mode: "function", missing: "undefined" });
    expect(g.__piSeen!.error).to.match(
      /^agentLoop from @earendil-works\/pi-agent-core is not supported by KnightCode: /,
    );
  });
});
