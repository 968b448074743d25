/**
 * Tree navigation from an extension command (`ctx.navigateTree()`): the leaf moves within the file, the abandoned
 * branch leaves the model's context, and `session_before_tree` handlers cancel, supply a summary or set a label.
 * Sessions are written to real files in a temp folder.
 */

import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { createTestSession, type TestSession } from "../../../hosts/testing/index.js";
import type {
  ExtensionAPI,
  NavigateTreeOptions,
  SessionBeforeTreeEvent,
  SessionBeforeTreeResult,
  SessionEntry,
  SessionTreeEvent,
} from "../../../kernel/index.js";
import { SessionManager } from "../../../plugins/session-store/session-manager.js";
import { useTempDir } from "../../helpers/temp-dir.js";

type TreeHandler = (event: SessionBeforeTreeEvent) => SessionBeforeTreeResult | undefined;

describe("tree navigation from a command", () => {
  const tmp = useTempDir("kc-tree-");
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  /** Requests the model received, as `role: text` lines. */
  let requests: string[][];
  let before: SessionBeforeTreeEvent[];
  let after: SessionTreeEvent[];
  let navigated: { cancelled: boolean }[];

  /** A session with `one`→`a`, `two`→`b` on the branch; `/go <id>` navigates with `options`, `handlers` answer. */
  async function start(
    handlers: TreeHandler[] = [],
    options: NavigateTreeOptions = {},
    disableBuiltins: string[] = [],
  ) {
    requests = [];
    before = [];
    after = [];
    navigated = [];
    const extension = (kc: ExtensionAPI) => {
      kc.on("before_provider_request", (event) => {
        const messages = (event.payload as { messages: { role: string; content: unknown }[] }).messages;
        requests.push(messages.map((m) => `${m.role}: ${text(m.content)}`));
      });
      kc.on("session_tree", (event) => void after.push(event));
      kc.registerCommand("go", {
        handler: async (id, ctx) => void navigated.push(await ctx.navigateTree(id, options)),
      });
    };
    const answering = handlers.map((handler) => (kc: ExtensionAPI) => {
      kc.on("session_before_tree", (event) => {
        before.push(structuredClone({ ...event, signal: undefined }) as never);
        return handler(event);
      });
    });
    t = await createTestSession({
      persist: true,
      script: [{ text: "a" }, { text: "b" }, { text: "what branch two learned" }],
      extensions: [extension, ...answering],
      disableBuiltins,
    });
    await t.prompt("one");
    const firstAnswer = t.session.sessionManager.getLeafId()!;
    await t.prompt("two");
    return { session: t, firstAnswer, oldLeaf: t.session.sessionManager.getLeafId()! };
  }

  it("moves the leaf within the file: the next prompt starts a sibling branch and the old one leaves the context", async () => {
    const { session, firstAnswer, oldLeaf } = await start([() => undefined]);
    await session.prompt(`/go ${firstAnswer}`);
    expect(navigated).to.deep.equal([{ cancelled: false }]);
    expect(session.session.sessionManager.getLeafId()).to.equal(firstAnswer);
    const prep = before[0]!.preparation;
    expect(prep).to.include({ targetId: firstAnswer, oldLeafId: oldLeaf, commonAncestorId: firstAnswer });
    expect(prep.userWantsSummary).to.equal(false);
    expect(messagesOf(prep.entriesToSummarize)).to.deep.equal(["user: two", "assistant: b"]);
    expect(after).to.deep.equal([{ newLeafId: firstAnswer, oldLeafId: oldLeaf }]);

    await session.prompt("three");
    expect(requests.at(-1)).to.deep.equal(["user: one", "assistant: a", "user: three"]);
    // Both branches stay in the file, and a reopened file continues from its last entry.
    const copy = join(tmp.path, "copy.jsonl");
    copyFileSync(session.session.sessionManager.getSessionFile()!, copy);
    const reopened = SessionManager.open(copy);
    try {
      expect(messagesOf(reopened.getChildren(firstAnswer))).to.deep.equal(["user: two", "user: three"]);
      expect(messagesOf(reopened.getBranch())).to.deep.equal([
        "user: one",
        "assistant: a",
        "user: three",
        "assistant: what branch two learned",
      ]);
    } finally {
      reopened.close();
    }
  });

  it("stays where it is when a handler cancels, and when a handler throws (reported)", async () => {
    const { session, firstAnswer, oldLeaf } = await start([() => ({ cancel: true })]);
    await session.prompt(`/go ${firstAnswer}`);
    expect(navigated).to.deep.equal([{ cancelled: true }]);
    expect(session.session.sessionManager.getLeafId()).to.equal(oldLeaf);
    expect(after).to.deep.equal([]);

    await session.dispose();
    const throwing = await start([
      () => {
        throw new Error("not now");
      },
    ]);
    await throwing.session.prompt(`/go ${throwing.firstAnswer}`);
    expect(navigated).to.deep.equal([{ cancelled: true }]);
    expect(throwing.session.session.sessionManager.getLeafId()).to.equal(throwing.oldLeaf);
    expect(throwing.session.warnings.join("\n")).to.contain("not now");
  });

  it("writes a supplied summary at the new position, labelled, and the model sees it instead of the branch", async () => {
    const { session, firstAnswer, oldLeaf } = await start(
      [
        // Overrides from a handler that does not decide reach the handlers after it.
        () => ({ customInstructions: "only the decisions" }),
        (event) => ({
          summary: { summary: `Tried two (${event.preparation.customInstructions}).`, details: { n: 2 } },
          label: "after-two",
        }),
      ],
      { summarize: true, label: "from-the-caller" },
    );
    await session.prompt(`/go ${firstAnswer}`);
    expect(before[0]!.preparation).to.include({ userWantsSummary: true, label: "from-the-caller" });
    expect(before[1]!.preparation.customInstructions).to.equal("only the decisions");
    const manager = session.session.sessionManager;
    const summary = manager.getChildren(firstAnswer).find((e) => e.type === "branch_summary");
    expect(summary).to.deep.include({
      fromId: firstAnswer,
      summary: "Tried two (only the decisions).",
      details: { n: 2 },
      fromHook: true,
    });
    expect(manager.getLabel(summary!.id)).to.equal("after-two");
    expect(manager.getLabel(firstAnswer)).to.equal(undefined);
    expect(after).to.have.length(1);
    expect(after[0]!).to.deep.include({ oldLeafId: oldLeaf, fromExtension: true });
    expect(after[0]!.summaryEntry!.id).to.equal(summary!.id);
    expect(after[0]!.newLeafId).to.equal(manager.getLeafId());

    await session.prompt("three");
    const sent = requests.at(-1)!;
    expect(sent.slice(0, 2)).to.deep.equal(["user: one", "assistant: a"]);
    expect(sent[2]).to.contain("<summary>\nTried two (only the decisions).\n</summary>");
    expect(sent[3]).to.equal("user: three");
    expect(sent.join("\n")).to.not.contain("user: two");
  });

  it("writes no summary unless the caller asked for one, and labels the target instead", async () => {
    const { session, firstAnswer } = await start([() => ({ summary: { summary: "unwanted" } })], {
      label: "checkpoint",
    });
    await session.prompt(`/go ${firstAnswer}`);
    const manager = session.session.sessionManager;
    expect(manager.getEntries().some((e) => e.type === "branch_summary")).to.equal(false);
    expect(manager.getLabel(firstAnswer)).to.equal("checkpoint");
    expect(after[0]!.summaryEntry).to.equal(undefined);
  });

  it("has builtin:compaction summarise the branch being left when no other handler answers", async () => {
    const { session, firstAnswer } = await start([], { summarize: true, customInstructions: "the errors" });
    await session.prompt(`/go ${firstAnswer}`);
    expect(navigated).to.deep.equal([{ cancelled: false }]);
    const summaryRequest = requests.at(-1)!.join("\n");
    expect(summaryRequest).to.contain("[User]: two").and.to.contain("[Assistant]: b");
    expect(summaryRequest).to.contain("Focus of this summary: the errors");
    expect(summaryRequest).to.not.contain("[User]: one");
    const summary = after[0]!.summaryEntry!;
    expect(summary).to.include({
      type: "branch_summary",
      fromId: firstAnswer,
      summary: "what branch two learned",
    });
    expect(after[0]!.fromExtension).to.equal(false);
    expect(session.eventsOfType("summarization_retry_scheduled")).to.deep.equal([]);
  });

  it("navigates without a summary when nothing supplies one, even with summarize: true", async () => {
    const { session, firstAnswer } = await start([], { summarize: true }, ["builtin:compaction"]);
    await session.prompt(`/go ${firstAnswer}`);
    expect(navigated).to.deep.equal([{ cancelled: false }]);
    expect(session.session.sessionManager.getLeafId()).to.equal(firstAnswer);
    expect(session.session.sessionManager.getEntries().some((e) => e.type === "branch_summary")).to.equal(
      false,
    );
  });

  it("cancels when a handler returns a summary without text, naming the extension", async () => {
    const { session, firstAnswer, oldLeaf } = await start([() => ({ summary: { details: 1 } }) as never], {
      summarize: true,
    });
    await session.prompt(`/go ${firstAnswer}`);
    expect(navigated).to.deep.equal([{ cancelled: true }]);
    expect(session.session.sessionManager.getLeafId()).to.equal(oldLeaf);
    expect(session.warnings.join("\n")).to.match(/session_before_tree returned a summary without a string/);
  });

  it("stops a navigation waiting for its summary when the host aborts, and stays put", async () => {
    let aborted: Promise<void> | undefined;
    const { session, firstAnswer, oldLeaf } = await start(
      [
        (event) => {
          // A summariser that is still working when the person gives up; it answers anyway once aborted.
          aborted = new Promise((resolve) => event.signal.addEventListener("abort", () => resolve()));
          return aborted.then(() => ({ summary: { summary: "too late" } })) as never;
        },
      ],
      { summarize: true },
    );
    const moving = session.session.navigateTree(firstAnswer, { summarize: true });
    while (!aborted) await new Promise((r) => setTimeout(r, 5));
    session.session.abort();
    expect(await moving).to.deep.equal({ cancelled: true, leafId: oldLeaf });
    expect(session.session.sessionManager.getLeafId()).to.equal(oldLeaf);
    expect(session.session.sessionManager.getEntries().some((e) => e.type === "branch_summary")).to.equal(
      false,
    );
    expect(after).to.deep.equal([]);
  });

  it("refuses an id that is not in the session", async () => {
    const { session } = await start();
    const failure = await session.session.navigateTree("nope").catch((error: unknown) => error);
    expect(failure).to.have.property("code", "KC_ERR_UNKNOWN_ENTRY");
  });
});

