/**
 * extensions.md: the prompt that runs a command hears the acceptance of the command's awaited
 * `ctx.sendUserMessage()` once, before the run settles. Over RPC that is the `prompt` response, which the built
 * `knightcode --mode rpc` now sends while the command's run streams, not after it settled.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { cliBin } from "../helpers/cli.js";
import { RpcProcess } from "../helpers/rpc-process.js";
import { useTempDir } from "../helpers/temp-dir.js";

const COMMAND = `export default (kc: any) => {
  kc.registerCommand("ask", { description: "asks the model and waits", handler: async (_a: string, ctx: any) => {
    await ctx.sendUserMessage("a question from the command");
  } });
  kc.registerCommand("quiet", { description: "does nothing", handler: async () => {} });
};`;

describe("spec rows: RPC prompt of a command that sends a message", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-spec-rpc-accept-");

  it("answers the prompt with started before the command's run settles, and a command that sends nothing with handled", async () => {
    const ext = tmp.write("ask.ts", COMMAND);
    const script = join(tmp.path, "script.json");
    writeFileSync(
      script,
      JSON.stringify({ steps: [{ text: "a slow answer in many small chunks", chunkDelayMs: 150 }] }),
    );
    const child = spawn(
      process.execPath,
      [cliBin, "--mode", "rpc", "--no-session", "-e", ext, "--provider", "scripted", "--script", script],
      { cwd: tmp.path, env: { ...process.env, KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") } },
    );
    const rpc = new RpcProcess(child);
    try {
      rpc.send({ id: "1", type: "prompt", message: "/ask" });
      const response = await rpc.response("1");
      expect(response.data).to.deep.equal({ disposition: "started" });
      const at = (predicate: (r: Record<string, unknown>) => boolean) => rpc.records.findIndex(predicate);
      await rpc.waitFor((r) => r.type === "agent_settled", 30_000);
      const responseAt = at((r) => r.type === "response" && r.id === "1");
      expect(responseAt).to.be.at.least(0);
      expect(responseAt).to.be.lessThan(at((r) => r.type === "agent_settled"));
      expect((await rpc.request("2", "prompt", { message: "/quiet" })).data).to.deep.equal({
        disposition: "handled",
      });
    } finally {
      await rpc.end();
    }
  });
});
