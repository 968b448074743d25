/**
 * The full terminal UI, end to end: the built `knightcode` runs in tmux against a local server that speaks the
 * OpenAI Chat Completions wire format, and the tests read the screen. With KC_TUI_SCREENS=<dir> set, the screens
 * docs/interactive.md shows are written there.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { cliBin } from "../../helpers/cli.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { type RecordedRequest, type Responder, type TestServer, writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import {
  DONE,
  finishChunk,
  roleChunk,
  textChunks,
  textStream,
  toolCallStream,
  usageChunk,
} from "../providers/openai-compatible/fixtures.js";
import { fakeXclip, PNG } from "./clipboard-fixture.js";
import { type TmuxDriver, useTerminalAndModel } from "./tmux-driver.js";

/** An answer that streams slowly enough to act while it runs (about `seconds`). */
function slowStream(words: number, delayMs: number) {
  const pieces = Array.from({ length: words }, (_, i) => `word${i} `);
  return {
    events: [roleChunk(), ...textChunks(...pieces), finishChunk("stop"), usageChunk(40, words), DONE],
    delayMs,
  };
}

function lastUserText(request: RecordedRequest): string {
  const users = (request.body.messages as { role: string; content: unknown }[]).filter(
    (m) => m.role === "user",
  );
  return JSON.stringify(users.at(-1)?.content ?? "");
}

