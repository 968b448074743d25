/**
 * Replacing `builtin:ask-user` and `builtin:tool-settings` (`/tools`) with extensions written on the public API, as
 * docs/swapping-builtins.md describes: an `ask_user` of one's own takes the tool's name and its tools.json row, and a
 * `/tools` of one's own sees the rows every extension declared, masked, through `ctx.toolSettings`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ExtensionAPI, Type } from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { useTempDir } from "../helpers/temp-dir.js";

describe("example: replacing ask_user and /tools", () => {
  const tmp = useTempDir("kc-swap-tools-");
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  /** An ask_user that answers every question with its first option, and declares the ask-user row. */
  function autoAnswer(kc: ExtensionAPI) {
    kc.registerToolSettings("ask-user", {
      description: "ask_user, answered with each question's first option",
      enabledByDefault: true,
    });
    kc.registerTool({
      name: "ask_user",
      description: "Ask the user questions; answered with the first option",
      parameters: Type.Object({
        questions: Type.Array(
          Type.Object({
            id: Type.String(),
            text: Type.String(),
            options: Type.Array(Type.Object({ label: Type.String() })),
          }),
        ),
      }),
      async execute(_id, params) {
        const answers = Object.fromEntries(params.questions.map((q) => [q.id, q.options[0]?.label ?? ""]));
        return { content: [{ type: "text", text: JSON.stringify(answers) }], details: answers };
      },
    });
  }

  it("an ask_user of your own replaces the built-in's tool and tools.json row, with the built-in still on", async () => {
    let api: ExtensionAPI | undefined;
    t = await createTestSession({
      cwd: tmp.path,
      extensions: [
        autoAnswer,
        (kc: ExtensionAPI) => {
          api = kc;
        },
      ],
      script: [
        {
          toolCalls: [
            {
              name: "ask_user",
              arguments: {
                questions: [{ id: "db", text: "Which database?", options: [{ label: "SQLite" }] }],
              },
            },
          ],
        },
        { text: "done" },
      ] as never,
    });
    await t.prompt("go");
    expect(t.dialogs, "the built-in would have asked in a dialog").to.deep.equal([]);
    expect((t.toolCalls()[0]!.result!.content[0] as { text: string }).text).to.equal('{"db":"SQLite"}');
    expect(api!.getAllTools().find((tool) => tool.name === "ask_user")!.owner).to.not.equal(
      "builtin:ask-user",
    );
    await t.prompt("/tools");
    const text = t.ui.notifications.map((n) => n.message).join("\n");
    expect(text).to.contain("ask-user  on  ask_user, answered with each question's first option");
  });

  it("a /tools of your own, with -builtin:tool-settings, lists the declared rows through ctx.toolSettings, masked", async () => {
    const agentDir = join(tmp.path, "agent");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(
      join(agentDir, "tools.json"),
      JSON.stringify({ "classifier-gate": { enabled: true, openaiKey: "sk-secret-value-7777" } }),
    );
    const myTools = (kc: ExtensionAPI) => {
      kc.registerCommand("tools", {
        description: "tools.json, one line per row",
        handler: (_args, ctx) => {
          const rows = ctx.toolSettings
            .list()
            .tools.map((tool) => `${tool.name}=${JSON.stringify(tool.settings)}`);
          ctx.ui.notify(rows.join("\n"), "info");
          return rows;
        },
      });
    };
    t = await createTestSession({
      agentDir,
      cwd: tmp.path,
      settings: { extensions: ["-builtin:tool-settings"] },
      extensions: [myTools],
      script: [] as never,
    });
    await t.prompt("/tools");
    expect(t.ui.notifications.at(-1)!.message.split("\n")).to.deep.equal([
      'classifier-gate={"openaiKey":"****7777"}',
      "ask-user={}",
      "plan-mode={}",
      "websearch={}",
      "webfetch={}",
    ]);
  });
});
