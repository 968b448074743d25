/** `getCommands()` entries say where each command comes from, in the peer's `SourceInfo` shape. */

import { join } from "node:path";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import type { ExtensionInfo } from "../../../kernel/index.js";
import { CommandRegistry } from "../../../plugins/command-registry/command-registry.js";
import { sourceInfoOf } from "../../../plugins/command-registry/source-info.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const info = (id: string, origin: ExtensionInfo["origin"], path?: string): ExtensionInfo => ({
  id,
  origin,
  order: 0,
  ...(path ? { path } : {}),
});

describe("command source info", () => {
  const tmp = useTempDir("kc-source-info-");
  let session: TestSession | undefined;
  afterEach(async () => {
    await session?.dispose();
    session = undefined;
  });

  it("names the file, its folder and scope for extensions loaded from files, and the owner id for the rest", () => {
    expect(sourceInfoOf(info("user:/home/u/ext/a.ts", "user", "/home/u/ext/a.ts"))).to.deep.equal({
      path: "/home/u/ext/a.ts",
      source: "local",
      scope: "user",
      origin: "top-level",
      baseDir: "/home/u/ext",
    });
    expect(
      sourceInfoOf(
        info("project:/repo/.knightcode/extensions/b.ts", "project", "/repo/.knightcode/extensions/b.ts"),
      ),
    ).to.include({ scope: "project", source: "local", baseDir: "/repo/.knightcode/extensions" });
    expect(sourceInfoOf(info("cli:/tmp/c.ts", "cli", "/tmp/c.ts"))).to.include({
      scope: "temporary",
      path: "/tmp/c.ts",
    });
    expect(sourceInfoOf(info("package:/pkgs/d/index.ts", "package", "/pkgs/d/index.ts"))).to.include({
      origin: "package",
    });
    expect(sourceInfoOf(info("builtin:core-tools", "builtin"))).to.deep.equal({
      path: "builtin:core-tools",
      source: "builtin",
      scope: "temporary",
      origin: "top-level",
    });
    expect(sourceInfoOf(info("sdk:mine", "sdk"))).to.deep.equal({
      path: "sdk:mine",
      source: "sdk",
      scope: "temporary",
      origin: "top-level",
    });
  });

  it("reports each registered command with its owner and source info", () => {
    const registry = new CommandRegistry();
    registry.registerCommand(info("cli:/x/a.ts", "cli", "/x/a.ts"), "deploy", {
      description: "Ship it",
      handler() {},
    });
    registry.registerCommand(info("sdk:other", "sdk"), "deploy", { handler() {} });
    expect(registry.getCommands()).to.deep.equal([
      {
        name: "deploy",
        description: "Ship it",
        source: "extension",
        owner: "cli:/x/a.ts",
        sourceInfo: {
          path: "/x/a.ts",
          source: "local",
          scope: "temporary",
          origin: "top-level",
          baseDir: "/x",
        },
      },
      {
        name: "deploy:2",
        source: "extension",
        owner: "sdk:other",
        sourceInfo: { path: "sdk:other", source: "sdk", scope: "temporary", origin: "top-level" },
      },
    ]);
  });

  it("shows a file extension's command with its path through the session handle and knightcode.getCommands()", async () => {
    const file = tmp.write(
      "ext/hello.ts",
      `export default function (kc: any) {
        kc.registerCommand("hello", { description: "Say hello", handler() {} });
        kc.registerCommand("list", { handler() { (globalThis as any).__kcCommands = kc.getCommands(); } });
      }`,
    );
    session = await createTestSession({ extensions: [file] });
    const hello = session.session.getCommands().find((c) => c.name === "hello")!;
    expect(hello.sourceInfo).to.deep.equal({
      path: file,
      source: "local",
      scope: "temporary",
      origin: "top-level",
      baseDir: join(tmp.path, "ext"),
    });
    await session.prompt("/list");
    const seen = (globalThis as { __kcCommands?: { name: string; sourceInfo?: { path: string } }[] })
      .__kcCommands;
    expect(seen?.find((c) => c.name === "hello")?.sourceInfo?.path).to.equal(file);
  });
});
