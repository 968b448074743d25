/**
 * Extensions written in pi's style, with pi's import specifiers, run unchanged in JSON and RPC mode: the gaps issue
 * 11 names (UI surface no-ops, tool factories with a spawn hook, key helpers and a custom editor class at load,
 * StringEnum, model calls, stdout protection, UI in session_start, /quit ending an RPC process). The extensions are
 * our own, written as a pi user would write them.
 */

import { spawn } from "node:child_process";
import { join } from "node:path";
import { expect } from "chai";
import { cliBin, runCli } from "../helpers/cli.js";
import { useTempDir } from "../helpers/temp-dir.js";

/** The UI surface from session_start: everything a pi extension may call, recorded in a status line. */
const UI_SURFACE = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Text } from "@mariozechner/pi-tui";

export default function (pi: ExtensionAPI) {
	pi.on("session_start", (_event, ctx) => {
		const theme = ctx.ui.theme;
		const styled = theme.fg("accent", "ready") + theme.bold("!");
		ctx.ui.setWorkingIndicator({ frames: ["-", "+"] });
		ctx.ui.setWorkingVisible(false);
		ctx.ui.setHiddenThinkingLabel("thinking...");
		ctx.ui.setFooter((_tui, th) => new Text(th.fg("dim", "footer"), 0, 0));
		ctx.ui.setHeader((_tui, th) => new Text(th.fg("dim", "header"), 0, 0));
		ctx.ui.setEditorComponent(undefined);
		const stop = ctx.ui.onTerminalInput(() => undefined);
		stop();
		ctx.ui.setTheme("dark");
		ctx.ui.setWidget("pi-widget", ["line one"], { placement: "belowEditor" });
		ctx.ui.setTitle("pi-style title");
		ctx.ui.setStatus("pi-status", "hasUI=" + ctx.hasUI + " expanded=" + ctx.ui.getToolsExpanded() + " styled=" + (typeof styled));
		ctx.ui.notify("started in " + ctx.mode, "info");
	});
}
`;

/** A bash tool re-registered through pi's factory with a spawn hook that marks the environment. */
const SPAWN_HOOK = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { createBashTool, createReadTool } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	const cwd = process.cwd();
	const bash = createBashTool(cwd, {
		spawnHook: ({ command, cwd, env }) => ({ command, cwd, env: { ...env, PI_STYLE_HOOK: "hooked" } }),
	});
	pi.registerTool({ ...bash, execute: (id, params, signal, onUpdate) => bash.execute(id, params, signal, onUpdate) });
	const read = createReadTool(cwd);
	pi.registerTool({ ...read, name: "read_again", label: "read again", description: "Reads a file (wrapped)." });
}
`;

/** Terminal-UI helpers and a custom editor class, at load time; a tool that uses them outside a terminal. */
const TUI_BLOCKS = `import { CustomEditor, DynamicBorder, getMarkdownTheme, type ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Container, Key, Markdown, Spacer, Text, fuzzyFilter, matchesKey, truncateToWidth, visibleWidth } from "@mariozechner/pi-tui";
import { StringEnum } from "@mariozechner/pi-ai";
import { Type } from "typebox";

class ShoutingEditor extends CustomEditor {
	handleInput(data: string): void {
		if (matchesKey(data, Key.escape)) return;
		super.handleInput(data.toUpperCase());
	}
}

export default function (pi: ExtensionAPI) {
	pi.on("session_start", (_event, ctx) => {
		ctx.ui.setEditorComponent((tui, theme, kb) => new ShoutingEditor(tui, theme, kb));
	});
	pi.registerTool({
		name: "layout",
		label: "Layout",
		description: "Lays out a few components and reports their widths.",
		parameters: Type.Object({ align: StringEnum(["left", "right"] as const) }),
		async execute(_id, params, _signal, _onUpdate, ctx) {
			const box = new Container();
			box.addChild(new DynamicBorder((s: string) => ctx.ui.theme.fg("border", s)));
			box.addChild(new Text("héllo 世界", 1, 0));
			box.addChild(new Spacer(1));
			box.addChild(new Markdown("# Title\\n\\n- item", 0, 0, getMarkdownTheme()));
			const lines = box.render(20);
			const widest = Math.max(...lines.map((l: string) => visibleWidth(l)));
			const cut = truncateToWidth("abcdefghij", 5);
			const found = fuzzyFilter(["read", "bash", "grep"], "rd", (s: string) => s);
			return {
				content: [{ type: "text", text: JSON.stringify({ align: params.align, widest, cut: visibleWidth(cut), found }) }],
				details: {},
			};
		},
	});
}
`;

/** A model call from a command, the way pi extensions summarise: getApiKeyAndHeaders, then complete(). */
const MODEL_CALL = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { convertToLlm, serializeConversation } from "@mariozechner/pi-coding-agent";
import { complete } from "@mariozechner/pi-ai";

