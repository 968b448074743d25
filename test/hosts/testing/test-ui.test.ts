/** The test kit's ctx.ui: every method of the peer's UI surface works and is recorded for assertions. */

import type { EditorFactory, ExtensionAPI, ExtensionContext } from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { CustomEditor, Text } from "@knightcodeai/cli/tui";
import { expect } from "chai";

describe("the test kit's ctx.ui", () => {
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  async function run(body: (ctx: ExtensionContext) => void | Promise<void>): Promise<TestSession> {
    t = await createTestSession({
      extensions: [
        (kc: ExtensionAPI) => kc.registerCommand("probe", { handler: async (_a, ctx) => body(ctx) }),
      ],
    });
    await t.prompt("/probe");
    return t;
  }

  it("records the working row, thinking label, title, tools expansion and editor text", async () => {
    const session = await run((ctx) => {
      ctx.ui.setWorkingMessage("Thinking hard");
      ctx.ui.setWorkingVisible(false);
      ctx.ui.setWorkingIndicator({ frames: ["●"], intervalMs: 100 });
      ctx.ui.setHiddenThinkingLabel("pondering");
      ctx.ui.setTitle("Build");
      ctx.ui.setToolsExpanded(true);
      ctx.ui.setEditorText("draft ");
      ctx.ui.pasteToEditor("pasted");
      ctx.ui.notify(`expanded ${ctx.ui.getToolsExpanded()} text ${ctx.ui.getEditorText()}`);
    });
    const { ui } = session;
    expect(ui.workingMessage).to.equal("Thinking hard");
    expect(ui.workingVisible).to.equal(false);
    expect(ui.workingIndicator).to.deep.equal({ frames: ["●"], intervalMs: 100 });
    expect(ui.hiddenThinkingLabel).to.equal("pondering");
    expect(ui.title).to.equal("Build");
    expect(ui.notifications[0]!.message).to.equal("expanded true text draft pasted");
    expect(ui.calls.map((c) => c.method).slice(0, 4)).to.deep.equal([
      "setWorkingMessage",
      "setWorkingVisible",
      "setWorkingIndicator",
      "setHiddenThinkingLabel",
    ]);
  });

  it("renders component widgets, headers and footers (with the statuses) into lines", async () => {
    const session = await run((ctx) => {
      ctx.ui.setStatus("git", "main");
      ctx.ui.setWidget("lines", ["a", "b"]);
      ctx.ui.setWidget("box", (_tui, theme) => new Text(theme.bold("inside"), 0, 0));
      ctx.ui.setHeader(() => new Text("HEADER", 0, 0));
      ctx.ui.setFooter(
        (_tui, _theme, data) => new Text(`status: ${data.getExtensionStatuses().get("git")}`, 0, 0),
      );
    });
    expect(session.ui.widgets.get("lines")).to.deep.equal(["a", "b"]);
    // pi-tui's Text pads its lines to the width.
    const trimmed = (lines: string[] | undefined) => lines?.map((line) => line.trimEnd());
    expect(trimmed(session.ui.widgets.get("box"))).to.deep.equal(["\x1b[1minside\x1b[22m"]);
    expect(trimmed(session.ui.header)).to.deep.equal(["HEADER"]);
    expect(trimmed(session.ui.footer)).to.deep.equal(["status: main"]);
  });

  it("keeps the editor component, feeds terminal input to listeners until they unsubscribe", async () => {
    const seen: string[] = [];
    let unsubscribe = () => {};
    const factory: EditorFactory = (tui, theme, keys) => new CustomEditor(tui, theme, keys);
    const session = await run((ctx) => {
      ctx.ui.setEditorComponent(factory);
      if (ctx.ui.getEditorComponent() !== factory) throw new Error("editor component not kept");
      unsubscribe = ctx.ui.onTerminalInput((data) => {
        seen.push(data);
        return data === "x" ? { consume: true } : { data: data.toUpperCase() };
      });
    });
    expect(session.ui.editorComponent).to.equal(factory);
    expect(session.ui.terminalInput("x")).to.equal(undefined);
    expect(session.ui.terminalInput("y")).to.equal("Y");
    unsubscribe();
    expect(session.ui.terminalInput("z")).to.equal("z");
    expect(seen).to.deep.equal(["x", "y"]);
  });

  it("gives a colour theme and switches themes by name", async () => {
    const results: unknown[] = [];
    await run((ctx) => {
      results.push(
        ctx.ui.theme.fg("accent", "a"),
        ctx.ui.getAllThemes().map((th) => th.name),
      );
      results.push(ctx.ui.setTheme("light"), ctx.ui.theme.name, ctx.ui.setTheme("neon").success);
      results.push(ctx.ui.getTheme("dark")?.name, ctx.ui.getTheme("neon"));
    });
    expect(results[0]).to.equal("\u001b[38;5;75ma\u001b[39m");
    expect(results.slice(1)).to.deep.equal([
      ["dark", "light"],
      { success: true },
      "light",
      false,
      "dark",
      undefined,
    ]);
  });
});

