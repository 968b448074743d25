/**
 * builtin:html-export: `/export` renders a real session (tool calls, a nested call, a compaction entry, a branch
 * point, labels) into one HTML file, which the tests open and read back.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ExtensionAPI } from "@knightcodeai/cli/kit";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { Type } from "@sinclair/typebox";
import { expect } from "chai";

/** Tools, a navigation command and a compaction proposal, all through the public API. */
function fixture(kc: ExtensionAPI): void {
  kc.registerTool({
    name: "echo",
    description: "Returns its text",
    parameters: Type.Object({ text: Type.String() }),
    execute: async (_id, params) => ({ content: [{ type: "text", text: params.text }], details: undefined }),
  });
  kc.registerTool({
    name: "gather",
    description: "Calls echo, then reports",
    parameters: Type.Object({}),
    execute: async (_id, _params, _signal, _update, ctx) => {
      await ctx.executeTool("echo", { text: "nested <b>hello</b>" });
      return {
        content: [{ type: "text", text: "gathered <script>alert('tool')</script>" }],
        details: undefined,
      };
    },
  });
  kc.registerCommand("rewind", {
    handler: async (_args, ctx) => {
      const first = ctx.sessionManager
        .getBranch()
        .find((e) => e.type === "message" && e.message.role === "assistant");
      await ctx.navigateTree(first!.id, { label: "checkpoint <one>" });
    },
  });
  kc.on("turn_end", (event, ctx) => {
    const text = event.message.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    if (!text.startsWith("done")) return undefined;
    const kept = ctx.sessionManager.getBranch().find((e) => e.type === "message")!;
    return {
      entries: [
        {
          type: "compaction",
          summary: "Summary: the user asked <script>alert('summary')</script>",
          firstKeptEntryId: kept.id,
          tokensBefore: 4321,
        },
      ],
    };
  });
}

const steps = [
  { text: "first answer" },
  { text: "abandoned answer" },
  { toolCalls: [{ name: "gather", arguments: {}, id: "call_G" }] },
  { thinking: "pondering <i>", text: "done <script>alert('assistant')</script>" },
];

