/**
 * A command of the user's named like a built-in command takes the plain name; the built-in one stays reachable as
 * `builtin:<name>`, and gets its name back when the other goes away.
 */
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import type { ExtensionInfo } from "../../../kernel/index.js";
import { CommandRegistry } from "../../../plugins/command-registry/command-registry.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const info = (id: string, origin: ExtensionInfo["origin"]): ExtensionInfo => ({ id, origin, order: 0 });
const names = (registry: CommandRegistry) =>
  registry
    .getCommands()
    .map((c) => `${c.name}=${c.owner}`)
    .sort();

describe("commands named like a built-in command", () => {
  const tmp = useTempDir("kc-builtin-names-");
  let session: TestSession | undefined;
  afterEach(async () => {
    await session?.dispose();
    session = undefined;
  });

  it("gives the plain name to a package's command and builtin:<name> to the built-in one, either order", () => {
    const first = new CommandRegistry();
    first.registerCommand(info("builtin:mcp-command", "builtin"), "mcp", { handler() {} });
    const dispose = first.registerCommand(info("package:/p/index.ts", "package"), "mcp", { handler() {} });
    expect(names(first)).to.deep.equal(["builtin:mcp=builtin:mcp-command", "mcp=package:/p/index.ts"]);
    dispose.dispose();
    expect(names(first)).to.deep.equal(["mcp=builtin:mcp-command"]);

    const later = new CommandRegistry();
    later.registerCommand(info("package:/p/index.ts", "package"), "mcp", { handler() {} });
    later.registerCommand(info("builtin:mcp-command", "builtin"), "mcp", { handler() {} });
    expect(names(later)).to.deep.equal(["builtin:mcp=builtin:mcp-command", "mcp=package:/p/index.ts"]);
  });

  it("keeps numbered names between two non-built-in commands, and wins over a built-in prompt template too", () => {
    const registry = new CommandRegistry();
    registry.registerCommand(info("builtin:prompt-templates", "builtin"), "review", {
      source: "prompt",
      handler() {},
    });
    registry.registerCommand(info("cli:/x/a.ts", "cli"), "review", { handler() {} });
    registry.registerCommand(info("cli:/x/b.ts", "cli"), "review", { handler() {} });
    expect(names(registry)).to.deep.equal([
      "builtin:review=builtin:prompt-templates",
      "review:2=cli:/x/b.ts",
      "review=cli:/x/a.ts",
    ]);
  });

  it("runs an extension's /compact in a session, and the built-in one as /builtin:compact", async () => {
    const file = tmp.write(
      "ext/compact.ts",
      `export default function (kc: any) {
        kc.registerCommand("compact", { description: "Mine", handler: (args: string) => { (globalThis as any).__kcMine = args; } });
      }`,
    );
    session = await createTestSession({ extensions: [file] });
    const commands = session.session.getCommands();
    expect(commands.find((c) => c.name === "compact")).to.deep.include({
      owner: `cli:${file}`,
      description: "Mine",
    });
    expect(commands.find((c) => c.name === "builtin:compact")?.owner).to.equal("builtin:compaction");
    await session.prompt("/compact keep it short");
    expect((globalThis as { __kcMine?: string }).__kcMine).to.equal("keep it short");
    delete (globalThis as { __kcMine?: string }).__kcMine;
  });
});