describe("interactive terminal UI (tmux, local model server)", function () {
  this.timeout(90_000);
  const tmp = useTempDir("kc-tui-");
  let server: TestServer;
  let term: TmuxDriver;

  useTerminalAndModel((started) => {
    ({ server, term } = started);
  });

  function snap(name: string): void {
    const dir = process.env.KC_TUI_SCREENS;
    if (!dir) return;
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name}.txt`), term.screen().replace(/\n+$/, "\n"));
  }

  function launch(extension?: string, columns = 100, rows = 32, env = ""): void {
    const agentDir = join(tmp.path, "agent");
    writeLocalModels(agentDir, {
      baseUrl: `${server.url}/v1`,
      apiKey: "LOCAL_KEY",
      models: [
        { id: "m1", contextWindow: 32_000, maxTokens: 1024 },
        { id: "m2", contextWindow: 64_000, maxTokens: 1024 },
      ],
    });
    const command = [
      `${env} KNIGHTCODE_AGENT_DIR=${agentDir} LOCAL_KEY=sk-local`,
      process.execPath,
      cliBin,
      ...(extension ? ["-e", extension] : []),
      "--provider local --model m1",
    ].join(" ");
    term.start(command, tmp.path, columns, rows);
  }

  it("streams an answer, folds and expands tool output, attaches @files, runs !commands, reflows on resize", async () => {
    execFileSync("git", ["init", "-q"], { cwd: tmp.path });
    tmp.write(".gitignore", "secret.txt\nagent/\n");
    tmp.write("secret.txt", "hidden\n");
    tmp.write("notes.txt", "NOTE-CONTENT-42\n");
    const ext = tmp.write(
      "lines.ts",
      `import { Type } from "@sinclair/typebox";
       export default (kc: any) => kc.registerTool({
         name: "lines", description: "Ten lines", parameters: Type.Object({ n: Type.Number() }),
         execute: async () => ({ content: [{ type: "text", text: Array.from({ length: 10 }, (_, i) => "row " + (i + 1)).join("\\n") }], details: undefined }),
       });`,
    );
    server.respondInOrder(
      (_req, res) => writeSse(res, toolCallStream("call_1", "lines", { n: 10 })),
      (_req, res) => writeSse(res, textStream("Here is **the list**:\n\n```sh\necho done\n```\n")),
      (_req, res) => writeSse(res, textStream("Read your notes.")),
      (_req, res) => writeSse(res, textStream("Saw the shell output.")),
    );
    launch(ext);
    await term.waitFor("KnightCode");
    await term.waitFor("local/m1");

    term.enter("show me the lines");
    const answered = await term.waitFor("echo done");
    expect(answered).to.contain("● lines");
    expect(answered).to.contain("⎿ row 1");
    expect(answered).to.match(/… 6 more lines \(ctrl\+o expands\)/);
    expect(answered).to.not.contain("row 10");
    snap("tool-folded");
    term.key("C-o");
    const expanded = await term.waitFor("row 10");
    expect(expanded).to.not.contain("more lines");
    term.key("C-o");
    await term.waitForGone("row 10");

    term.type("summarise @secr");
    await new Promise((r) => setTimeout(r, 400));
    expect(term.screen()).to.not.contain("secret.txt");
    term.key("BSpace", "BSpace", "BSpace", "BSpace");
    term.type("note");
    await term.waitFor("→ notes.txt");
    snap("file-attach");
    term.key("Tab");
    await term.waitFor("summarise @notes.txt");
    term.key("Enter");
    await term.waitFor("Read your notes.");
    expect(term.screen()).to.contain("[attached notes.txt]");
    expect(lastUserText(server.requests[2]!)).to.contain("NOTE-CONTENT-42");

    term.enter("!echo shell-$((6*7))");
    await term.waitFor("⎿ shell-42");
    term.enter("!!echo private-$((1+1))");
    await term.waitFor("⎿ private-2");
    term.enter("what did the shell say?");
    await term.waitFor("Saw the shell output.");
    const sent = JSON.stringify(server.requests[3]!.body.messages);
    expect(sent).to.contain("shell-42");
    expect(sent).to.not.contain("private-2");

    term.resize(60, 32);
    // The rule and the footer are drawn in one frame, but a capture may land between two frames.
    const narrow = await term.waitFor(/^─{60}$[\s\S]*local\/m1/m);
    expect(narrow).to.not.match(/^─{61,}$/m);
    term.enter("/quit");
    await term.waitFor("KC-EXIT-0");
  });

  it("leaves finished messages in the terminal's scrollback, each once and in order, also after a resize", async () => {
    const answer = (n: number) =>
      `${Array.from({ length: 12 }, (_, i) => `answer-${n} line ${i + 1}.`).join("\n\n")}\n\nanswer-${n}-end`;
    server.respondInOrder(
      ...[1, 2, 3, 4, 5].map(
        (n): Responder =>
          (_req, res) =>
            writeSse(res, textStream(answer(n))),
      ),
    );
    launch(undefined, 80, 20);
    await term.waitFor("local/m1");
    for (let n = 1; n <= 5; n++) {
      term.enter(`question ${n}`);
      await term.waitFor(`answer-${n}-end`);
    }
    const inOrder = (history: string) => {
      const marks = [1, 2, 3, 4, 5].flatMap((n) => [
        `› question ${n}`,
        `answer-${n} line 1.`,
        `answer-${n}-end`,
      ]);
      for (const mark of marks) expect(history.split(mark).length - 1, mark).to.equal(1);
      const positions = marks.map((mark) => history.indexOf(mark));
      expect(positions).to.deep.equal([...positions].sort((a, b) => a - b));
      expect(history.split("KnightCode").length - 1).to.equal(1);
    };
    // 5 answers of 25 lines on a 20-row terminal: most of it is in the scrollback, not on the screen.
    expect(term.screen()).to.not.contain("question 1");
    inOrder(term.history());
    term.resize(60, 20);
    await term.waitFor(/^─{60}$/m);
    inOrder(term.history());
    term.enter("/quit");
    await term.waitFor("KC-EXIT-0");
  });

  it("attaches an image pasted as a path or taken from the clipboard with ctrl+v; the request carries it", async () => {
    const shot = join(tmp.path, "shot.png");
    writeFileSync(shot, PNG);
    fakeXclip(join(tmp.path, "bin"), shot);
    server.respondInOrder(
      (_req, res) => writeSse(res, textStream("Saw the pasted image.")),
      (_req, res) => writeSse(res, textStream("Saw the clipboard image.")),
    );
    // Wide enough that the saved image's path (in the temp folder, however deep) stays on one line.
    launch(undefined, 200, 32, `PATH=${join(tmp.path, "bin")}:$PATH WAYLAND_DISPLAY=`);
    await term.waitFor("local/m1");
    const dataUrl = `data:image/png;base64,${PNG.toString("base64")}`;
    const imagesSent = (request: RecordedRequest) => {
      const last = (request.body.messages as { role: string; content: unknown }[]).at(-1)!;
      return (last.content as { type: string; image_url?: { url: string } }[])
        .filter((part) => part.type === "image_url")
        .map((part) => part.image_url!.url);
    };

    term.type("what is in ");
    term.paste(shot);
    await term.waitFor("shot.png");
    term.key("Enter");
    await term.waitFor("Saw the pasted image.");
    expect(imagesSent(server.requests[0]!)).to.deep.equal([dataUrl]);

    term.type("and this? ");
    term.key("C-v");
    const typed = await term.waitFor(/knightcode-clipboard-[0-9a-f-]+\.png/);
    snap("image-paste");
    const saved = /\S*knightcode-clipboard-[0-9a-f-]+\.png/.exec(typed)![0];
    term.key("Enter");
    await term.waitFor("Saw the clipboard image.");
    expect(imagesSent(server.requests[1]!)).to.deep.equal([dataUrl]);
    rmSync(saved.startsWith("/") ? saved : join(tmpdir(), saved.slice(saved.indexOf("knightcode-"))), {
      force: true,
    });
    term.enter("/quit");
    await term.waitFor("KC-EXIT-0");
  });

  it("shows extension UI: footer status, widget above the editor, a dialog, a custom overlay", async () => {
    const ext = tmp.write(
      "ui.ts",
      `export default (kc: any) => {
        kc.on("session_start", (_e: any, ctx: any) => {
          ctx.ui.setStatus("demo", "STATUS-OK");
          ctx.ui.setWidget("todo", ["WIDGET: 2 todos"]);
        });
        kc.registerCommand("ask", { description: "ask a question", handler: async (_a: string, ctx: any) => {
          const yes = await ctx.ui.confirm("Deploy now?", "This touches production");
          ctx.ui.notify("answer: " + yes);
        } });
        kc.registerCommand("box", { description: "open a box", handler: async (_a: string, ctx: any) => {
          const result = await ctx.ui.custom((_tui: any, theme: any, _kb: any, done: (r: string) => void) => ({
            render: (w: number) => [theme.fg("accent", "+-- OVERLAY BOX --+"), "| press q to close |", "+-----------------+"],
            handleInput: (data: string) => { if (data === "q") done("closed-by-q"); },
            invalidate() {},
          }), { overlay: true });
          ctx.ui.notify("box: " + result);
        } });
      };`,
    );
    launch(ext);
    const start = await term.waitFor("STATUS-OK");
    const rows = start.split("\n");
    const widget = rows.findIndex((l) => l.includes("WIDGET: 2 todos"));
    const rules = rows.flatMap((l, i) => (/^─{20,}$/.test(l) ? [i] : []));
    const status = rows.findIndex((l) => l.includes("STATUS-OK"));
    // The widget sits above the editor's top rule, the status below its bottom rule, in the footer.
    expect(widget).to.be.greaterThan(-1);
    expect(rules[0]).to.be.greaterThan(widget);
    expect(status).to.be.greaterThan(rules[1]!);
    snap("extension-ui");

    term.enter("/ask");
    await term.waitFor("Deploy now?");
    await term.waitFor("This touches production");
    snap("dialog");
    term.type("y");
    await term.waitFor("answer: true");

    term.enter("/box");
    await term.waitFor("OVERLAY BOX");
    snap("overlay");
    term.type("x");
    expect(term.screen()).to.contain("OVERLAY BOX");
    term.type("q");
    await term.waitFor("box: closed-by-q");
    expect(term.screen()).to.not.contain("OVERLAY BOX");
    term.enter("/quit");
    await term.waitFor("KC-EXIT-0");
  });

  it("gives a pi-style extension the mode's own pi-tui classes: its Editor finds the mode's, and edits in the terminal", async () => {
    const ext = tmp.write(
      "pi-editor.ts",
      `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { Editor } from "@mariozechner/pi-tui";

export default function (pi: ExtensionAPI) {
  pi.registerCommand("which", { description: "find the mode's editor", handler: async (_a, ctx) => {
    const found = await ctx.ui.custom((tui: any, _theme: any, _kb: any, done: (r: string) => void) => {
      const walk = (c: any): any[] => [c, ...(c.children ?? []).flatMap(walk)];
      done(String(walk(tui).filter((c) => c instanceof Editor).length));
      return { render: () => [], invalidate() {} };
    });
    ctx.ui.notify("pi-tui editors in the mode: " + found);
  } });
  pi.registerCommand("pieditor", { description: "use pi-tui's editor", handler: async (_a, ctx) => {
    ctx.ui.setEditorComponent((tui, theme) => new Editor(tui as any, theme));
    ctx.ui.notify("PI EDITOR ON");
  } });
}
`,
    );
    launch(ext);
    await term.waitFor("KnightCode");
    term.enter("/which");
    await term.waitFor("pi-tui editors in the mode: 1");
    term.enter("/pieditor");
    await term.waitFor("PI EDITOR ON");
    term.type("abc def");
    await term.waitFor("abc def");
    // ctrl+w kills a word into pi-tui's kill ring, ctrl+y yanks it back.
    term.key("C-w");
    await term.waitForGone("abc def");
    term.key("C-y");
    await term.waitFor("abc def");
    term.key("C-c");
    term.enter("/quit");
    await term.waitFor("KC-EXIT-0");
  });

  it("stops with Escape, steers while busy, picks a model with /model and moves with /tree, summarising the branch left", async () => {
    const slow = slowStream(60, 100);
    server.respondInOrder(
      (_req, res) => writeSse(res, slow.events, { delayMs: slow.delayMs }),
      (_req, res) => writeSse(res, slow.events, { delayMs: slow.delayMs }),
      (_req, res) => writeSse(res, textStream("Took the steer.")),
      (_req, res) => writeSse(res, textStream("From m2.")),
      (_req, res) => writeSse(res, textStream("BRANCH-SUMMARY-42: asked three questions.")),
    );
    launch();
    await term.waitFor("local/m1");

    term.enter("first question");
    await term.waitFor("word3");
    await term.waitFor("esc stops");
    term.key("Escape");
    await term.waitFor("(stopped)");
    await term.waitForGone("esc stops)");

    term.enter("second question");
    // The second answer has started once word0 shows twice (the first answer shows it too).
    await term.waitFor(/word0[\s\S]*word0/);
    term.enter("also consider this");
    await term.waitFor("↳ steer: also consider this");
    snap("steer");
    await term.waitFor("Took the steer.", 30_000);
    expect(lastUserText(server.requests[2]!)).to.contain("also consider this");

    term.enter("/model");
    await term.waitFor("→ local/m1");
    term.type("m2");
    await term.waitFor("→ local/m2");
    snap("model-picker");
    term.key("Enter");
    await term.waitFor("Model: local/m2");
    term.enter("which model?");
    await term.waitFor("From m2.");
    expect(server.requests[3]!.body.model).to.equal("m2");

    term.enter("/tree");
    await term.waitFor("Continue from which entry?");
    await term.waitFor("← active");
    snap("tree");
    // The first entry is the first question: Home is not a list key, so go up past the top, which wraps.
    expect(term.screen()).to.contain("user: first question");
    for (let i = 0; i < 20; i++) {
      const selected = term
        .screen()
        .split("\n")
        .find((l) => l.startsWith("→"));
      if (selected?.includes("user: first question")) break;
      term.key("Up");
      await new Promise((r) => setTimeout(r, 60));
    }
    term.key("Enter");
    await term.waitFor("Summarize the branch you leave?");
    snap("tree-summary");
    term.key("Down");
    await term.waitFor("→ Summarize");
    term.key("Enter");
    await term.waitFor(/Navigated to just before [0-9a-f]{8} "user: first question"/);
    expect(term.screen().replace(/\n\s*/g, " ")).to.contain("the branch you left was summarised");
    const moved = term.screen();
    expect(moved).to.contain("Summary of the branch left: BRANCH-SUMMARY-42");
    expect(moved).to.not.contain("From m2.");
    // The summary request carried the branch being left.
    expect(JSON.stringify(server.requests[4]!.body.messages)).to.contain("which model?");
    // The message returns to the editor to edit and send again.
    expect(moved).to.match(/^ first question\s*$/m);
    term.key("C-c");
    term.enter("/quit");
    await term.waitFor("KC-EXIT-0");
  });
});
