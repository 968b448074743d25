// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings hold mcp.json ${VAR} references, not JavaScript templates
/** `knightcode mcp list|add|remove` through the built CLI, on real files in a temp agent dir and project. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { runCli } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("knightcode mcp", () => {
  const temp = useTempDir("kc-mcp-cli-");
  const run = (...args: string[]) =>
    runCli(["mcp", ...args], {
      cwd: join(temp.path, "project"),
      env: { KNIGHTCODE_AGENT_DIR: join(temp.path, "agent") },
    });
  const globalFile = () => join(temp.path, "agent", "mcp.json");
  const readGlobal = () => JSON.parse(readFileSync(globalFile(), "utf8"));

  beforeEach(() => {
    temp.write("project/.keep", "");
  });

  it("adds stdio and HTTP servers, lists them, and removes one", async () => {
    let r = await run(
      "add",
      "files",
      "--env",
      "ROOT=/tmp",
      "--timeout",
      "5000",
      "--",
      "npx",
      "server-fs",
      "/tmp",
    );
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('Added MCP server "files"');
    r = await run(
      "add",
      "docs",
      "--header",
      "Authorization: Bearer ${DOCS_TOKEN}",
      "https://docs.example.test/mcp?key=${DOCS_TOKEN}",
    );
    expect(r.code, r.stderr).to.equal(0);
    expect(readGlobal().mcpServers).to.deep.equal({
      files: { command: "npx", args: ["server-fs", "/tmp"], env: { ROOT: "/tmp" }, timeout: 5000 },
      docs: {
        url: "https://docs.example.test/mcp?key=${DOCS_TOKEN}",
        headers: { Authorization: "Bearer ${DOCS_TOKEN}" },
      },
    });
    r = await run("add", "proj", "--project", "--", "node", "srv.js");
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain("once the project is trusted");

    process.env.DOCS_TOKEN = "secret-from-env";
    r = await run("list", "--json");
    delete process.env.DOCS_TOKEN;
    expect(r.code, r.stderr).to.equal(0);
    const listing = JSON.parse(r.stdout);
    expect(
      listing.servers.map(
        (s: { name: string; scope: string; transport: string }) => `${s.name}:${s.scope}:${s.transport}`,
      ),
    ).to.deep.equal(["files:global:stdio", "docs:global:http", "proj:project:stdio"]);
    expect(listing.servers[0].target).to.equal("npx server-fs /tmp");
    // Entries are listed as written: a ${VAR} reference is not expanded into the output.
    expect(listing.servers[1].target).to.equal("https://docs.example.test/mcp?key=${DOCS_TOKEN}");
    expect(r.stdout).to.not.contain("secret-from-env");

    r = await run("remove", "files");
    expect(r.code, r.stderr).to.equal(0);
    expect(Object.keys(readGlobal().mcpServers)).to.deep.equal(["docs"]);
    r = await run("remove", "files");
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('no server "files"');
  });

  it("refuses an invalid entry with the reason and leaves the file as it was", async () => {
    await run("add", "ok", "https://ok.example.test/mcp");
    const before = readFileSync(globalFile(), "utf8");
    const r = await run("add", "bad", "--config", '{"command": "x", "url": "https://x.test"}');
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('server "bad": needs exactly one of "command" (stdio) or "url" (HTTP)');
    expect(readFileSync(globalFile(), "utf8")).to.equal(before);
  });

  it("never overwrites an mcp.json it cannot parse", async () => {
    temp.write("agent/mcp.json", '{"mcpServers": {');
    const r = await run("add", "x", "https://x.example.test/mcp");
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/mcp\.json:1:\d+: invalid JSON/);
    expect(readFileSync(globalFile(), "utf8")).to.equal('{"mcpServers": {');
  });

  it("refuses auth in a project file", async () => {
    const r = await run(
      "add",
      "p",
      "--project",
      "--config",
      '{"url": "https://x.test/mcp", "auth": {"token": "t"}}',
    );
    expect(r.code).to.equal(1);
    expect(r.stderr).to.contain('"auth" is not allowed in a project mcp.json');
  });

  it("answers an unknown action with the usage and exit code 2, and --help lists the commands", async () => {
    const r = await run("frobnicate");
    expect(r.code).to.equal(2);
    expect(r.stderr).to.contain('unknown action "frobnicate"').and.contain("knightcode mcp add <name>");
    const help = await runCli(["--help"], {
      cwd: temp.path,
      env: { KNIGHTCODE_AGENT_DIR: join(temp.path, "agent") },
    });
    expect(help.stdout).to.contain("mcp add <name> <url>").and.contain("mcp remove <name>");
  });
});
