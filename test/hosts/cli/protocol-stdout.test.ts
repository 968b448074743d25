/**
 * Stdout belongs to the mode: whatever an extension prints (console.log, process.stdout.write, at load time, in a
 * handler or in a tool) goes to stderr, so JSON and RPC output stays parseable record by record and a print run's
 * answer stays clean.
 */
import { join } from "node:path";
import { expect } from "chai";
import { runCli } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const NOISY = `import type { ExtensionAPI } from "@knightcodeai/cli";
import { Type } from "@sinclair/typebox";
console.log("noise at load");
export default function (kc: ExtensionAPI) {
  process.stdout.write("noise in the factory\\n");
  kc.on("session_start", () => console.log("noise in session_start"));
  kc.on("message_update", () => console.info("noise per delta"));
  kc.registerTool({
    name: "noisy",
    description: "prints and answers",
    parameters: Type.Object({}),
    execute: async () => {
      console.log("noise in a tool");
      return { content: [{ type: "text", text: "ok" }], details: undefined };
    },
  });
}
`;

describe("stdout carries only what the mode writes", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-stdout-");
  const env = () => ({ KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") });
  const script = () =>
    tmp.write(
      "script.json",
      JSON.stringify({ steps: [{ toolCalls: [{ name: "noisy", arguments: {} }] }, { text: "all done" }] }),
    );

  it("keeps every stdout line of JSON mode a JSON record and moves extension output to stderr", async () => {
    const ext = tmp.write("noisy.ts", NOISY);
    const result = await runCli(
      ["--mode", "json", "-e", ext, "--provider", "scripted", "--script", script(), "--no-session", "go"],
      { cwd: tmp.path, env: env() },
    );
    expect(result.code, result.stderr).to.equal(0);
    const lines = result.stdout.trimEnd().split("\n");
    for (const line of lines) expect(() => JSON.parse(line), line).to.not.throw();
    expect(lines.some((l) => l.includes('"tool_execution_end"'))).to.equal(true);
    for (const noise of [
      "noise at load",
      "noise in the factory",
      "noise in session_start",
      "noise in a tool",
    ]) {
      expect(result.stdout).to.not.contain(noise);
      expect(result.stderr).to.contain(noise);
    }
  });

  it("keeps RPC responses and events parseable while an extension prints", async () => {
    const ext = tmp.write("noisy.ts", NOISY);
    const result = await runCli(
      ["--mode", "rpc", "-e", ext, "--provider", "scripted", "--script", script(), "--no-session"],
      {
        cwd: tmp.path,
        env: env(),
        stdin: `${JSON.stringify({ id: "1", type: "prompt", message: "go" })}\n`,
      },
    );
    expect(result.code, result.stderr).to.equal(0);
    const records = result.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string });
    expect(records.some((r) => r.type === "agent_settled" || r.type === "agent_end")).to.equal(true);
    expect(result.stderr).to.contain("noise in a tool");
  });

  it("prints only the answer in print mode", async () => {
    const ext = tmp.write("noisy.ts", NOISY);
    const result = await runCli(
      ["-p", "-e", ext, "--provider", "scripted", "--script", script(), "--no-session", "go"],
      {
        cwd: tmp.path,
        env: env(),
      },
    );
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.equal("all done\n");
    expect(result.stderr).to.contain("noise in a tool");
  });
});
