// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings hold mcp.json ${VAR} references, not JavaScript templates
/** mcp.json reading: shapes, warnings that name the file and server, `${VAR}` expansion, project rules. */
import { expect } from "chai";
import { mcpToolName } from "../../../builtin-extensions/mcp/names.js";
import { expandStrings, readMcpFiles } from "../../../plugins/settings/mcp-config.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("builtin:mcp configuration", () => {
  const temp = useTempDir("kc-mcp-config-");
  const agent = () => `${temp.path}/agent`;
  const project = () => `${temp.path}/project`;
  const writeGlobal = (value: unknown) => temp.write("agent/mcp.json", JSON.stringify(value, null, 2));
  const writeProject = (value: unknown) =>
    temp.write("project/.knightcode/mcp.json", JSON.stringify(value, null, 2));

  it("reads stdio and HTTP entries and expands ${VAR} and ${VAR:-default}", () => {
    writeGlobal({
      mcpServers: {
        local: {
          command: "node",
          args: ["server.js", "${MCP_TEST_ARG}"],
          env: { TOKEN: "${MCP_TEST_MISSING:-dflt}" },
        },
        remote: { url: "https://example.test/mcp", headers: { Authorization: "Bearer ${MCP_TEST_TOKEN}" } },
      },
    });
    const { servers, warnings } = readMcpFiles(agent(), project(), false, {
      MCP_TEST_ARG: "--fast",
      MCP_TEST_TOKEN: "t0k",
    });
    expect(warnings).to.deep.equal([]);
    expect(servers.map((s) => s.name)).to.deep.equal(["local", "remote"]);
    expect(servers[0]!.config.args).to.deep.equal(["server.js", "--fast"]);
    expect(servers[0]!.config.env).to.deep.equal({ TOKEN: "dflt" });
    expect(servers[1]!.config.headers).to.deep.equal({ Authorization: "Bearer t0k" });
    expect(servers[1]!.scope).to.equal("global");
  });

  it("warns about an unset variable without a default and still loads the server", () => {
    writeGlobal({ mcpServers: { s: { command: "x", env: { K: "${MCP_TEST_UNSET_VAR}" } } } });
    const { servers, warnings } = readMcpFiles(agent(), project(), false, {});
    expect(servers).to.have.length(1);
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.contain("mcp.json").and.contain('server "s"').and.contain("${MCP_TEST_UNSET_VAR}");
  });

  it("reports invalid JSON with the file, line and column, and loads nothing from it", () => {
    const file = temp.write("agent/mcp.json", '{\n  "mcpServers": {\n    "a": { "command": "x", }\n  }\n}\n');
    const { servers, warnings } = readMcpFiles(agent(), project(), false);
    expect(servers).to.deep.equal([]);
    expect(warnings).to.have.length(1);
    expect(warnings[0]).to.match(
      new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:3:\\d+: invalid JSON`),
    );
  });

  it("skips a bad entry with a warning naming the server and the problem, and keeps the others", () => {
    writeGlobal({
      mcpServers: {
        good: { command: "node" },
        both: { command: "node", url: "https://x.test" },
        badExposure: { command: "node", exposure: "sometimes" },
        badTimeout: { url: "https://x.test", timeout: -1 },
        "bad name!": { command: "node" },
      },
    });
    const { servers, warnings } = readMcpFiles(agent(), project(), false);
    expect(servers.map((s) => s.name)).to.deep.equal(["good"]);
    expect(warnings.join("\n"))
      .to.contain('server "both": needs exactly one of "command"')
      .and.contain('server "badExposure": "exposure" must be one of')
      .and.contain('server "badTimeout": "timeout" must be a positive number')
      .and.contain('server "bad name!": the name must be');
  });

  it("reads the project file only when the project is trusted; it overrides global entries of the same name", () => {
    writeGlobal({ mcpServers: { shared: { command: "global-cmd" }, onlyGlobal: { command: "g" } } });
    writeProject({ mcpServers: { shared: { command: "project-cmd" }, onlyProject: { command: "p" } } });
    const untrusted = readMcpFiles(agent(), project(), false);
    expect(untrusted.servers.map((s) => `${s.name}:${s.config.command}`)).to.deep.equal([
      "shared:global-cmd",
      "onlyGlobal:g",
    ]);
    const trusted = readMcpFiles(agent(), project(), true);
    expect(trusted.servers.map((s) => `${s.name}:${s.config.command}:${s.scope}`)).to.deep.equal([
      "shared:project-cmd:project",
      "onlyGlobal:g:global",
      "onlyProject:p:project",
    ]);
  });

  it("refuses auth in a project file but not in the global one", () => {
    writeGlobal({ mcpServers: { g: { url: "https://x.test", auth: { token: "t" } } } });
    writeProject({ mcpServers: { p: { url: "https://x.test", auth: { token: "t" } } } });
    const { servers, warnings } = readMcpFiles(agent(), project(), true);
    expect(servers.map((s) => s.name)).to.deep.equal(["g"]);
    expect(warnings[0]).to.contain('server "p": "auth" is not allowed in a project mcp.json');
  });

  it("expands variables inside nested values and leaves other text alone", () => {
    const unset: string[] = [];
    expect(expandStrings({ a: ["$HOME", "${A}-${B:-b}"], n: 3 }, { A: "a" }, unset)).to.deep.equal({
      a: ["$HOME", "a-b"],
      n: 3,
    });
    expect(unset).to.deep.equal([]);
  });
});

describe("builtin:mcp tool names", () => {
  it("joins server and tool as mcp__<server>__<tool> and replaces characters model APIs refuse", () => {
    expect(mcpToolName("docs", "search")).to.equal("mcp__docs__search");
    expect(mcpToolName("my.server", "files/read.v2")).to.equal("mcp__my_server__files_read_v2");
  });

  it("shortens names past 64 characters deterministically, keeping different tools apart", () => {
    const a = mcpToolName("server", `${"x".repeat(70)}_one`);
    const b = mcpToolName("server", `${"x".repeat(70)}_two`);
    expect(a).to.have.length(64);
    expect(a).to.match(/^[A-Za-z0-9_-]{1,64}$/);
    expect(a).to.not.equal(b);
    expect(mcpToolName("server", `${"x".repeat(70)}_one`)).to.equal(a);
    expect(a.startsWith("mcp__server__xxx")).to.equal(true);
  });
});