describe("ui_prompt_start and ui_prompt_end", () => {
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it("fire around each dialog with its kind and title, the end after the answer is in", async () => {
    const order: string[] = [];
    t = await createTestSession({
      extensions: [
        (kc: ExtensionAPI) => {
          kc.on("ui_prompt_start", (e) => {
            order.push(`start ${e.kind} ${e.title}`);
          });
          kc.on("ui_prompt_end", (e) => {
            order.push(`end ${e.kind} ${e.title}`);
          });
          kc.registerCommand("ask", {
            handler: async (_a, ctx) => {
              order.push(`picked ${await ctx.ui.select("Colour?", ["red", "blue"])}`);
              order.push(`sure ${await ctx.ui.confirm("Sure?", "really")}`);
              await ctx.ui.input("Name?");
              await ctx.ui.editor("Notes", "x");
              ctx.ui.notify("not a dialog");
            },
          });
        },
      ],
    });
    t.answerDialogs("blue", true, "Ann", "text");
    await t.prompt("/ask");
    expect(order).to.deep.equal([
      "start select Colour?",
      "end select Colour?",
      "picked blue",
      "start confirm Sure?",
      "end confirm Sure?",
      "sure true",
      "start input Name?",
      "end input Name?",
      "start editor Notes",
      "end editor Notes",
    ]);
  });

  it("do not fire again for a dialog opened from their own handler", async () => {
    const order: string[] = [];
    t = await createTestSession({
      extensions: [
        (kc: ExtensionAPI) => {
          kc.on("ui_prompt_start", async (e, ctx) => {
            order.push(`start ${e.title}`);
            if (e.title === "Outer") order.push(`inner ${await ctx.ui.confirm("Inner")}`);
          });
          kc.on("ui_prompt_end", (e) => {
            order.push(`end ${e.title}`);
          });
          kc.registerCommand("ask", {
            handler: async (_a, ctx) => {
              await ctx.ui.confirm("Outer");
            },
          });
        },
      ],
    });
    t.answerDialogs(true, false);
    await t.prompt("/ask");
    expect(order).to.deep.equal(["start Outer", "inner true", "end Outer"]);
    expect(t.dialogs).to.deep.equal(["confirm: Inner", "confirm: Outer"]);
  });

  it("stay in-process: the session's wire events carry no ui_prompt record", async () => {
    let seen = 0;
    t = await createTestSession({
      extensions: [
        (kc: ExtensionAPI) => {
          kc.on("ui_prompt_start", () => {
            seen++;
          });
          kc.registerCommand("ask", { handler: async (_a, ctx) => void (await ctx.ui.confirm("Go?")) });
        },
      ],
    });
    await t.prompt("/ask");
    expect(seen).to.equal(1);
    expect(t.events.filter((e) => e.type.startsWith("ui_prompt"))).to.deep.equal([]);
  });
});