describe("labels from an extension", () => {
  it("sets, reads and clears labels through knightcode.setLabel and ctx.sessionManager.getLabel, persisted", async () => {
    let api: ExtensionAPI | undefined;
    const seen: (string | undefined)[] = [];
    const t = await createTestSession({
      persist: true,
      script: [{ text: "a" }],
      extensions: [
        (kc: ExtensionAPI) => {
          api = kc;
          kc.registerCommand("show", {
            handler: async (id, ctx) => void seen.push(ctx.sessionManager.getLabel(id)),
          });
        },
      ],
    });
    try {
      await t.prompt("one");
      const answer = t.session.sessionManager.getLeafId()!;
      api!.setLabel(answer, "good answer");
      await t.prompt(`/show ${answer}`);
      api!.setLabel(answer, undefined);
      await t.prompt(`/show ${answer}`);
      api!.setLabel(answer, "final");
      expect(seen).to.deep.equal(["good answer", undefined]);
      expect(() => api!.setLabel("nope", "x")).to.throw(/no such entry/);
      const labels = t.session.sessionManager
        .getEntries()
        .flatMap((e) => (e.type === "label" ? [[e.targetId, e.label ?? null]] : []));
      expect(labels).to.deep.equal([
        [answer, "good answer"],
        [answer, null],
        [answer, "final"],
      ]);
      // The picker's list reads the labels from the file.
      expect(t.session.listSessions()[0]!.labels).to.deep.equal(["final"]);
    } finally {
      await t.dispose();
    }
  });
});

function text(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((part) => part?.type === "text")
    .map((part) => part.text)
    .join("");
}

function messagesOf(entries: SessionEntry[]): string[] {
  return entries.flatMap((e) =>
    e.type === "message" ? [`${e.message.role}: ${text(e.message.content)}`] : [],
  );
}