export default function (pi: ExtensionAPI) {
	pi.registerCommand("summary", {
		description: "Summarise the conversation with the current model",
		handler: async (_args, ctx) => {
			const auth = await ctx.modelRegistry.getApiKeyAndHeaders(ctx.model!);
			if (!auth.ok) throw new Error(auth.error);
			const text = serializeConversation(convertToLlm(ctx.sessionManager.getBranch().flatMap((e: any) => (e.type === "message" ? [e.message] : []))));
			const answer = await complete(ctx.model!, { systemPrompt: "Summarise.", messages: [{ role: "user", content: [{ type: "text", text }], timestamp: Date.now() }] }, { apiKey: auth.apiKey, headers: auth.headers });
			const summary = answer.content.filter((c: any) => c.type === "text").map((c: any) => c.text).join("");
			console.log("summary printed to stdout: " + summary);
			ctx.ui.notify("summary: " + summary, "info");
		},
	});
}
`;

/** pi's /quit: ctx.shutdown() from a command. */
const QUIT = `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.registerCommand("quit-now", { description: "Exit cleanly", handler: async (_args, ctx) => ctx.shutdown() });
}
`;

describe("extensions written for pi, unchanged", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-pi-ext-");
  const env = () => ({ KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent"), NO_COLOR: "1" });
  const extensions = () =>
    [
      ["ui-surface.ts", UI_SURFACE],
      ["spawn-hook.ts", SPAWN_HOOK],
      ["tui-blocks.ts", TUI_BLOCKS],
      ["model-call.ts", MODEL_CALL],
      ["quit.ts", QUIT],
    ].flatMap(([name, code]) => ["-e", tmp.write(name!, code!)]);

  it("run in JSON mode: tools from pi's factories, UI calls as no-ops, model calls, stdout kept clean", async () => {
    tmp.write("notes.txt", "pi notes\n");
    const script = tmp.write(
      "script.json",
      JSON.stringify({
        steps: [
          {
            toolCalls: [
              { name: "bash", arguments: { command: "echo hook=$PI_STYLE_HOOK" } },
              { name: "read_again", arguments: { path: "notes.txt" } },
              { name: "layout", arguments: { align: "right" } },
              { name: "layout", arguments: { align: "middle" } },
            ],
          },
          { text: "tools done" },
          { text: "a short summary" },
        ],
      }),
    );
    const result = await runCli(
      [
        "--mode",
        "json",
        "--no-session",
        ...extensions(),
        "--provider",
        "scripted",
        "--script",
        script,
        "go",
        "/summary",
      ],
      { cwd: tmp.path, env: env() },
    );
    expect(result.code, result.stderr).to.equal(0);
    const records = result.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, any>);
    expect(records.filter((r) => r.type === "extension_error")).to.deep.equal([]);
    // Tools run in parallel and may finish in any order; the script's call ids give the order they were made in.
    const ends = records
      .filter((r) => r.type === "tool_execution_end")
      .sort((a, b) => String(a.toolCallId).localeCompare(String(b.toolCallId)));
    const text = (r: Record<string, any>) => r.result.content[0].text as string;
    expect(ends.map((r) => [r.toolName, r.isError])).to.deep.equal([
      ["bash", false],
      ["read_again", false],
      ["layout", false],
      ["layout", true],
    ]);
    expect(text(ends[0]!)).to.contain("hook=hooked");
    expect(text(ends[1]!)).to.contain("pi notes");
    const layout = JSON.parse(text(ends[2]!));
    expect(layout.align).to.equal("right");
    expect(layout.widest).to.be.at.most(20);
    expect(layout.cut).to.be.at.most(5);
    expect(layout.found[0]).to.equal("read");
    expect(text(ends[3]!)).to.match(/Invalid arguments for tool "layout"/);
    // The extension's console.log went to stderr; stdout stayed JSON records only.
    expect(result.stderr).to.contain("summary printed to stdout: a short summary");
  });

  it("run in RPC mode: UI from session_start reaches the client, and /quit-now ends the process", async () => {
    const script = tmp.write("s.json", '{"steps":[]}');
    const child = spawn(
      process.execPath,
      [
        cliBin,
        "--mode",
        "rpc",
        "--no-session",
        ...extensions(),
        "--provider",
        "scripted",
        "--script",
        script,
      ],
      { cwd: tmp.path, env: { ...process.env, ...env() }, stdio: ["pipe", "pipe", "pipe"] },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
    const records = () =>
      stdout
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, any>);
    const waitFor = async (what: string, test: (r: Record<string, any>) => boolean) => {
      for (let i = 0; i < 200; i++) {
        const found = records().find(test);
        if (found) return found;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`no ${what} within 10 s\nstdout: ${stdout}\nstderr: ${stderr}`);
    };
    try {
      child.stdin.write(`${JSON.stringify({ id: "s", type: "get_state" })}\n`);
      await waitFor("get_state response", (r) => r.type === "response" && r.id === "s");
      const ui = records().filter((r) => r.type === "extension_ui_request");
      const status = ui.find((r) => r.method === "setStatus" && r.statusKey === "pi-status");
      expect(status, JSON.stringify(ui)).to.not.equal(undefined);
      expect(status!.statusText).to.match(/^hasUI=true expanded=(true|false) styled=string$/);
      expect(ui.some((r) => r.method === "setTitle" && r.title === "pi-style title")).to.equal(true);
      expect(ui.some((r) => r.method === "notify" && r.message === "started in rpc")).to.equal(true);
      // stdin stays open: only the command can end the process.
      child.stdin.write(`${JSON.stringify({ id: "q", type: "prompt", message: "/quit-now" })}\n`);
      const code = await Promise.race([
        exited,
        new Promise<string>((r) => setTimeout(() => r("still running after 15 s"), 15_000)),
      ]);
      expect(code, stderr).to.equal(0);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
