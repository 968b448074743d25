/**
 * Prompts sent together to an idle RPC process (regression: of ten prompts in one write, two were answered as
 * accepted and eight refused "A run is in progress"). A run counts as busy while it starts, and what arrives
 * meanwhile joins it, in the order sent.
 */

import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { cliBin } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

type Wire = { type: string; id?: string; success?: boolean; [k: string]: unknown };

describe("RPC mode: prompts sent together", () => {
  const tmp = useTempDir("kc-rpc-burst-");
  let child: ChildProcessWithoutNullStreams | undefined;
  afterEach(() => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
    child = undefined;
  });

  /** Spawns the CLI in RPC mode, writes `lines` in one write, closes stdin and collects every record. */
  async function burst(
    lines: object[],
    extra: string[] = [],
  ): Promise<{ records: Wire[]; code: number | null }> {
    const script = join(tmp.path, "script.json");
    writeFileSync(script, JSON.stringify({ steps: [{ text: "first answer" }, { text: "second answer" }] }));
    const proc = spawn(
      process.execPath,
      [cliBin, "--mode", "rpc", "--provider", "scripted", "--script", script, "--no-session", ...extra],
      { cwd: tmp.path, env: { ...process.env, KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") } },
    );
    child = proc;
    let stdout = "";
    let stderr = "";
    proc.stdout.on("data", (d) => {
      stdout += d;
    });
    proc.stderr.on("data", (d) => {
      stderr += d;
    });
    const closed = new Promise<number | null>((resolve) => proc.on("close", resolve));
    proc.stdin.end(`${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
    const timer = setTimeout(() => proc.kill("SIGKILL"), 20_000);
    const code = await closed;
    clearTimeout(timer);
    expect(code, stderr).to.equal(0);
    return {
      records: stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Wire),
      code,
    };
  }

  const userTexts = (records: Wire[]) =>
    records
      .filter((r) => r.type === "message_end")
      .map((r) => r.message as { role: string; content: unknown })
      .filter((m) => m.role === "user")
      .map((m) => m.content);

  it("accepts ten prompts written at once and sends them, in order, in the run the first one starts", async () => {
    const prompts = Array.from({ length: 10 }, (_, i) => ({
      id: `p${i + 1}`,
      type: "prompt",
      message: `m${i + 1}`,
    }));
    const { records } = await burst(prompts);
    const responses = records.filter((r) => r.type === "response");
    expect(responses.map((r) => [r.id, r.success, r.error])).to.deep.equal(
      prompts.map((p) => [p.id, true, undefined]),
    );
    expect(records.filter((r) => r.type === "agent_start")).to.have.length(1);
    expect(userTexts(records)).to.deep.equal(prompts.map((p) => p.message));
    // All ten entered before the one request: the answer follows the tenth.
    const ends = records
      .filter((r) => r.type === "message_end")
      .map((r) => (r.message as { role: string }).role);
    expect(ends).to.deep.equal([...Array(10).fill("user"), "assistant"]);
  });

  it("keeps the order when input handlers take longer for earlier prompts, and honours streamingBehavior", async () => {
    // The first prompts' handlers are the slowest, and before_agent_start waits: without ordered admission the
    // later prompts would overtake the earlier ones.
    const ext = join(tmp.path, "slow.ts");
    writeFileSync(
      ext,
      `export default function (kc: any) {
        kc.on("input", async (event: any) => {
          const n = Number(String(event.text).replace(/\\D/g, "")) || 0;
          await new Promise((r) => setTimeout(r, (10 - n) * 3));
          return { action: "transform", text: event.text + "!" };
        });
        kc.on("before_agent_start", async () => { await new Promise((r) => setTimeout(r, 20)); });
      }`,
    );
    const lines = Array.from({ length: 8 }, (_, i) => ({
      id: `p${i + 1}`,
      type: "prompt",
      message: `m${i + 1}`,
      ...(i === 4 ? { streamingBehavior: "followUp" } : {}),
    }));
    const { records } = await burst(lines, ["-e", ext]);
    expect(records.filter((r) => r.type === "response").every((r) => r.success === true)).to.equal(true);
    // m5 asked to follow up: it enters after the first answer, in the same run.
    expect(userTexts(records)).to.deep.equal(["m1!", "m2!", "m3!", "m4!", "m6!", "m7!", "m8!", "m5!"]);
    expect(records.filter((r) => r.type === "agent_start")).to.have.length(1);
    const texts = records
      .filter((r) => r.type === "message_end")
      .map((r) => r.message as { role: string; content: { text: string }[] })
      .filter((m) => m.role === "assistant")
      .map((m) => m.content[0]!.text);
    expect(texts).to.deep.equal(["first answer", "second answer"]);
  });
});
