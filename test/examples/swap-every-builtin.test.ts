/**
 * Every built-in is an extension like any other: for each one in the manifest, a session with it switched off keeps
 * none of its tools, commands, modes or providers, and an extension written against the public API alone takes each
 * of those names. The built-ins whose replacements are used by other parts (the gate, MCP, git, the app-server's
 * method table, print mode) have tests of their own that go further; docs/swapping-builtins.md names them.
 */

import { readFileSync } from "node:fs";
import type { ExtensionAPI, ExtensionFactory } from "@knightcodeai/cli";
import { BUILTIN_MANIFEST, Type } from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { sessionInternals } from "../../hosts/sdk/session-internals.js";

interface Holdings {
  tools: string[];
  commands: string[];
  modes: string[];
  providers: string[];
}

/** What each extension of a session registered, by owner id. */
function inventory(t: TestSession): Map<string, Holdings> {
  const byOwner = new Map<string, Holdings>();
  const of = (owner: string) => {
    let holdings = byOwner.get(owner);
    if (!holdings) {
      holdings = { tools: [], commands: [], modes: [], providers: [] };
      byOwner.set(owner, holdings);
    }
    return holdings;
  };
  for (const tool of sessionInternals(t.session).tools.getAllTools()) of(tool.owner).tools.push(tool.name);
  for (const command of t.session.getCommands())
    if (command.owner) of(command.owner).commands.push(command.name);
  for (const mode of t.session.listModes()) of(mode.owner).modes.push(mode.name);
  return byOwner;
}

const REPLACEMENT_MODEL = "replacement-model";
/** The test kit runs on the model `scripted/scripted`, so a replacement of `scripted` offers that id too. */
const replacementModels = (provider: string) =>
  provider === "scripted" ? [REPLACEMENT_MODEL, "scripted"] : [REPLACEMENT_MODEL];

/** An extension that registers, under the same names, everything a built-in registered. */
function replacement(holdings: Holdings): ExtensionFactory {
  return function replacementOfBuiltin(kc: ExtensionAPI) {
    for (const name of holdings.tools)
      kc.registerTool({
        name,
        label: name,
        description: `replacement ${name}`,
        parameters: Type.Object({}),
        execute: async () => ({ content: [{ type: "text", text: "replaced" }], details: {} }),
      });
    for (const name of holdings.commands) kc.registerCommand(name, { handler: () => "replaced" });
    for (const name of holdings.modes) kc.registerMode(name, { run: async () => 0 });
    for (const name of holdings.providers)
      kc.registerProvider(name, {
        api: `replacement-${name}`,
        models: replacementModels(name).map((id) => ({ id, contextWindow: 1000, maxTokens: 100 })),
      });
  };
}

describe("every built-in can be switched off, and its names taken by another extension", function () {
  this.timeout(60_000);
  let everything: Map<string, Holdings>;
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  before(async () => {
    const all = await createTestSession({});
    try {
      everything = inventory(all);
    } finally {
      await all.dispose();
    }
    for (const builtin of BUILTIN_MANIFEST) {
      const holdings = everything.get(`builtin:${builtin.name}`);
      if (holdings) holdings.providers = builtin.providers.map((p) => p.name);
      else if (builtin.providers.length > 0)
        everything.set(`builtin:${builtin.name}`, {
          tools: [],
          commands: [],
          modes: [],
          providers: builtin.providers.map((p) => p.name),
        });
    }
  });

  it("docs/swapping-builtins.md has a row for every built-in of the manifest", () => {
    const doc = readFileSync(new URL("../../docs/swapping-builtins.md", import.meta.url), "utf8");
    const missing = BUILTIN_MANIFEST.map((b) => b.name).filter(
      (name) => !doc.includes(`| \`builtin:${name}\``),
    );
    expect(missing).to.deep.equal([]);
  });

  it("finds the names the built-ins register (the inventory the cases below rely on)", () => {
    expect(everything.get("builtin:core-tools")?.tools).to.include.members(["read", "bash", "edit", "write"]);
    expect(everything.get("builtin:mode-print")?.modes).to.deep.equal(["print"]);
    expect(everything.get("builtin:tool-settings")?.commands).to.deep.equal(["tools"]);
    expect(everything.get("builtin:openai")?.providers).to.deep.equal(["openai"]);
  });

  for (const builtin of BUILTIN_MANIFEST) {
    const id = `builtin:${builtin.name}`;
    it(id, async () => {
      const holdings = everything.get(id) ?? { tools: [], commands: [], modes: [], providers: [] };
      t = await createTestSession({ disableBuiltins: [id], extensions: [replacement(holdings)] });
      const after = inventory(t);
      expect(after.has(id), `${id} is not loaded`).to.equal(false);
      expect(t.session.extensions().loaded.map((e) => e.id)).to.not.include(id);
      const mine = after.get("sdk:replacementOfBuiltin") ?? { tools: [], commands: [], modes: [] };
      expect(mine.tools.sort()).to.deep.equal([...holdings.tools].sort());
      expect(mine.commands.sort()).to.deep.equal([...holdings.commands].sort());
      expect(mine.modes.sort()).to.deep.equal([...holdings.modes].sort());
      const models = sessionInternals(t.session).models.getAvailable();
      for (const provider of holdings.providers) {
        expect(
          models.filter((m) => m.provider === provider).map((m) => m.id),
          `provider ${provider} is the replacement's`,
        ).to.deep.equal(replacementModels(provider));
      }
    });
  }
});
