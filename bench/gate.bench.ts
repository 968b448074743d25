/**
 * The classifier gate's added latency per tool call when the rules alone decide (no classifier, no dialog): the
 * gate's `tool_call` handler run on its own against a real tools.json and project folder, for the kinds of calls
 * it decides without a model. Target: at most 0.2 ms (200 µs) per call.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GATE, GATE_SETTINGS } from "../builtin-extensions/classifier-gate/config.js";
import classifierGate from "../builtin-extensions/classifier-gate/index.js";
import type { ExtensionAPI, ExtensionContext, ToolCallEvent, ToolInfo } from "../kit.js";
import { createSessionFaces, type HostFaceDeps } from "../plugins/host-face/host-face.js";
import { ToolsConfigFile } from "../plugins/settings/tools-config.js";

const CALLS = 20_000;
const ROUNDS = 5;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

type Handler = (event: ToolCallEvent, ctx: ExtensionContext) => unknown;

/** The tools a default session has, with the core tools' annotations. */
const TOOLS: ToolInfo[] = [
  ["read", { readOnlyHint: true, destructiveHint: false }],
  ["bash", { readOnlyHint: false, destructiveHint: true, openWorldHint: true }],
  ["edit", { readOnlyHint: false, destructiveHint: true }],
  ["write", { readOnlyHint: false, destructiveHint: true }],
  ["grep", { readOnlyHint: true, destructiveHint: false }],
  ["find", { readOnlyHint: true, destructiveHint: false }],
  ["ls", { readOnlyHint: true, destructiveHint: false }],
  ["ask_user", { readOnlyHint: true, destructiveHint: false }],
].map(([name, annotations]) => ({
  name: name as string,
  description: "",
  parameters: {} as never,
  exposure: "direct" as const,
  annotations: annotations as ToolInfo["annotations"],
  reachesTools: false,
  owner: "builtin:core-tools",
}));

/** Services the gate never reaches here; touching one fails the bench. */
function unused<T extends object>(): T {
  return new Proxy({} as T, {
    get: (_target, key) => {
      throw new Error(`the gate bench does not provide ${String(key)}`);
    },
  });
}

function gateHandler(): Handler {
  let handler: Handler | undefined;
  const api = {
    on: (event: string, h: Handler) => {
      if (event === "tool_call") handler = h;
      return () => {};
    },
    events: { emit: () => {}, on: () => () => {} },
    services: { provide: () => () => {} },
    registerToolSettings: () => () => {},
    log: { info() {}, warn() {}, error() {} },
    getAllTools: () => TOOLS,
  } as unknown as ExtensionAPI;
  classifierGate(api);
  return handler!;
}

export async function gateBench(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "kc-gate-bench-"));
  try {
    const cwd = join(root, "project");
    const agentDir = join(root, "agent");
    mkdirSync(join(cwd, "src"), { recursive: true });
    mkdirSync(agentDir);
    writeFileSync(
      join(agentDir, "tools.json"),
      JSON.stringify({
        "classifier-gate": {
          enabled: true,
          allow: "bash(git status*), bash(git diff*), bash(npm test*), mcp__docs__*",
          ask: "bash(git push*)",
          deny: "bash(rm -rf*), edit(secrets/**)",
        },
      }),
    );
    // The session's own tools.json reader (the host face over the standard store), as a session's ctx has it.
    const { toolSettings } = createSessionFaces({
      ...unused<Omit<HostFaceDeps, "agentDir" | "toolConfig" | "declaredTools">>(),
      agentDir,
      toolConfig: new ToolsConfigFile(),
      declaredTools: () => [
        {
          name: GATE,
          definition: GATE_SETTINGS,
          owner: { id: "builtin:classifier-gate", origin: "builtin", order: 0 },
        },
      ],
      cwd,
      projectTrusted: () => false,
      settingsNow: () => unused(),
    });
    const ctx = {
      cwd,
      agentDir,
      hasUI: false,
      signal: undefined,
      abort() {},
      toolSettings,
    } as unknown as ExtensionContext;
    const handler = gateHandler();
    const cases: [string, string, Record<string, unknown>][] = [
      ["read (annotations)", "read", { path: "src/index.ts" }],
      ["edit in the project", "edit", { path: "src/index.ts", edits: [] }],
      ["bash allowed by rule", "bash", { command: "git status && git diff HEAD" }],
      ["bash denied by rule", "bash", { command: "rm -rf build" }],
      ["write to .git (no UI)", "write", { path: ".git/config", content: "" }],
    ];
    const lines = [
      `classifier gate, rule-only decisions (median of ${ROUNDS} rounds of ${CALLS} calls; target ≤ 200 µs)`,
      `${"call".padEnd(26)}${"µs/call".padStart(10)}`,
    ];
    for (const [label, toolName, input] of cases) {
      const run = async (i: number) => {
        await handler({ toolCallId: `c${i}`, toolName, input }, ctx);
      };
      for (let i = 0; i < 1_000; i++) await run(i);
      const rounds: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        const started = process.hrtime.bigint();
        for (let i = 0; i < CALLS; i++) await run(i);
        rounds.push(Number(process.hrtime.bigint() - started) / 1000 / CALLS);
      }
      lines.push(`${label.padEnd(26)}${median(rounds).toFixed(2).padStart(10)}`);
    }
    console.log(`${lines.join("\n")}\n`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
