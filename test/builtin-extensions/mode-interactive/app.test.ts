/**
 * The terminal UI's behaviour in-process: a real session (scripted provider) drawn by the mode's App on a
 * terminal that keeps what it is sent and takes key data from the test. Keys, keybindings.json, extension
 * shortcuts, the editor, header and footer extensions install, custom message renderers, themes.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { createTestSession, type TestSession, type TestSessionOptions } from "@knightcodeai/cli/testing";
import { CustomEditor, resetCapabilitiesCache, setCapabilities, stripAnsi } from "@knightcodeai/cli/tui";
import { type Terminal, visibleWidth } from "@mariozechner/pi-tui";
import { expect } from "chai";
import { App } from "../../../builtin-extensions/mode-interactive/app.js";

class KeyTerminal implements Terminal {
  private onInput: (data: string) => void = () => {};
  readonly columns = 80;
  readonly rows = 30;
  title = "";
  start(onInput: (data: string) => void): void {
    this.onInput = onInput;
  }
  press(...keys: string[]): void {
    for (const key of keys) this.onInput(key);
  }
  stop(): void {}
  async drainInput(): Promise<void> {}
  write(): void {}
  get kittyProtocolActive(): boolean {
    return false;
  }
  moveBy(): void {}
  hideCursor(): void {}
  showCursor(): void {}
  clearLine(): void {}
  clearFromCursor(): void {}
  clearScreen(): void {}
  setTitle(title: string): void {
    this.title = title;
  }
  setProgress(): void {}
}

const CTRL_O = "\x0f";
const CTRL_X = "\x18";
const DOWN = "\x1b[B";
const UP = "\x1b[A";

describe("interactive terminal UI (in-process)", () => {
  const sessions: TestSession[] = [];
  const open = async (options: TestSessionOptions): Promise<TestSession> => {
    const t = await createTestSession(options);
    sessions.push(t);
    return t;
  };
  const apps: App[] = [];
  const folders: string[] = [];
  afterEach(async () => {
    for (const t of sessions.splice(0)) await t.dispose();
    for (const app of apps.splice(0)) app.stop();
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });

  function mount(h: TestSession): {
    app: App;
    term: KeyTerminal;
    screen(): string;
    shows(text: string): Promise<void>;
  } {
    const term = new KeyTerminal();
    const app = new App(h.session, term, {}, h.session.host);
    apps.push(app);
    h.session.setUI(app.ui, true);
    h.session.subscribe((event) => app.onEvent(event));
    // Wrapped lines joined again, so a sentence can be found wherever the terminal broke it.
    const screen = () => stripAnsi(app.tui.render(term.columns).join("\n")).replace(/\n\s*/g, " ");
    /** Waits (at most 10 s) until the screen shows `text`, for what happens after an await. */
    const shows = async (text: string) => {
      const deadline = Date.now() + 10_000;
      while (!screen().includes(text)) {
        if (Date.now() > deadline) throw new Error(`"${text}" did not appear:\n${screen()}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    return { app, term, screen, shows };
  }

  it("reads keybindings.json: a rebound key works, unknown names and keys bound twice are reported", async () => {
    const h = await open({ script: [] });
    mkdirSync(h.agentDir, { recursive: true });
    writeFileSync(
      join(h.agentDir, "keybindings.json"),
      JSON.stringify({
        "app.tools.expand": "ctrl+x",
        "app.thinking.toggle": "ctrl+x",
        "app.nothing": "ctrl+y",
      }),
    );
    const { app, term, screen } = mount(h);
    expect(screen()).to.contain('"app.nothing" is not a key binding');
    expect(screen()).to.match(/key ctrl\+x is bound to app\.tools\.expand and app\.thinking\.toggle/);
    term.press(CTRL_X);
    expect(app.toolsExpanded).to.equal(true);
    expect(app.showThinking).to.equal(false);
    term.press(CTRL_O);
    expect(app.toolsExpanded, "ctrl+o no longer expands").to.equal(true);
  });

  it("runs registerShortcut handlers; a shortcut on a key the app uses is reported and left inactive", async () => {
    const ran: string[] = [];
    const h = await open({
      script: [],
      extensions: [
        (kc) => {
          kc.registerShortcut("ctrl+x", {
            description: "say G",
            handler: (ctx) => {
              ran.push("g");
              ctx.ui.setStatus("g", "G-PRESSED");
            },
          });
          kc.registerShortcut("ctrl+o", { handler: () => void ran.push("o") });
        },
      ],
    });
    const { app, term, screen } = mount(h);
    app.checkShortcuts();
    expect(screen()).to.match(/shortcut ctrl\+o is already bound to .*app\.tools\.expand/);
    term.press(CTRL_X);
    await new Promise((r) => setTimeout(r, 20));
    expect(ran).to.deep.equal(["g"]);
    expect(screen()).to.contain("G-PRESSED");
    term.press(CTRL_O);
    expect(ran).to.deep.equal(["g"]);
    expect(app.toolsExpanded).to.equal(true);
  });

  it("puts an extension's editor in place with the text typed so far, and its header and footer", async () => {
    const h = await open({ script: [] });
    const { app, term, screen } = mount(h);
    term.press(..."draft");
    const ui = app.ui;
    ui.setEditorComponent((tui, theme, keys) => {
      const editor = new CustomEditor(tui, theme, keys);
      editor.borderColor = (s) => `[${s.length}]`;
      return editor;
    });
    expect(app.editor).to.not.equal(app.defaultEditor);
    expect(ui.getEditorText()).to.equal("draft");
    term.press("!");
    expect(ui.getEditorText()).to.equal("draft!");
    // pi-tui's Editor draws its rules a "─" at a time through borderColor.
    expect(screen()).to.contain("[1][1][1]");
    ui.setHeader((_tui, theme) => ({ render: () => [theme.bold("MY HEADER")], invalidate() {} }));
    ui.setFooter((_tui, _theme, data) => ({
      render: () => [`MY FOOTER ${[...data.getExtensionStatuses().values()].join(",")}`],
      invalidate() {},
    }));
    ui.setStatus("x", "s1");
    expect(screen()).to.contain("MY HEADER");
    expect(screen()).to.contain("MY FOOTER s1");
    expect(screen()).to.not.contain("KnightCode");
    ui.setHeader(undefined);
    ui.setFooter(undefined);
    ui.setEditorComponent(undefined);
    expect(screen()).to.contain("KnightCode");
    expect(screen()).to.not.contain("MY FOOTER");
    expect(app.editor).to.equal(app.defaultEditor);
    expect(ui.getEditorText()).to.equal("draft!");
  });

  it("draws custom messages with their renderer and keeps over-wide lines inside the terminal", async () => {
    const h = await open({
      script: [],
      extensions: [
        (kc) => {
          kc.registerMessageRenderer(
            "note",
            (message) => `NOTE>> ${String(message.content)} ${"=".repeat(200)}`,
          );
        },
      ],
    });
    const { app, screen, term } = mount(h);
    app.onEvent({
      type: "message_start",
      message: { role: "custom", customType: "note", content: "hello", display: true, timestamp: 0 },
    });
    const shown = screen();
    expect(shown).to.contain("NOTE>> hello");
    for (const line of app.tui.render(term.columns)) expect(visibleWidth(line)).to.be.at.most(80);
  });

  it("switches themes by name and reports an unknown one", async () => {
    const h = await open({ script: [] });
    const { app, term } = mount(h);
    expect(app.ui.setTheme("light")).to.deep.equal({ success: true });
    expect(app.ui.theme.name).to.equal("light");
    const wrong = app.ui.setTheme("neon");
    expect(wrong.success).to.equal(false);
    expect(wrong.error).to.contain('Unknown theme "neon"');
    app.ui.setTitle("my title");
    expect(term.title).to.equal("my title");
  });
  it("folds thinking to one line and shows it with ctrl+t", async () => {
    const h = await open({ script: [] });
    const { app, term, screen } = mount(h);
    app.onEvent({ type: "message_start", message: { role: "assistant", content: [] } });
    for (const [type, delta] of [
      ["thinking_delta", "weighing the options carefully"],
      ["text_delta", "The answer."],
    ] as const)
      app.onEvent({
        type: "message_update",
        assistantMessageEvent: { type, contentIndex: type === "thinking_delta" ? 0 : 1, delta },
      });
    expect(screen()).to.contain("Thinking… (ctrl+t shows it)");
    expect(screen()).to.not.contain("weighing the options");
    app.ui.setHiddenThinkingLabel("Pondering");
    expect(screen()).to.contain("Pondering (ctrl+t shows it)");
    term.press("\x14");
    expect(screen()).to.contain("weighing the options carefully");
    expect(screen()).to.contain("The answer.");
  });

  it("draws tool calls with the renderers a registerToolRenderer resolver picks", async () => {
    const h = await open({
      script: [],
      extensions: [
        (kc) => {
          kc.registerToolRenderer((name, next) =>
            name === "deploy"
              ? {
                  renderCall: (args) => `DEPLOY to ${(args as { env: string }).env}`,
                  renderResult: (_result, options) => (options.expanded ? "all 3 steps ok" : "ok"),
                }
              : next(),
          );
        },
      ],
    });
    const { app, term, screen } = mount(h);
    app.onEvent({
      type: "tool_execution_start",
      toolCallId: "c1",
      toolName: "deploy",
      args: { env: "staging" },
    });
    expect(screen()).to.contain("● DEPLOY to staging");
    app.onEvent({
      type: "tool_execution_end",
      toolCallId: "c1",
      toolName: "deploy",
      result: { content: [{ type: "text", text: "raw output" }] },
      isError: false,
    });
    expect(screen()).to.contain("⎿ ok");
    expect(screen()).to.not.contain("raw output");
    term.press(CTRL_O);
    expect(screen()).to.contain("⎿ all 3 steps ok");
  });

  it("draws a message's and a tool result's image with the terminal's protocol (terminal.showImages), or names it when off or unsupported", async () => {
    const png =
      "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    const result = {
      content: [
        { type: "text" as const, text: "Read image file shot.png" },
        { type: "image" as const, data: png, mimeType: "image/png" },
      ],
    };
    const draw = async (settings: Record<string, unknown>, images: "kitty" | null): Promise<string> => {
      setCapabilities({ images, trueColor: true, hyperlinks: false });
      const h = await open({ script: [] });
      const term = new KeyTerminal();
      const app = new App(h.session, term, settings, h.session.host);
      apps.push(app);
      app.onEvent({
        type: "message_start",
        message: {
          role: "user",
          content: [
            { type: "text", text: "look" },
            { type: "image", data: png, mimeType: "image/png" },
          ],
          timestamp: Date.now(),
        },
      });
      app.onEvent({
        type: "tool_execution_start",
        toolCallId: "c1",
        toolName: "read",
        args: { path: "shot.png" },
      });
      app.onEvent({ type: "tool_execution_end", toolCallId: "c1", toolName: "read", result, isError: false });
      return app.tui.render(term.columns).join("\n");
    };
    try {
      const drawn = await draw({}, "kitty");
      expect(
        drawn.split("\x1b_G").length - 1,
        "a kitty image under the message and one in the result",
      ).to.equal(2);
      expect(drawn).to.contain(png.slice(0, 40));
      const off = await draw({ terminal: { showImages: false } }, "kitty");
      expect(off).to.not.contain("\x1b_G");
      expect(stripAnsi(off)).to.contain("[image image/png 1x1]");
      const unsupported = await draw({}, null);
      expect(unsupported).to.not.contain("\x1b_G");
      expect(stripAnsi(unsupported)).to.contain("[image image/png 1x1]");
    } finally {
      resetCapabilitiesCache();
    }
  });

  it("two escapes read at once on an empty editor run doubleEscapeAction: /tree, /fork, or nothing", async () => {
    const outcome = async (settings: Record<string, unknown>, typed = ""): Promise<string> => {
      const h = await open({ script: [] });
      const term = new KeyTerminal();
      const app = new App(h.session, term, settings, h.session.host);
      apps.push(app);
      if (typed) term.press(typed);
      term.press("\x1b\x1b");
      await new Promise((r) => setImmediate(r));
      return stripAnsi(app.tui.render(term.columns).join("\n"));
    };
    expect(await outcome({})).to.contain("The session is empty");
    const fork = await outcome({ doubleEscapeAction: "fork" });
    expect(fork).to.contain("Nothing to fork from yet");
    expect(fork).to.not.contain("The session is empty");
    const none = await outcome({ doubleEscapeAction: "none" });
    expect(none).to.not.contain("The session is empty");
    expect(none).to.not.contain("Nothing to fork from yet");
    expect(await outcome({}, "draft")).to.not.contain("The session is empty");
  });

  it("two escapes pressed apart run doubleEscapeAction within half a second of each other, and nothing later", async () => {
    const outcome = async (gapMs: number): Promise<string> => {
      const h = await open({ script: [] });
      const term = new KeyTerminal();
      const app = new App(h.session, term, {}, h.session.host);
      apps.push(app);
      term.press("\x1b");
      await new Promise((r) => setTimeout(r, gapMs));
      expect(stripAnsi(app.tui.render(term.columns).join("\n"))).to.not.contain("The session is empty");
      term.press("\x1b");
      await new Promise((r) => setImmediate(r));
      return stripAnsi(app.tui.render(term.columns).join("\n"));
    };
    expect(await outcome(50)).to.contain("The session is empty");
    expect(await outcome(700)).to.not.contain("The session is empty");
  });

  it("stops a running !command with Escape", async () => {
    const h = await open({ script: [] });
    const { term, shows } = mount(h);
    term.press(..."!echo started; sleep 20", "\r");
    await shows("⎿ started");
    term.press("\x1b");
    await shows("(stopped)");
  });

  it("queues a follow-up with alt+enter while busy, shows the working message, folds a large paste, draws custom entries and fills the footer", async () => {
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // A folder with a name of its own, which the footer must show.
    const cwd = mkdtempSync(join(tmpdir(), "kc-app-footer-"));
    folders.push(cwd);
    const h = await open({
      cwd,
      script: [
        async () => {
          await gate;
          return { text: "First answer." };
        },
        { text: "Follow-up answer." },
      ],
      extensions: [
        (kc) => {
          kc.registerEntryRenderer("mark", (entry) => `MARK ${JSON.stringify(entry.data)}`);
          kc.registerCommand("mark", { handler: async () => kc.appendEntry("mark", { n: 7 }) });
        },
      ],
    });
    const { app, term, screen, shows } = mount(h);
    term.press(..."start", "\r");
    await shows("Working…");
    app.ui.setWorkingMessage("Reading the repo");
    await shows("Reading the repo");
    term.press(..."then this", "\x1b\r");
    await shows("↳ follow-up: then this");
    expect(app.editor.getText()).to.equal("");
    release();
    await shows("Follow-up answer.");
    const shown = screen();
    expect(shown.indexOf("First answer.")).to.be.lessThan(shown.indexOf("› then this"));
    expect(shown).to.not.contain("↳ follow-up");
    expect(
      h.eventsOfType("message_start").filter((e) => (e.message as { role: string }).role === "user"),
    ).to.have.length(2);

    const pasted = Array.from({ length: 30 }, (_, i) => `pasted line ${i}`).join("\n");
    term.press(`\x1b[200~${pasted}\x1b[201~`);
    expect(screen()).to.match(/\[paste #1 \+30 lines\]/);
    expect(app.defaultEditor.getExpandedText()).to.contain("pasted line 29");
    app.editor.setText("");

    await app.submit("/mark");
    await shows('MARK {"n":7}');
    // The footer: the folder, tokens, context use, the model and its thinking level; no cost for a model
    // without prices.
    expect(shown).to.match(/↑[\d.]+k? ↓[\d.]+k? [\d.]+%\/200k/);
    expect(shown).to.not.contain("$0.000");
    expect(shown).to.contain("scripted/scripted • off");
    expect(shown).to.contain(basename(cwd));
  });

  it("/new starts an empty session, /resume shows an earlier one, /fork puts the message back in the editor", async () => {
    const h = await open({
      persist: true,
      // Each session numbers its requests from the first: the answer follows the question instead.
      script: Array.from({ length: 4 }, () => (request: { messages: { content: unknown }[] }) => ({
        text: JSON.stringify(request.messages.at(-1)?.content).includes("alpha")
          ? "Alpha answer."
          : "Beta answer.",
      })),
    });
    const { app, term, screen, shows } = mount(h);
    await app.submit("alpha question");
    await shows("Alpha answer.");
    const alpha = h.session.getState().sessionId;

    await app.submit("/new");
    await shows("New session");
    expect(screen()).to.not.contain("Alpha answer.");
    expect(h.session.getState().sessionId).to.not.equal(alpha);
    await app.submit("beta question");
    await shows("Beta answer.");

    const resumed = app.submit("/resume");
    await shows("Resume which session?");
    expect(screen()).to.contain("alpha question");
    term.press("\r");
    await resumed;
    expect(h.session.getState().sessionId).to.equal(alpha);
    expect(screen()).to.contain("Alpha answer.");
    expect(screen()).to.not.contain("Beta answer.");

    const forked = app.submit("/fork");
    await shows("Fork from which message?");
    term.press("\r");
    await forked;
    await shows("Forked: a new session up to that message");
    expect(h.session.getState().sessionId).to.not.equal(alpha);
    expect(app.editor.getText()).to.equal("alpha question");
    expect(screen()).to.not.contain("Alpha answer.");
  });

  it("/label labels the current entry, which /tree shows; /thinking sets the level; /hotkeys lists the keys", async () => {
    const h = await open({ script: [{ text: "Labelled answer." }] });
    const { app, term, screen, shows } = mount(h);
    await app.submit("a question");
    await shows("Labelled answer.");
    await app.submit("/label checkpoint-one");
    await shows('"checkpoint-one"');
    const tree = app.submit("/tree");
    await shows("Continue from which entry?");
    expect(screen()).to.match(/assistant: Labelled answer\. \[checkpoint-one\]\s+← active/);
    term.press("\x1b");
    await tree;

    const thinking = app.submit("/thinking");
    await shows("Thinking level");
    term.press(DOWN, DOWN, "\r");
    await thinking;
    expect(h.session.getThinkingLevel()).to.not.equal("off");
    await shows(`Thinking: ${h.session.getThinkingLevel()}`);

    await app.submit("/hotkeys");
    await shows("ctrl+v");
    expect(screen()).to.contain(
      "Paste an image from the clipboard (types its saved path) (app.clipboard.pasteImage)",
    );
    expect(screen()).to.contain("keybindings.json");
  });

  it("/settings applies each choice and saves it in settings.json, which the next start reads", async () => {
    const h = await open({ script: [] });
    const agentDir = h.agentDir;
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ retry: { maxRetries: 1 } }));
    const { app, term, shows } = mount(h);
    const tick = () => new Promise((r) => setTimeout(r, 20));
    const done = app.submit("/settings");
    await shows("Show thinking");
    term.press(DOWN, "\r");
    await tick();
    expect(app.showThinking).to.equal(true);
    // The list opens again on the setting just changed.
    term.press(DOWN, "\r");
    await tick();
    expect(app.toolsExpanded).to.equal(true);
    term.press(UP, UP, "\r");
    await shows("light");
    term.press(DOWN, "\r");
    await tick();
    expect(app.ui.theme.name).to.equal("light");
    term.press("\x1b");
    await done;
    const saved = JSON.parse(readFileSync(join(agentDir, "settings.json"), "utf8"));
    expect(saved).to.deep.equal({
      retry: { maxRetries: 1 },
      hideThinkingBlock: false,
      expandToolOutput: true,
      theme: "light",
    });
    const next = new App(h.session, new KeyTerminal(), saved);
    apps.push(next);
    expect(next.showThinking).to.equal(true);
    expect(next.toolsExpanded).to.equal(true);
  });

  it("/settings leaves a settings.json that is not valid JSON as it is and says why", async () => {
    const h = await open({ script: [] });
    const agentDir = h.agentDir;
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(join(agentDir, "settings.json"), "{ not json");
    const { app, term, shows } = mount(h);
    const done = app.submit("/settings");
    await shows("Expand tool output");
    term.press(DOWN, DOWN, "\r");
    await shows("Not saved");
    expect(app.toolsExpanded, "the choice still applies to this session").to.equal(true);
    term.press("\x1b");
    await done;
    expect(readFileSync(join(agentDir, "settings.json"), "utf8")).to.equal("{ not json");
  });

  it("/trust saves the decision in trust.json and loads the project's extensions now, or leaves them out", async () => {
    const h = await open({ script: [], approve: "ask" });
    mkdirSync(join(h.cwd, ".knightcode", "extensions"), { recursive: true });
    writeFileSync(
      join(h.cwd, ".knightcode", "extensions", "hello.ts"),
      `export default (kc: any) => kc.registerCommand("hello", {
        description: "from the project",
        handler: async (_args: string, ctx: any) => ctx.ui.notify("HELLO-FROM-PROJECT"),
      });`,
    );
    const { app, term, shows } = mount(h);
    const commands = () => h.session.getCommands().map((c) => c.name);
    await app.submit("/reload");
    expect(commands(), "an untrusted project's extension stays out of a reload").to.not.include("hello");

    let done = app.submit("/trust");
    await shows("Trust and remember");
    term.press("\r");
    await done;
    const saved = JSON.parse(readFileSync(join(h.agentDir, "trust.json"), "utf8"));
    expect(saved.decisions[h.cwd]).to.include({ trusted: true });
    await shows("its own resources are loaded");
    expect(commands()).to.include("hello");
    await app.submit("/hello");
    await shows("HELLO-FROM-PROJECT");

    done = app.submit("/trust");
    await shows("Do not trust, and remember");
    term.press(DOWN, "\r");
    await done;
    await shows("its own resources are left out");
    expect(commands()).to.not.include("hello");
  });
});
