/**
 * buildContext(): messages, model and thinking level from the active branch, with custom messages, branch
 * summaries, compaction (firstKeptEntryId) and context edits.
 */
import { expect } from "chai";
import type { CustomMessage, SessionEntry } from "../../../kernel/index.js";
import {
  BRANCH_SUMMARY_PREFIX,
  buildSessionContext,
  COMPACTION_SUMMARY_PREFIX,
} from "../../../plugins/session-store/context.js";
import { SessionManager } from "../../../plugins/session-store/session-manager.js";
import { assistant, textOf, toolResult, user } from "./helpers.js";

describe("session-store: buildContext", () => {
  let session: SessionManager;
  beforeEach(() => {
    session = SessionManager.inMemory("/project");
  });

  it("is empty for an empty session", () => {
    expect(session.buildContext()).to.deep.equal({ messages: [] });
  });

  it("turns the branch's messages into context, root first, and only the active branch", () => {
    const a = session.appendMessage(user("question"));
    session.appendMessage(assistant("wrong turn"));
    session.branch(a.id);
    session.appendMessage(assistant("answer"));
    session.appendMessage(toolResult("call-1", "file contents"));
    expect(session.buildContext().messages.map(textOf)).to.deep.equal([
      "question",
      "answer",
      "file contents",
    ]);
  });

  it("takes the later of the last model_change and the last assistant message, and the last thinking level", () => {
    expect(session.buildContext().model).to.equal(undefined);
    session.appendModelChange("openai", "gpt-x");
    session.appendThinkingLevelChange("low");
    session.appendMessage(user("hi"));
    expect(session.buildContext()).to.include({ thinkingLevel: "low" });
    expect(session.buildContext().model).to.deep.equal({ provider: "openai", modelId: "gpt-x" });

    session.appendMessage(assistant("hello", "anthropic", "claude-y"));
    expect(session.buildContext().model).to.deep.equal({ provider: "anthropic", modelId: "claude-y" });

    session.appendModelChange("google", "gemini-z");
    session.appendThinkingLevelChange("high");
    expect(session.buildContext()).to.deep.include({
      model: { provider: "google", modelId: "gemini-z" },
      thinkingLevel: "high",
    });
  });

  it("sends custom_message entries as custom messages; custom, label and session_info entries send nothing", () => {
    const a = session.appendMessage(user("hi"));
    session.appendCustomEntry("state", { secret: true });
    session.appendLabel(a.id, "start");
    session.appendSessionInfo("name");
    const cm = session.appendCustomMessageEntry("reminder", [{ type: "text", text: "be brief" }], false, {
      n: 1,
    });
    const { messages } = session.buildContext();
    expect(messages).to.have.length(2);
    expect(messages[1]).to.deep.equal({
      role: "custom",
      customType: "reminder",
      content: [{ type: "text", text: "be brief" }],
      display: false,
      details: { n: 1 },
      timestamp: Date.parse(cm.timestamp),
    } satisfies CustomMessage);
  });

  it("sends a branch summary as a branchSummary custom message with the summary in <summary>", () => {
    const a = session.appendMessage(user("start"));
    session.appendMessage(assistant("explored"));
    session.branch(a.id);
    session.appendBranchSummary(a.id, "We tried X and it failed.");
    session.appendMessage(user("try Y"));
    const { messages } = session.buildContext();
    expect(messages.map((m) => m.role)).to.deep.equal(["user", "custom", "user"]);
    const summary = messages[1] as CustomMessage;
    expect(summary.customType).to.equal("branchSummary");
    expect(summary.content).to.equal(
      `${BRANCH_SUMMARY_PREFIX}\n\n<summary>\nWe tried X and it failed.\n</summary>`,
    );
    expect(summary.details).to.deep.equal({ fromId: a.id });
  });

  it("after a compaction: the summary, then the kept entries from firstKeptEntryId, then what came after", () => {
    session.appendMessage(user("m1"));
    session.appendMessage(assistant("m2"));
    const m3 = session.appendMessage(user("m3"));
    session.appendCustomMessageEntry("kept-note", "m3b", true);
    session.appendMessage(assistant("m4"));
    session.appendCompaction("Earlier: m1 and m2.", m3.id, 5000);
    session.appendMessage(user("m5"));

    const { messages } = session.buildContext();
    expect(messages.map(textOf)).to.deep.equal([
      `${COMPACTION_SUMMARY_PREFIX}\n\n<summary>\nEarlier: m1 and m2.\n</summary>`,
      "m3",
      "m3b",
      "m4",
      "m5",
    ]);
    expect(messages[0]).to.include({ role: "custom", customType: "compactionSummary" });
    expect((messages[0] as CustomMessage).details).to.deep.equal({
      tokensBefore: 5000,
      firstKeptEntryId: m3.id,
    });

    // A second compaction replaces the first: only its summary and its kept entries remain.
    const m6 = session.appendMessage(assistant("m6"));
    session.appendCompaction("Everything up to m5.", m6.id, 6000);
    session.appendMessage(user("m7"));
    expect(session.buildContext().messages.map(textOf)).to.deep.equal([
      `${COMPACTION_SUMMARY_PREFIX}\n\n<summary>\nEverything up to m5.\n</summary>`,
      "m6",
      "m7",
    ]);
  });

  it("keeps model and thinking level from before a compaction", () => {
    session.appendModelChange("p", "m");
    session.appendThinkingLevelChange("medium");
    const a = session.appendMessage(user("a"));
    session.appendMessage(user("b"));
    session.appendCompaction("s", a.id, 1);
    expect(session.buildContext()).to.deep.include({
      model: { provider: "p", modelId: "m" },
      thinkingLevel: "medium",
    });
  });

  it("context_edit replaces or drops the target's message on its branch only; the entries stay", () => {
    session.appendMessage(user("keep"));
    const b = session.appendMessage(toolResult("c1", "huge tool output"));
    const c = session.appendMessage(assistant("noise"));
    const fork = session.getLeafId()!;
    session.appendContextEdit(b.id, toolResult("c1", "[output elided]"));
    session.appendContextEdit(c.id, null);
    session.appendMessage(user("next"));
    expect(session.buildContext().messages.map(textOf)).to.deep.equal(["keep", "[output elided]", "next"]);
    expect(session.getEntry(b.id)).to.deep.include({ type: "message" });
    expect(textOf((session.getEntry(b.id) as { message: { content: unknown } }).message)).to.equal(
      "huge tool output",
    );

    // The later edit of the same target wins.
    session.appendContextEdit(b.id, null);
    expect(session.buildContext().messages.map(textOf)).to.deep.equal(["keep", "next"]);

    // Another branch from before the edits sees the original messages.
    session.branch(fork);
    expect(session.buildContext().messages.map(textOf)).to.deep.equal(["keep", "huge tool output", "noise"]);
  });

  it("context_edit applies to kept entries after a compaction and to custom messages", () => {
    const a = session.appendMessage(user("a"));
    const note = session.appendCustomMessageEntry("n", "note", true);
    session.appendCompaction("sum", a.id, 1);
    session.appendContextEdit(note.id, null);
    session.appendContextEdit(a.id, user("a, edited"));
    const texts = session.buildContext().messages.map(textOf);
    expect(texts).to.have.length(2);
    expect(texts[1]).to.equal("a, edited");
  });

  it("ignores entry types it does not know (forward compatibility)", () => {
    const entries = [
      {
        type: "message",
        id: "00000001",
        parentId: null,
        timestamp: "2026-01-01T00:00:00.000Z",
        message: user("a"),
      },
      {
        type: "usage",
        id: "00000002",
        parentId: "00000001",
        timestamp: "2026-01-01T00:00:01.000Z",
        kind: "x",
      },
      {
        type: "message",
        id: "00000003",
        parentId: "00000002",
        timestamp: "2026-01-01T00:00:02.000Z",
        message: user("b"),
      },
    ] as unknown as SessionEntry[];
    expect(buildSessionContext(entries).messages.map(textOf)).to.deep.equal(["a", "b"]);
  });

  it("a compaction whose firstKeptEntryId is not before it keeps nothing from before", () => {
    const entries = [
      {
        type: "message",
        id: "00000001",
        parentId: null,
        timestamp: "2026-01-01T00:00:00.000Z",
        message: user("a"),
      },
      {
        type: "compaction",
        id: "00000002",
        parentId: "00000001",
        timestamp: "2026-01-01T00:00:01.000Z",
        summary: "s",
        firstKeptEntryId: "ffffffff",
        tokensBefore: 1,
      },
      {
        type: "message",
        id: "00000003",
        parentId: "00000002",
        timestamp: "2026-01-01T00:00:02.000Z",
        message: user("b"),
      },
    ] as SessionEntry[];
    const messages = buildSessionContext(entries).messages;
    expect(messages.map((m) => m.role)).to.deep.equal(["custom", "user"]);
    expect(textOf(messages[1]!)).to.equal("b");
  });
});
