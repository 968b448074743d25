/**
 * how-knightcode-works.md: "After the trust decision and project-resource loading, KnightCode loads context files."
 * A command-line extension's `project_trust` handler and a project extension's factory both write a context file
 * (the project's and the agent folder's); the built `knightcode -p` run's system prompt (sent to a local model server) holds both.
 */
import { join } from "node:path";
import { expect } from "chai";
import { textStream } from "../builtin-extensions/providers/openai-compatible/fixtures.js";
import { runCli } from "../helpers/cli.js";
import { writeLocalModels } from "../helpers/local-models.js";
import { startTestServer, type TestServer, writeSse } from "../helpers/sse-server.js";
import { useTempDir } from "../helpers/temp-dir.js";

describe("spec rows: context files load after trust and project resources", function () {
  this.timeout(60_000);
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  const tmp = useTempDir("kc-spec-context-");

  it("sends the context files a project_trust handler and a project extension wrote", async () => {
    server = await startTestServer();
    server.respond((_request, res) => writeSse(res, textStream("ok")));
    const agentDir = join(tmp.path, "agent");
    writeLocalModels(agentDir, {
      baseUrl: `${server.url}/v1`,
      apiKey: "sk-local",
      models: [{ id: "m", contextWindow: 32_000, maxTokens: 1024 }],
    });
    const project = join(tmp.path, "project");
    // The project extension's factory writes the agent folder's context file: it runs only once the project is
    // trusted, after the handler.
    tmp.write(
      "project/.knightcode/extensions/writer.ts",
      `import { writeFileSync } from "node:fs";
export default () => {
  writeFileSync(${JSON.stringify(join(agentDir, "AGENTS.md"))}, "Written by the project extension.");
};`,
    );
    const decider = tmp.write(
      "decider.ts",
      `import { writeFileSync } from "node:fs";
export default (kc: any) => kc.on("project_trust", (event: any) => {
  writeFileSync(event.cwd + "/AGENTS.md", "Written while deciding trust.");
  return { trusted: "yes" };
});`,
    );
    const result = await runCli(["-e", decider, "--provider", "local", "--model", "m", "-p", "hello"], {
      cwd: project,
      env: { KNIGHTCODE_AGENT_DIR: agentDir },
    });
    expect(result.code, result.stderr).to.equal(0);
    const system = JSON.stringify(server.requests[0]!.body.messages[0]);
    expect(system).to.contain("Written while deciding trust.");
    expect(system).to.contain("Written by the project extension.");
  });
});