/** Everything a self-contained page must not have: scripts, and anything fetched from elsewhere. */
function expectSelfContained(html: string): void {
  expect(html).to.not.match(/<script/i);
  // Text may mention a web address; nothing may load one.
  expect(html).to.not.match(/(?:src|href|action)\s*=\s*["']?\s*(?:https?:)?\/\//i);
  expect(html).to.not.match(/<link|@import|url\(|<iframe|<object|<embed/i);
  for (const [, value] of html.matchAll(/\ssrc\s*=\s*"([^"]*)"/gi)) expect(value).to.match(/^data:image\//);
  expect(html).to.contain("default-src 'none'");
}

describe("builtin:html-export", () => {
  let t: TestSession;
  afterEach(async () => {
    await t?.dispose();
  });

  async function conversation(): Promise<void> {
    t = await createTestSession({ script: steps, extensions: [fixture] });
    await t.prompt("first question, see https://example.com/a.png");
    await t.prompt("abandoned path");
    await t.prompt("/rewind");
    await t.prompt("<script>alert('user')</script> second");
  }

  it("writes the active branch with tool calls, nested calls, the compaction summary and the branch point", async () => {
    await conversation();
    const path = join(t.cwd, "out", "report.html");
    let error: unknown;
    await t.prompt("/export out/report.html").catch((e: unknown) => {
      error = e;
    });
    expect(String(error)).to.contain(`the folder ${join(t.cwd, "out")} does not exist`);
    expect(existsSync(path)).to.equal(false);
    mkdirSync(join(t.cwd, "out"));
    await t.prompt("/export out/report.html");
    const html = readFileSync(path, "utf8");

    expect(html).to.match(/^<!doctype html>/);
    expectSelfContained(html);
    // The conversation, escaped.
    expect(html).to.contain("first question, see https://example.com/a.png</pre>");
    expect(html).to.contain("first answer");
    expect(html).to.contain("&lt;script&gt;alert(&#39;user&#39;)&lt;/script&gt; second");
    expect(html).to.contain("done &lt;script&gt;alert(&#39;assistant&#39;)&lt;/script&gt;");
    expect(html).to.contain("pondering &lt;i&gt;");
    // The tool call with its result and its nested call.
    expect(html).to.contain('<span class="tool-name">gather</span>');
    expect(html).to.contain("gathered &lt;script&gt;alert(&#39;tool&#39;)&lt;/script&gt;");
    expect(html).to.contain("1 nested call");
    expect(html).to.contain("<code>echo</code>");
    expect(html).to.contain("nested &lt;b&gt;hello&lt;/b&gt;");
    // The compaction summary.
    expect(html).to.contain("Compaction summary");
    expect(html).to.contain("Summary: the user asked &lt;script&gt;alert(&#39;summary&#39;)&lt;/script&gt;");
    expect(html).to.contain("4321 tokens");
    // The branch point: where, how many, the other branch's first entry; the other branch itself is not shown.
    const branch = t.session.sessionManager.getBranch();
    const forkAt = branch.find((e) => e.type === "message" && e.message.role === "assistant")!;
    expect(html).to.contain(`The session branches after entry ${forkAt.id}: 2 continuations`);
    expect(html).to.contain("user: abandoned path");
    expect(html).to.match(
      /user: &lt;script&gt;alert\(&#39;user&#39;\)&lt;\/script&gt; second <em>\(shown here\)<\/em>/,
    );
    expect(html).to.not.contain("abandoned answer");
    expect(html).to.contain("checkpoint &lt;one&gt;");
    // Said where it went.
    expect(t.ui.notifications.at(-1)).to.deep.equal({
      message: `Exported the session to ${path}`,
      level: "info",
    });
    // Back at the fork, the page ends there.
    await t.prompt("/rewind");
    await t.prompt("/export out/report.html");
    const atFork = readFileSync(path, "utf8");
    expect(atFork).to.contain(
      `The session branches after entry ${forkAt.id}: 2 continuations; this page ends here, the continuations are in the session file.`,
    );
    expect(atFork).to.not.contain("done &lt;script&gt;");
  });

  it("answers the file it wrote as the command result, with the session name as the default file name", async () => {
    t = await createTestSession({ script: [{ text: "hi" }] });
    await t.prompt("hello");
    const unnamed = (await t.session.runCommand("export")) as { path: string };
    expect(unnamed.path).to.equal(join(t.cwd, `${t.session.getState().sessionId}.html`));
    expect(readFileSync(unnamed.path, "utf8")).to.contain("hello");
    t.session.setSessionName("Fix the <login> bug");
    const named = (await t.session.runCommand("export", "")) as { path: string };
    expect(named.path).to.equal(join(t.cwd, "Fix-the-login-bug.html"));
    expect(readFileSync(named.path, "utf8")).to.contain("<title>Fix the &lt;login&gt; bug</title>");
  });

  it("refuses a folder, replaces an existing file whole and leaves no temporary file behind", async () => {
    t = await createTestSession({ script: [{ text: "hi" }] });
    await t.prompt("hello");
    mkdirSync(join(t.cwd, "exports"));
    let error: unknown;
    await t.session.runCommand("export", "exports").catch((e: unknown) => {
      error = e;
    });
    expect(String(error)).to.contain(`${join(t.cwd, "exports")} is a folder`);
    error = undefined;
    await t.session.runCommand("export", "exports/").catch((e: unknown) => {
      error = e;
    });
    expect(String(error)).to.contain("names a folder");
    const file = join(t.cwd, "exports", "s.html");
    writeFileSync(file, "old content");
    await t.session.runCommand("export", '"exports/s.html"');
    expect(readFileSync(file, "utf8")).to.contain("hello").and.not.contain("old content");
    expect(readdirSync(join(t.cwd, "exports"))).to.deep.equal(["s.html"]);
  });

  it("uses renderers that draw to HTML, shows a string rendering as escaped text, and falls back when one throws", async () => {
    t = await createTestSession({
      script: [
        {
          toolCalls: [
            { name: "echo", arguments: { text: "one" }, id: "a" },
            { name: "shout", arguments: { text: "two" }, id: "b" },
          ],
        },
        { text: "ok" },
      ],
      extensions: [
        fixture,
        (kc) => {
          kc.registerTool({
            name: "shout",
            description: "Returns its text",
            parameters: Type.Object({ text: Type.String() }),
            execute: async (_id, p) => ({ content: [{ type: "text", text: p.text }], details: undefined }),
            renderCall: () => {
              throw new Error("broken renderer");
            },
          });
          kc.registerToolRenderer((name, next) =>
            name === "echo"
              ? {
                  renderCall: (args, options) =>
                    options.target === "html"
                      ? { html: `<div class="echo-call">ECHO ${(args as { text: string }).text}</div>` }
                      : "terminal form",
                  renderResult: () => "<script>alert('renderer')</script>\x1b[31mred\x1b[0m",
                }
              : next(),
          );
          kc.registerMessageRenderer("note", (message, options) =>
            options.target === "html"
              ? { html: `<p class="note-html">NOTE ${String(message.content)}</p>` }
              : undefined,
          );
          kc.registerCommand("note", {
            handler: () => kc.sendMessage({ customType: "note", content: "remember", display: true }),
          });
        },
      ],
    });
    await t.prompt("go");
    await t.prompt("/note");
    const { path } = (await t.session.runCommand("export", "r.html")) as { path: string };
    const html = readFileSync(path, "utf8");
    expectSelfContained(html);
    expect(html).to.contain('<div class="echo-call">ECHO one</div>');
    expect(html).to.contain("&lt;script&gt;alert(&#39;renderer&#39;)&lt;/script&gt;red");
    expect(html).to.contain('<span class="tool-name">shout</span>');
    expect(html).to.contain('<p class="note-html">NOTE remember</p>');
    expect(t.logs.map((l) => `${l.extension} ${l.level}: ${l.message}`)).to.include(
      'builtin:html-export warn: renderCall of tool "shout" failed (broken renderer); drawn the default way',
    );
  });

  it("is gone when the built-in is disabled: /export is not a command and runCommand says so", async () => {
    t = await createTestSession({ disableBuiltins: ["builtin:html-export"] });
    expect(t.session.getCommands().map((c) => c.name)).to.not.include("export");
    let error: unknown;
    await t.session.runCommand("export").catch((e: unknown) => {
      error = e;
    });
    expect(error).to.have.property("code", "KC_ERR_NOT_AVAILABLE");
    expect(String(error)).to.contain("No /export command is registered");
  });
});
