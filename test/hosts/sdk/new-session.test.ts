/**
 * `ctx.newSession()` options (regression: `setup` and `preserveModel` were ignored): `setup` writes the new
 * session's first entries before its extensions start, `preserveModel` carries the model and thinking level over,
 * `parentSession` lands in the header.
 */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { createScriptedProvider } from "../../../builtin-extensions/scripted-provider/index.js";
import {
  type AgentSessionHandle,
  type CreateAgentSessionOptions,
  createAgentSession,
  createStandardKernel,
} from "../../../hosts/sdk/create-agent-session.js";
import { sessionInternals } from "../../../hosts/sdk/session-internals.js";
import type { ExtensionAPI, ExtensionCommandContext, Kernel, SessionEntry } from "../../../kernel/index.js";
import { useTempDir } from "../../helpers/temp-dir.js";

/** A second provider, so a model can differ from the host's default; it is never asked for an answer. */
const otherProvider = (kc: ExtensionAPI) => {
  kc.registerProvider("other", {
    api: "other-api",
    models: [{ id: "m2", reasoning: true }],
    streamSimple() {
      throw new Error("the other provider is not asked in these tests");
    },
  } as never);
};

describe("newSession options", () => {
  const tmp = useTempDir("kc-new-session-");
  let kernel: Kernel;
  const handles: AgentSessionHandle[] = [];

  beforeEach(async () => {
    kernel = await createStandardKernel({ agentDir: join(tmp.path, "agent"), cacheDir: false });
  });
  afterEach(async () => {
    for (const handle of handles.splice(0)) await handle.dispose();
    await kernel.dispose();
  });

  /** Opens a session on disk whose `/grab` command hands out its command context. */
  async function open(
    extra: ((kc: ExtensionAPI) => void)[] = [],
    options: CreateAgentSessionOptions = {},
  ): Promise<{ handle: AgentSessionHandle; command: () => Promise<ExtensionCommandContext> }> {
    let ctx: ExtensionCommandContext | undefined;
    const handle = await createAgentSession({
      cwd: join(tmp.path, "project"),
      agentDir: join(tmp.path, "agent"),
      kernel,
      session: {},
      provider: "scripted",
      model: "scripted",
      warn: () => {},
      extensions: [
        createScriptedProvider([{ text: "one" }, { text: "two" }]),
        otherProvider,
        (kc) => {
          kc.registerCommand("grab", {
            handler: async (_args, c) => {
              ctx = c;
            },
          });
        },
        ...extra,
      ],
      ...options,
    });
    handles.push(handle);
    return {
      handle,
      command: async () => {
        await handle.prompt("/grab");
        return ctx!;
      },
    };
  }

  it("setup writes the first entries, which session_start of the new session already sees", async () => {
    const seenAtStart: string[][] = [];
    const { handle, command } = await open([
      (kc) => {
        kc.on("session_start", (event, ctx) => {
          if (event.reason === "new") seenAtStart.push(ctx.sessionManager.getBranch().map((e) => e.type));
        });
      },
    ]);
    await handle.prompt("first");
    const ctx = await command();
    const result = await ctx.newSession({
      setup: (log) => {
        log.appendCustomMessageEntry("handoff", "Summary of the last session", true);
        log.appendCustomEntry("state", { step: 2 });
        log.appendSessionInfo("continued");
      },
    });
    expect(result).to.deep.equal({ cancelled: false });
    expect(seenAtStart).to.deep.equal([["custom_message", "custom", "session_info"]]);
    expect(handle.getState().sessionName).to.equal("continued");
    // The handed-over message reaches the model with the next prompt, and everything is in the new file.
    await handle.prompt("go on");
    const { log } = sessionInternals(handle);
    const messages = log.buildContext().messages.map((m) => m.role);
    expect(messages).to.deep.equal(["custom", "user", "assistant"]);
    const lines = readFileSync(handle.sessionManager.getSessionFile()!, "utf8").trim().split("\n");
    expect(lines.map((l) => (JSON.parse(l) as SessionEntry).type).slice(0, 4)).to.deep.equal([
      "session",
      "custom_message",
      "custom",
      "session_info",
    ]);
  });

  it("a setup that throws cancels the replacement and keeps the current session", async () => {
    const { handle, command } = await open();
    await handle.prompt("first");
    const before = handle.sessionManager.getSessionFile();
    const ctx = await command();
    let error: unknown;
    await ctx
      .newSession({
        setup: () => {
          throw new Error("no summary available");
        },
      })
      .catch((e: unknown) => {
        error = e;
      });
    expect((error as Error).message).to.equal("no summary available");
    expect(handle.sessionManager.getSessionFile()).to.equal(before);
    await handle.prompt("still here");
    expect(handle.getState().messageCount).to.equal(4);
  });

  it("preserveModel keeps the outgoing model and thinking level; without it the host's defaults apply", async () => {
    const { handle, command } = await open();
    expect(await handle.setModel("other", "m2")).to.equal(true);
    handle.setThinkingLevel("high");

    await (await command()).newSession({ preserveModel: true });
    expect(handle.getState().model).to.include({ provider: "other", id: "m2" });
    expect(handle.getThinkingLevel()).to.equal("high");
    // Recorded in the new session, so resuming it restores them.
    const context = sessionInternals(handle).log.buildContext();
    expect(context.model).to.deep.equal({ provider: "other", modelId: "m2" });
    expect(context.thinkingLevel).to.equal("high");

    await (await command()).newSession();
    expect(handle.getState().model).to.include({ provider: "scripted", id: "scripted" });
    expect(handle.getThinkingLevel()).to.equal("off");
  });

  it("parentSession is written into the new session's header", async () => {
    const { handle, command } = await open();
    await handle.prompt("first");
    const parent = handle.sessionManager.getSessionFile()!;
    await (await command()).newSession({ parentSession: parent });
    await handle.prompt("second");
    expect(handle.sessionManager.getHeader().parentSession).to.equal(parent);
    const header = JSON.parse(readFileSync(handle.sessionManager.getSessionFile()!, "utf8").split("\n")[0]!);
    expect(header.parentSession).to.equal(parent);
  });

  it("a session kept in memory is replaced by one in memory, which writes no file", async () => {
    const { handle, command } = await open([], { session: { inMemory: true } });
    await (await command()).newSession({
      setup: (log) => {
        log.appendCustomEntry("state", { step: 1 });
      },
    });
    await handle.prompt("hi");
    expect(handle.sessionManager.getSessionFile()).to.equal(undefined);
    expect(handle.sessionManager.getEntries().map((e) => e.type)).to.include("custom");
  });
});
