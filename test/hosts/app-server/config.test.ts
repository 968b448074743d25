/**
 * The settings, trust and command methods over `knightcode app-server`: config/read with origins, versions,
 * defaults, paths and parse errors; config/write with expectedVersion and refused keys; project trust read and
 * write; command/list with and without a cwd; and server/diagnostics.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { useTempDir } from "../../helpers/temp-dir.js";
import { type Harness, harness } from "./harness.js";

const sha = (text: string) => createHash("sha256").update(text).digest("hex");

describe("knightcode app-server: config, trust and commands", function () {
  this.timeout(60_000);
  let h: Harness;
  afterEach(async () => h?.close());
  // Removed after the hook above has stopped the process, so nothing writes into it any more.
  const tmp = useTempDir("kc-appserver-config-");

  it("reads and writes settings with versions, origins and refusals", async () => {
    h = await harness(tmp.path, {}, { theme: "light" });
    const { client } = await h.start();
    await client.initialize();
    const globalFile = join(h.agentDir, "settings.json");
    const read = await client.request("config/read", {});
    expect(read.settings).to.deep.include({ theme: "light", defaultModel: "m" });
    expect(read.origins).to.deep.include({ theme: "global", "retry.enabled": "global" });
    expect(read.versions).to.deep.equal({ global: sha(readFileSync(globalFile, "utf8")) });
    expect(read.paths).to.deep.equal({ global: globalFile });
    expect(read.defaults).to.deep.include({ defaultProjectTrust: "ask" });
    expect(read.errors).to.deep.equal([]);

    const written = await client.request("config/write", {
      scope: "global",
      key: "theme",
      value: "dark",
      expectedVersion: read.versions.global,
    });
    expect(written.version).to.equal(sha(readFileSync(globalFile, "utf8")));
    expect(JSON.parse(readFileSync(globalFile, "utf8")).theme).to.equal("dark");
    const stale = await client
      .request("config/write", {
        scope: "global",
        key: "theme",
        value: "x",
        expectedVersion: read.versions.global,
      })
      .catch((e) => e);
    expect(stale.data).to.deep.include({ code: "versionConflict", actual: written.version });
    for (const key of ["__proto__.polluted", "a.constructor", "prototype", "bad key", "a..b"]) {
      const refused = await client
        .request("config/write", { scope: "global", key, value: 1 })
        .catch((e) => e);
      expect(refused.data, key).to.deep.include({ code: "invalidParams", reason: "key" });
    }
    const wrongType = await client
      .request("config/write", { scope: "global", key: "retry.enabled", value: "yes" })
      .catch((e) => e);
    expect(wrongType.data?.reason).to.equal("value");
    await client.request("config/write", { scope: "global", key: "theme", value: null });
    expect(JSON.parse(readFileSync(globalFile, "utf8"))).to.not.have.property("theme");

    // A project: untrusted, its file is not read and cannot be written; trusted, it merges over global.
    mkdirSync(join(h.project, ".knightcode"), { recursive: true });
    writeFileSync(
      join(h.project, ".knightcode", "settings.json"),
      JSON.stringify({ theme: "project-theme" }),
    );
    const untrusted = await client.request("config/read", { cwd: h.project });
    expect(untrusted.settings).to.not.have.property("theme");
    expect(untrusted.versions.project).to.equal("none");
    const refused = await client
      .request("config/write", { scope: "project", cwd: h.project, key: "theme", value: "z" })
      .catch((e) => e);
    expect(refused.data?.reason).to.equal("untrusted");
    expect(await client.request("project/trust/read", { cwd: h.project })).to.deep.equal({
      trusted: null,
      needsTrust: true,
    });
    await client.request("project/trust/write", { cwd: h.project, trusted: true });
    expect(await client.request("project/trust/read", { cwd: h.project })).to.deep.equal({
      trusted: true,
      needsTrust: true,
    });
    const trusted = await client.request("config/read", { cwd: h.project });
    expect(trusted.settings.theme).to.equal("project-theme");
    expect(trusted.origins.theme).to.equal("project");
    expect(trusted.paths.project).to.equal(join(h.project, ".knightcode", "settings.json"));

    // A malformed global file is a structured warning, and the project scope still reads.
    writeFileSync(globalFile, '{\n  "theme": "dark",\n  oops\n}');
    const broken = await client.request("config/read", { cwd: h.project });
    expect(broken.errors).to.have.length.greaterThan(0);
    expect(broken.errors[0]!.source).to.equal("settings");
    expect(broken.settings.theme).to.equal("project-theme");
  });

  it("lists commands, with and without a cwd, and reports diagnostics", async () => {
    h = await harness(tmp.path, {
      "cmd.ts": `export default (kc: any) => kc.registerCommand("hello", { description: "Say hi", handler: async () => {} });`,
    });
    const { client } = await h.start();
    await client.initialize();
    const listed = await client.request("command/list", { cwd: h.project });
    expect(listed.commands).to.deep.include({ name: "hello", description: "Say hi", source: "extension" });
    const names = listed.commands.map((c) => c.name);
    expect([...names].sort()).to.deep.equal(names);
    const plain = await client.request("command/list", {});
    expect(plain.commands.map((c) => c.name)).to.include("hello");
    const diag = await client.request("server/diagnostics", {});
    expect(diag.process.residentMemoryBytes).to.be.greaterThan(10_000_000);
    expect(diag.connections).to.have.length(1);
    expect(diag.connections[0]).to.deep.include({ transport: "stdio", initialized: true });
    expect(diag.threads).to.deep.equal([]);
  });

  it("lists, adds, updates and removes MCP servers in mcp.json, refusing an untrusted project", async () => {
    h = await harness(tmp.path);
    const { client } = await h.start();
    await client.initialize();
    const globalFile = join(h.agentDir, "mcp.json");
    expect(await client.request("mcp/list", {})).to.deep.equal({
      servers: [],
      errors: [],
      paths: { global: globalFile },
      // builtin:mcp provides the server session's MCP client, which has no server to show.
      status: [],
    });
    expect(
      await client.request("mcp/add", {
        scope: "global",
        name: "docs",
        config: { url: "https://example.com/mcp" },
      }),
    ).to.deep.equal({
      replaced: false,
    });
    expect(
      await client.request("mcp/add", {
        scope: "global",
        name: "docs",
        config: { url: "https://example.com/v2" },
      }),
    ).to.deep.equal({
      replaced: true,
    });
    const bad = await client
      .request("mcp/add", { scope: "global", name: "x", config: { nothing: true } })
      .catch((e) => e);
    expect(bad.data?.code).to.equal("invalidParams");
    const listed = await client.request("mcp/list", {});
    expect(listed.servers).to.have.length(1);
    expect(listed.servers[0]).to.deep.include({
      name: "docs",
      scope: "global",
      transport: "http",
      target: "https://example.com/v2",
      enabled: true,
    });
    expect(await client.request("mcp/update", { name: "docs", enabled: false })).to.deep.equal({
      path: globalFile,
    });
    expect(JSON.parse(readFileSync(globalFile, "utf8")).mcpServers.docs.enabled).to.equal(false);
    const untrusted = await client
      .request("mcp/add", {
        scope: "project",
        cwd: h.project,
        name: "p",
        config: { url: "https://example.com/p" },
      })
      .catch((e) => e);
    expect(untrusted.data?.reason).to.equal("untrusted");
    expect(await client.request("mcp/remove", { scope: "global", name: "docs" })).to.deep.equal({
      removed: true,
    });
    expect(await client.request("mcp/remove", { scope: "global", name: "docs" })).to.deep.equal({
      removed: false,
    });
  });

  it("lists the tools a new thread registers, hidden ones left out, and the resolved defaultTools", async () => {
    h = await harness(
      tmp.path,
      {
        "tools.ts": `import { Type } from "@sinclair/typebox";
        const tool = (name: string, exposure?: string) => ({
          name, label: name, description: "The " + name + " tool", parameters: Type.Object({}), ...(exposure ? { exposure } : {}),
          execute: async () => ({ content: [{ type: "text", text: name }], details: undefined }),
        });
        export default (kc: any) => { kc.registerTool(tool("echo")); kc.registerTool(tool("secret", "hidden")); };`,
      },
      { defaultTools: ["+echo", "-bash"] },
    );
    const { client } = await h.start();
    await client.initialize();
    const listed = await client.request("tool/list", { cwd: h.project });
    const names = listed.tools.map((t) => t.name);
    expect(names).to.include.members(["echo", "read", "bash"]);
    expect(names).to.not.include("secret");
    expect([...names].sort()).to.deep.equal(names);
    expect(listed.tools.find((t) => t.name === "read")!.source).to.equal("builtin:core-tools");
    expect(listed.tools.find((t) => t.name === "echo")!.description).to.equal("The echo tool");
    expect(listed.defaultTools).to.deep.equal(["read", "edit", "write", "echo"]);
    expect((await client.request("tool/list", {})).tools.map((t) => t.name)).to.include("echo");
  });
});
