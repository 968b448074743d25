/**
 * What a package published for pi brings, through the built CLI as real processes against a local
 * OpenAI-compatible server: its skills as `skill:<name>` commands, its command named like a built-in one, its
 * `before_agent_start` handler that appends to the system prompt, a package with nothing to load, and an extension
 * that fails to load reported to JSON and RPC clients as an `extension_error` record.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { expect } from "chai";
import { textStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { runCli } from "../../helpers/cli.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { startTestServer, type TestServer, writeSse } from "../../helpers/sse-server.js";

type Record_ = { type: string; id?: string; [k: string]: unknown };

describe("pi packages' resources through the CLI", function () {
  this.timeout(120_000);
  let server: TestServer;
  let dir: string;
  let agentDir: string;
  let project: string;
  let env: Record<string, string>;

  const write = (path: string, text: string) => {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
    return path;
  };

  beforeEach(async () => {
    server = await startTestServer();
    server.respond((_req, res) => writeSse(res, textStream("ok")));
    dir = mkdtempSync(join(tmpdir(), "kc-pi-resources-"));
    agentDir = join(dir, "agent");
    project = join(dir, "project");
    mkdirSync(project, { recursive: true });
    mkdirSync(join(dir, "home"), { recursive: true });
    writeLocalModels(agentDir, {
      baseUrl: `${server.url}/v1`,
      apiKey: "sk-test",
      models: [{ id: "m1", contextWindow: 32768, maxTokens: 1024 }],
    });
    env = { KNIGHTCODE_AGENT_DIR: agentDir, HOME: join(dir, "home"), NO_COLOR: "1" };
  });

  afterEach(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const cli = (args: string[], stdin?: string) =>
    runCli(args, { cwd: project, env, timeoutMs: 90_000, ...(stdin ? { stdin } : {}) });
  const model = ["--provider", "local", "--model", "m1"];
  const records = (stdout: string): Record_[] =>
    stdout
      .trimEnd()
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record_);
  const rpc = (commands: Record<string, unknown>[], extra: string[] = []) =>
    cli(
      ["--mode", "rpc", ...model, "--no-session", ...extra],
      commands.map((c) => JSON.stringify(c)).join("\n"),
    );

  /** A package as pi packages are laid out: a `pi` manifest naming an extension and a skills folder. */
  function piPackage(name: string, extension: string, skills: Record<string, string> = {}): string {
    const root = join(dir, "packages", name);
    write(
      join(root, "package.json"),
      JSON.stringify({
        name,
        version: "1.0.0",
        keywords: ["pi-package"],
        pi: { extensions: ["./index.ts"], skills: ["./skills"] },
        peerDependencies: { "@earendil-works/pi-coding-agent": "*" },
      }),
    );
    write(join(root, "index.ts"), extension);
    for (const [skill, text] of Object.entries(skills)) write(join(root, "skills", skill, "SKILL.md"), text);
    return root;
  }

  it("lists a package's skills as skill:<name> commands over RPC, runs one, and keeps the skills in a prompt an extension appends to", async () => {
    const root = piPackage(
      "pi-house-rules",
      `import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.on("before_agent_start", (event) => ({ systemPrompt: event.systemPrompt + "\\n\\nHOUSE RULES: answer in French." }));
}
`,
      {
        "deploy-app": [
          "---",
          "name: deploy-app",
          "description: Deploy the app to staging",
          "metadata:",
          "  owner: ops",
          "  tags: [deploy, staging]",
          "---",
          "Run ./deploy.sh staging.",
          "",
        ].join("\n"),
        "secret-step": [
          "---",
          "name: secret-step",
          "description: Only when asked",
          "disable-model-invocation: true",
          "---",
          "Rotate the keys.",
          "",
        ].join("\n"),
      },
    );
    const installed = await cli(["install", root]);
    expect(installed.code, installed.stderr).to.equal(0);
    const run = await rpc([
      { id: "c", type: "get_commands" },
      { id: "p1", type: "prompt", message: "hello" },
    ]);
    expect(run.code, run.stderr).to.equal(0);
    const out = records(run.stdout);
    const commands = out.find((r) => r.id === "c")!.data as {
      commands: { name: string; description?: string; source: string; sourceInfo?: { path: string } }[];
    };
    const skills = commands.commands.filter((c) => c.source === "skill");
    expect(skills.map((c) => [c.name, c.description])).to.deep.equal([
      ["skill:deploy-app", "Deploy the app to staging"],
      ["skill:secret-step", "Only when asked"],
    ]);
    expect(skills[0]!.sourceInfo?.path).to.equal(join(root, "skills", "deploy-app", "SKILL.md"));
    const system = String(server.requests[0]!.body.messages[0].content);
    expect(system).to.contain('<skill name="deploy-app"').and.contain("HOUSE RULES: answer in French.");
    expect(system).to.not.contain("secret-step");

    const ran = await rpc([{ id: "p", type: "prompt", message: "/skill:secret-step now please" }]);
    expect(ran.code, ran.stderr).to.equal(0);
    const messages = server.requests[1]!.body.messages as { role: string; content: unknown }[];
    const user = JSON.stringify(messages.filter((m) => m.role === "user").at(-1)!.content);
    expect(user).to.contain("Rotate the keys.").and.contain("now please");
  });

  it("-e <folder> of a package written for pi loads it by its manifest, as pi does: its extension and its skills", async () => {
    // The extension is where the manifest says (no index.ts at the root), as in a cloned pi package.
    const root = join(dir, "packages", "pi-cloned");
    write(
      join(root, "package.json"),
      JSON.stringify({ name: "pi-cloned", pi: { extensions: ["./src/main.ts"], skills: ["./skills"] } }),
    );
    write(
      join(root, "src", "main.ts"),
      `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerCommand("cloned", { description: "from the manifest", handler: async () => {} });
}
`,
    );
    write(
      join(root, "skills", "cloned-skill", "SKILL.md"),
      "---\nname: cloned-skill\ndescription: A skill of the cloned package\n---\nDo the cloned thing.\n",
    );
    const run = await rpc([{ id: "c", type: "get_commands" }], ["-e", root]);
    expect(run.code, run.stderr).to.equal(0);
    const out = records(run.stdout);
    expect(
      out.filter((r) => r.type === "extension_error"),
      run.stdout,
    ).to.deep.equal([]);
    const names = (out.find((r) => r.id === "c")!.data as { commands: { name: string }[] }).commands.map(
      (c) => c.name,
    );
    expect(names).to.include.members(["cloned", "skill:cloned-skill"]);
    // Used in place: nothing copied into the agent folder's package cache.
    expect(existsSync(join(agentDir, "cache", "packages"))).to.equal(false);
  });

  it("runs a package's /compact instead of the built-in, which stays reachable as /builtin:compact", async () => {
    const root = piPackage(
      "pi-my-compact",
      `import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  pi.registerCommand("compact", {
    description: "The package's compact",
    handler: async (args, ctx) => { ctx.ui.notify("package compact ran: " + args, "info"); },
  });
}
`,
    );
    expect((await cli(["install", root])).code).to.equal(0);
    const run = await rpc([
      { id: "c", type: "get_commands" },
      { id: "p", type: "prompt", message: "/compact tidy" },
    ]);
    expect(run.code, run.stderr).to.equal(0);
    const out = records(run.stdout);
    const commands = (out.find((r) => r.id === "c")!.data as { commands: { name: string; owner?: string }[] })
      .commands;
    expect(commands.find((c) => c.name === "compact")?.owner).to.match(/pi-my-compact/);
    expect(commands.find((c) => c.name === "builtin:compact")?.owner).to.equal("builtin:compaction");
    expect(
      out.some(
        (r) =>
          r.type === "extension_ui_request" &&
          r.method === "notify" &&
          r.message === "package compact ran: tidy",
      ),
      run.stdout,
    ).to.equal(true);
    expect(server.requests).to.have.length(0);
  });

  it("installs a package with nothing to load, says so, and runs without it", async () => {
    const root = join(dir, "packages", "cli-only");
    write(
      join(root, "package.json"),
      JSON.stringify({ name: "cli-only", version: "1.0.0", bin: { "cli-only": "cli.js" } }),
    );
    write(join(root, "cli.js"), "#!/usr/bin/env node\nconsole.log('hi');\n");
    const installed = await cli(["install", root]);
    expect(installed.code, installed.stderr).to.equal(0);
    expect(installed.stdout).to.contain(`Nothing was found to load in ${root}`);
    expect(JSON.parse(readFileSync(join(agentDir, "settings.json"), "utf8")).packages).to.deep.equal([root]);
    const run = await cli([...model, "-p", "hello"]);
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stdout).to.contain("ok");
  });

  it("tells JSON and RPC clients about a package extension that fails to load, as an extension_error record", async () => {
    const root = piPackage(
      "pi-broken",
      `import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
export default function (pi: ExtensionAPI) {
  throw new Error("cannot start: missing config");
}
`,
    );
    expect((await cli(["install", root])).code).to.equal(0);
    const broken = join(root, "index.ts");

    const json = await cli(["--mode", "json", ...model, "--no-session", "hello"]);
    const jsonRecords = records(json.stdout);
    expect(jsonRecords[0]!.type).to.equal("session");
    expect(jsonRecords[1]).to.deep.include({ type: "extension_error", extensionPath: broken, event: "load" });
    expect(String(jsonRecords[1]!.error)).to.contain("cannot start: missing config");
    expect(jsonRecords.some((r) => r.type === "agent_end")).to.equal(true);

    const run = await rpc([{ id: "s", type: "get_state" }]);
    expect(run.code, run.stderr).to.equal(0);
    const rpcRecords = records(run.stdout);
    const error = rpcRecords.find((r) => r.type === "extension_error");
    expect(error, run.stdout).to.deep.include({ extensionPath: broken, event: "load" });
    expect(String(error!.error)).to.contain("cannot start: missing config");
    expect(rpcRecords.findIndex((r) => r.type === "extension_error")).to.be.lessThan(
      rpcRecords.findIndex((r) => r.id === "s"),
    );
  });
});
