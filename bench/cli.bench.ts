/**
 * The built `knightcode` as a user runs it: `--version` and `--help` (wall time and peak memory), a two-turn JSON
 * run, a warm RPC prompt round trip, and startup with 30 small TypeScript extensions with a cold and a warm
 * transform cache. Needs `npm run build` first.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { RpcClient } from "../hosts/sdk/rpc-client.js";

const bin = fileURLToPath(new URL("../dist/hosts/cli/main.js", import.meta.url));
const ROUNDS = 5;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Wall time in ms and peak RSS in MB (GNU time when present). */
function measure(args: string[], env: NodeJS.ProcessEnv, cwd: string): { ms: number; mb?: number } {
  const useTime = existsSync("/usr/bin/time");
  const started = performance.now();
  const result = useTime
    ? spawnSync("/usr/bin/time", ["-f", "%M", process.execPath, bin, ...args], { env, cwd, encoding: "utf8" })
    : spawnSync(process.execPath, [bin, ...args], { env, cwd, encoding: "utf8" });
  const ms = performance.now() - started;
  if (result.status !== 0) throw new Error(`knightcode ${args.join(" ")} failed: ${result.stderr}`);
  const kb = useTime ? Number(result.stderr.trim().split("\n").at(-1)) : Number.NaN;
  return Number.isFinite(kb) ? { ms, mb: kb / 1024 } : { ms };
}

function row(name: string, samples: { ms: number; mb?: number }[]): string {
  const ms = median(samples.map((s) => s.ms));
  const mbs = samples.map((s) => s.mb).filter((m): m is number => m !== undefined);
  return `${name.padEnd(34)}${ms.toFixed(0).padStart(8)}${(mbs.length ? median(mbs).toFixed(1) : "-").padStart(10)}`;
}

export async function cliBench(): Promise<void> {
  if (!existsSync(bin)) {
    console.log("cli: skipped (run npm run build first)");
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), "kc-cli-bench-"));
  try {
    const env = { ...process.env, KNIGHTCODE_AGENT_DIR: join(dir, "agent") };
    const lines = [
      `knightcode CLI (median of ${ROUNDS})`,
      `${"case".padEnd(34)}${"ms".padStart(8)}${"peak MB".padStart(10)}`,
    ];
    const repeat = (args: string[]) => Array.from({ length: ROUNDS }, () => measure(args, env, dir));
    lines.push(row("--version", repeat(["--version"])));
    lines.push(row("--help", repeat(["--help"])));

    const script = join(dir, "two-turns.json");
    writeFileSync(
      script,
      JSON.stringify({
        steps: [{ toolCalls: [{ name: "echo", arguments: { text: "x" } }] }, { text: "done" }],
      }),
    );
    const echo = join(dir, "echo.ts");
    writeFileSync(
      echo,
      `export default (kc: any) => kc.registerTool({ name: "echo", description: "echo", parameters: { type: "object", properties: { text: { type: "string" } } }, execute: async (_i: string, p: any) => ({ content: [{ type: "text", text: p.text }], details: undefined }) });`,
    );
    lines.push(
      row(
        "2-turn JSON run (scripted)",
        repeat([
          "--mode",
          "json",
          "--no-session",
          "-e",
          echo,
          "--provider",
          "scripted",
          "--script",
          script,
          "go",
        ]),
      ),
    );

    const extDir = join(dir, "exts");
    execFileSync("mkdir", ["-p", extDir]);
    const extArgs: string[] = [];
    for (let i = 0; i < 30; i++) {
      const file = join(extDir, `ext${i}.ts`);
      writeFileSync(
        file,
        `import type { ExtensionAPI } from "@knightcodeai/cli";\ninterface Config { n: number }\nconst config: Config = { n: ${i} };\nexport default function (kc: ExtensionAPI) {\n  kc.registerCommand("ext${i}", { description: \`extension \${config.n}\`, handler: async () => {} });\n  kc.on("agent_start", () => {});\n}\n`,
      );
      extArgs.push("-e", file);
    }
    const cold = Array.from({ length: ROUNDS }, () => {
      rmSync(join(dir, "agent", "cache"), { recursive: true, force: true });
      return measure([...extArgs, "--list-extensions"], env, dir);
    });
    lines.push(row("30 TS extensions, cold cache", cold));
    measure([...extArgs, "--list-extensions"], env, dir);
    lines.push(row("30 TS extensions, warm cache", repeat([...extArgs, "--list-extensions"])));

    const rpcScript = join(dir, "rpc.json");
    writeFileSync(rpcScript, JSON.stringify({ steps: Array.from({ length: 40 }, () => ({ text: "ok" })) }));
    const client = RpcClient.start({
      args: ["--provider", "scripted", "--script", rpcScript, "--no-session"],
      cwd: dir,
      env,
      commandTimeoutMs: 30_000,
    });
    try {
      for (let i = 0; i < 5; i++) await client.promptAndWait("warm up");
      const trips: number[] = [];
      for (let i = 0; i < 20; i++) {
        const started = performance.now();
        await client.promptAndWait("ping");
        trips.push(performance.now() - started);
      }
      lines.push(
        `${"RPC prompt round trip (warm)".padEnd(34)}${median(trips).toFixed(1).padStart(8)}${"-".padStart(10)}`,
      );
    } finally {
      await client.close();
    }
    console.log(`${lines.join("\n")}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
