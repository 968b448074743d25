/**
 * examples/extensions/allowlist-gate.ts replaces builtin:classifier-gate, and the rest of KnightCode uses it: its
 * tools.json row in `/tools` and in the app-server's `tool/settings/*` (through the real `knightcode app-server`),
 * its decisions on the calls and to `permissionGateService` listeners, and a print-mode run of the built CLI that
 * it blocks. Run `npm run build` first.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type ExtensionAPI, type GateDecision, permissionGateService } from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { matches, patterns } from "../../examples/extensions/allowlist-gate.js";
import { runCli } from "../helpers/cli.js";
import { useTempDir } from "../helpers/temp-dir.js";
import { type Harness, harness } from "../hosts/app-server/harness.js";

const gatePath = fileURLToPath(new URL("../../examples/extensions/allowlist-gate.ts", import.meta.url));
const SWAP = { extensions: ["-builtin:classifier-gate"] };

describe("example: allowlist-gate in place of builtin:classifier-gate", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-allowlist-gate-");
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  const agentDir = () => {
    const dir = join(tmp.path, "agent");
    mkdirSync(dir, { recursive: true });
    return dir;
  };
  const toolsJson = (value: unknown) =>
    writeFileSync(join(agentDir(), "tools.json"), typeof value === "string" ? value : JSON.stringify(value));
  const shown = () => t!.ui.notifications.map((n) => n.message).join("\n");

  /** A session with the gate loaded from its file (as a user loads it) and a listener of the gate service. */
  async function open(script: { toolCalls?: { name: string; arguments: object }[]; text?: string }[]) {
    const decisions: GateDecision[] = [];
    const listener = (kc: ExtensionAPI) => {
      kc.services.watch(permissionGateService, (gate) => {
        gate?.onDecision((d) => {
          decisions.push(d);
        });
      });
    };
    t = await createTestSession({
      agentDir: agentDir(),
      cwd: tmp.path,
      settings: SWAP,
      extensions: [gatePath, listener],
      script: script as never,
    });
    return decisions;
  }

  it("decides each call by its lists and asks about the rest, and its decisions reach onDecision listeners", async () => {
    toolsJson({ "allowlist-gate": { deny: "write, mcp__*" } });
    writeFileSync(join(tmp.path, "a.txt"), "hello");
    const decisions = await open([
      {
        toolCalls: [
          { name: "read", arguments: { path: "a.txt" } },
          { name: "write", arguments: { path: "b.txt", content: "x" } },
          { name: "bash", arguments: { command: "echo hi" } },
        ],
      },
      { text: "done" },
    ]);
    t!.answerDialogs(false);
    await t!.prompt("go");
    const [read, write, bash] = t!.toolCalls();
    expect(read).to.deep.include({ toolName: "read", isError: false });
    expect(write).to.deep.include({ toolName: "write", isError: true });
    expect(bash).to.deep.include({ toolName: "bash", isError: true });
    expect((bash!.result!.content[0] as { text: string }).text).to.contain(
      "allowlist-gate: the user declined it (bash is not on the allow list)",
    );
    // One dialog, for bash: the deny list decided write without asking; the built-in gate is gone.
    expect(t!.dialogs).to.deep.equal(["confirm: Allow bash?"]);
    expect(decisions.map((d) => [d.toolName, d.outcome, d.by, d.rule])).to.deep.equal([
      ["read", "allowed", "rule", "allow read"],
      ["write", "denied", "rule", "deny write"],
      ["bash", "denied", "user", undefined],
    ]);
    expect((write!.result!.details as { permissionGate: GateDecision }).permissionGate).to.deep.equal(
      decisions[1],
    );
  });

  it("fails closed: with a tools.json it cannot read, even an allowed read needs a person", async () => {
    toolsJson("{ not json");
    writeFileSync(join(tmp.path, "a.txt"), "hello");
    const decisions = await open([
      { toolCalls: [{ name: "read", arguments: { path: "a.txt" } }] },
      { text: "done" },
    ]);
    t!.answerDialogs(false);
    await t!.prompt("go");
    expect(t!.dialogs).to.deep.equal(["confirm: Allow read?"]);
    expect(t!.toolCalls()[0]!.isError).to.equal(true);
    expect(decisions[0]!.reason).to.contain("the permission file cannot be read");
  });

  it("shows its row in /tools with its description and settings, ...Key values masked, and changes it", async () => {
    toolsJson({ "allowlist-gate": { allow: "read, ls", auditKey: "sk-audit-secret-4321" } });
    await open([]);
    await t!.prompt("/tools");
    expect(shown())
      .to.contain("allowlist-gate  on  Runs the tools on its allow list")
      .and.contain("allow = read, ls")
      .and.contain("auditKey = ****4321");
    expect(shown()).not.to.contain("classifier-gate  ").and.not.to.contain("sk-audit-secret");
    await t!.prompt("/tools allowlist-gate deny=bash");
    await t!.prompt("/tools allowlist-gate");
    expect(shown()).to.contain("deny = bash");
    expect(JSON.parse(readFileSync(join(agentDir(), "tools.json"), "utf8"))["allowlist-gate"]).to.deep.equal({
      allow: "read, ls",
      auditKey: "sk-audit-secret-4321",
      deny: "bash",
    });
  });

  it("reads its lists as the settings write them", () => {
    expect(patterns(undefined, ["read"])).to.deep.equal(["read"]);
    expect(patterns(" read, ls ,", [])).to.deep.equal(["read", "ls"]);
    expect(patterns(["grep"], [])).to.deep.equal(["grep"]);
    expect(patterns(true, [])).to.equal(undefined);
    expect(matches("mcp__github__*", "mcp__github__delete_repo")).to.equal(true);
    expect(matches("mcp__github__*", "mcp__gitlab__x")).to.equal(false);
    expect(matches("read", "read_more")).to.equal(false);
  });

  describe("in the built CLI", () => {
    let h: Harness | undefined;
    afterEach(async () => {
      await h?.close();
      h = undefined;
    });

    it("the app-server's tool/settings/read and /write serve its row, masked, and no classifier-gate row", async () => {
      h = await harness(tmp.path, {}, { extensions: ["-builtin:classifier-gate", gatePath] });
      const file = join(h.agentDir, "tools.json");
      writeFileSync(
        file,
        JSON.stringify({ "allowlist-gate": { deny: "bash", auditKey: "sk-audit-secret-4321" } }),
      );
      const { client } = await h.start();
      await client.initialize();
      const read = await client.request("tool/settings/read", {});
      expect(read.tools.map((tool) => tool.name))
        .to.include("allowlist-gate")
        .and.not.include("classifier-gate");
      expect(read.tools.find((tool) => tool.name === "allowlist-gate")).to.deep.equal({
        name: "allowlist-gate",
        enabled: true,
        settings: { deny: "bash", auditKey: "****4321" },
      });
      expect(JSON.stringify(read)).not.to.contain("sk-audit-secret");
      await client.request("tool/settings/write", { name: "allowlist-gate", key: "enabled", value: false });
      expect(JSON.parse(readFileSync(file, "utf8"))["allowlist-gate"]).to.deep.include({ enabled: false });
    });

    it("blocks a call in a JSON-mode run, where no one can confirm it", async () => {
      const agent = agentDir();
      writeFileSync(join(agent, "settings.json"), JSON.stringify(SWAP));
      const script = join(tmp.path, "script.json");
      writeFileSync(
        script,
        JSON.stringify({
          steps: [
            { toolCalls: [{ name: "bash", arguments: { command: "echo ran > ran.txt" } }] },
            { text: "finished" },
          ],
        }),
      );
      const result = await runCli(
        ["-e", gatePath, "--mode", "json", "--provider", "scripted", "--script", script, "go"],
        { cwd: tmp.path, env: { KNIGHTCODE_AGENT_DIR: agent } },
      );
      expect(result.code, result.stderr).to.equal(0);
      const end = result.stdout
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line))
        .find((r) => r.type === "tool_execution_end");
      expect(end, result.stdout).to.deep.include({ toolName: "bash", isError: true });
      expect(end.result.content[0].text).to.contain("allowlist-gate: bash is not on the allow list");
      expect(end.result.details.permissionGate).to.include({ outcome: "denied", by: "policy" });
      expect(existsSync(join(tmp.path, "ran.txt")), "the command never ran").to.equal(false);
    });
  });
});
