/**
 * The peer's ctx.ui surface over RPC, end to end with the built `knightcode --mode rpc`: what RPC can carry goes out
 * as extension_ui_request records, what only a terminal draws is a silent no-op, the theme returns styled strings,
 * and ui_prompt_start/ui_prompt_end reach extensions without appearing on stdout.
 */

import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { cliBin } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

type Rec = { type: string; id?: string; method?: string; [k: string]: unknown };

function startRpc(
  cwd: string,
  extension: string,
): { child: ChildProcessWithoutNullStreams; records: Rec[]; stderr: () => string } {
  const child = spawn(process.execPath, [cliBin, "--mode", "rpc", "--no-session", "-e", extension], {
    cwd,
    env: { ...process.env, KNIGHTCODE_AGENT_DIR: join(cwd, "agent"), NO_COLOR: "" },
  });
  const records: Rec[] = [];
  let buffer = "";
  let stderr = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (chunk: string) => {
    buffer += chunk;
    for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
      records.push(JSON.parse(buffer.slice(0, i)));
      buffer = buffer.slice(i + 1);
    }
  });
  child.stderr.on("data", (d) => {
    stderr += d;
  });
  return { child, records, stderr: () => stderr };
}

async function waitFor(records: Rec[], predicate: (r: Rec) => boolean, stderr: () => string): Promise<Rec> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const found = records.find(predicate);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`timed out; got ${JSON.stringify(records)}\n${stderr()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const EXTENSION = `
import { Text } from "@knightcodeai/cli/tui";
export default function (kc: any) {
  kc.on("ui_prompt_start", (e: any, ctx: any) => ctx.ui.notify("prompt start " + e.kind + " " + e.title));
  kc.on("ui_prompt_end", (e: any, ctx: any) => ctx.ui.notify("prompt end " + e.kind + " " + e.title));
  kc.registerCommand("surface", { handler: async (_a: string, ctx: any) => {
    const unsubscribe = ctx.ui.onTerminalInput(() => ({ consume: true }));
    unsubscribe();
    ctx.ui.setWorkingVisible(false);
    ctx.ui.setWorkingIndicator({ frames: ["*"] });
    ctx.ui.setHiddenThinkingLabel("hidden");
    ctx.ui.setFooter(() => new Text("footer", 0, 0));
    ctx.ui.setHeader(() => new Text("header", 0, 0));
    ctx.ui.setEditorComponent(() => ({ render: () => [], invalidate() {}, getText: () => "", setText() {}, handleInput() {} }));
    ctx.ui.setToolsExpanded(true);
    ctx.ui.setWidget("panel", (_tui: any, theme: any) => new Text(theme.fg("accent", "drawn"), 0, 0));
    ctx.ui.setWidget("broken", () => { throw new Error("needs a terminal"); });
    ctx.ui.pasteToEditor("pasted text");
    const switched = ctx.ui.setTheme("light");
    const unknown = ctx.ui.setTheme("neon");
    ctx.ui.notify(JSON.stringify({
      styled: ctx.ui.theme.fg("error", "x"),
      bold: ctx.ui.theme.bold("b"),
      themes: ctx.ui.getAllThemes().map((t: any) => t.name),
      theme: ctx.ui.theme.name,
      switched, unknownOk: unknown.success,
      dark: ctx.ui.getTheme("dark")?.name,
      editor: ctx.ui.getEditorComponent() === undefined,
      expanded: ctx.ui.getToolsExpanded(),
    }));
  } });
  kc.registerCommand("ask", { handler: async (_a: string, ctx: any) => {
    const choice = await ctx.ui.select("Pick", ["a", "b"]);
    ctx.ui.notify("chose " + choice);
  } });
}
`;

describe("RPC mode: the extension UI surface", () => {
  const tmp = useTempDir("kc-rpc-ui-");
  let proc: ReturnType<typeof startRpc> | undefined;
  afterEach(() => {
    if (proc && proc.child.exitCode === null) proc.child.kill("SIGKILL");
    proc = undefined;
  });

  async function end(p: ReturnType<typeof startRpc>): Promise<number | null> {
    p.child.stdin.end();
    return new Promise((resolve) => p.child.on("close", resolve));
  }

  it("sends what RPC carries, ignores what only a terminal draws, and themes with ANSI strings", async () => {
    const ext = join(tmp.path, "surface.ts");
    writeFileSync(ext, EXTENSION);
    const p = startRpc(tmp.path, ext);
    proc = p;
    p.child.stdin.write(`${JSON.stringify({ id: "1", type: "prompt", message: "/surface" })}\n`);
    await waitFor(p.records, (r) => r.type === "response" && r.id === "1", p.stderr);
    const ui = p.records.filter((r) => r.type === "extension_ui_request");
    const report = ui.find((r) => r.method === "notify" && String(r.message).startsWith("{"));
    expect(JSON.parse(String(report?.message))).to.deep.equal({
      styled: "\x1b[38;5;160mx\x1b[39m",
      bold: "\x1b[1mb\x1b[22m",
      themes: ["dark", "light"],
      theme: "light",
      switched: { success: true },
      unknownOk: false,
      dark: "dark",
      editor: true,
      expanded: true,
    });
    const panel = ui.find((r) => r.method === "setWidget" && r.widgetKey === "panel");
    expect(panel).to.deep.include({ widgetPlacement: "aboveEditor" });
    // pi-tui's Text pads its lines to the width it is rendered at.
    expect(((panel?.widgetLines ?? []) as string[]).map((line) => line.trimEnd())).to.deep.equal([
      "\x1b[38;5;75mdrawn\x1b[39m",
    ]);
    expect(ui.some((r) => r.widgetKey === "broken")).to.equal(false);
    expect(ui.find((r) => r.method === "notify" && String(r.message).includes("broken"))?.message).to.match(
      /Widget "broken" could not be drawn over RPC: needs a terminal/,
    );
    expect(ui.find((r) => r.method === "set_editor_text")).to.deep.include({ text: "pasted text" });
    // The no-ops send nothing: only the widget, the editor text and the notifications went out.
    expect([...new Set(ui.map((r) => r.method))].sort()).to.deep.equal([
      "notify",
      "setWidget",
      "set_editor_text",
    ]);
    expect(await end(p)).to.equal(0);
  });

  it("fires ui_prompt_start and ui_prompt_end around a dialog, and keeps them off stdout", async () => {
    const ext = join(tmp.path, "ask.ts");
    writeFileSync(ext, EXTENSION);
    const p = startRpc(tmp.path, ext);
    proc = p;
    p.child.stdin.write(`${JSON.stringify({ id: "1", type: "prompt", message: "/ask" })}\n`);
    const select = await waitFor(p.records, (r) => r.method === "select", p.stderr);
    p.child.stdin.write(`${JSON.stringify({ type: "extension_ui_response", id: select.id, value: "b" })}\n`);
    await waitFor(p.records, (r) => r.type === "response" && r.id === "1", p.stderr);
    const sequence = p.records
      .filter((r) => r.method === "select" || r.method === "notify")
      .map((r) => (r.method === "select" ? "dialog" : r.message));
    expect(sequence).to.deep.equal([
      "prompt start select Pick",
      "dialog",
      "prompt end select Pick",
      "chose b",
    ]);
    expect(p.records.filter((r) => r.type.startsWith("ui_prompt"))).to.deep.equal([]);
    expect(await end(p)).to.equal(0);
  });
});
