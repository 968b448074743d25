/** Committing boundary drafts: each kind lands on the branch in order; a bad draft is reported and skipped. */

import { expect } from "chai";
import { type EntryDraft, type ExtensionContext, HookBus, type SessionEntry } from "../../../kernel/index.js";
import { commitDrafts, type DraftTarget } from "../../../plugins/agent-loop/boundary-drafts.js";
import { Transcript } from "../../../plugins/agent-loop/transcript.js";
import { SessionManager } from "../../../plugins/session-store/session-manager.js";

const owner = { id: "test:drafts", order: 0 };

describe("boundary drafts", () => {
  let log: SessionManager;
  let bus: HookBus;
  let events: string[];
  let reported: string[];
  let target: DraftTarget;
  beforeEach(() => {
    log = SessionManager.inMemory("/work");
    bus = new HookBus({ onHandlerError: () => {} });
    events = [];
    reported = [];
    const ctx = {} as ExtensionContext;
    target = {
      log,
      transcript: new Transcript(bus, () => ctx, log),
      appended: async (entry: SessionEntry) => {
        events.push(`entry_appended ${entry.type === "custom" ? entry.customType : entry.type}`);
      },
      report: (error) => reported.push((error as Error).message),
    };
    for (const name of ["message_start", "message_end"]) {
      bus.on(
        name,
        (event: { message: { role: string } }) => void events.push(`${name} ${event.message.role}`),
        owner,
      );
    }
  });

  it("commits every kind of draft in order", async () => {
    const user = log.appendMessage({ role: "user", content: "hi", timestamp: 0 });
    const kept = log.appendMessage({ role: "user", content: "kept", timestamp: 0 });
    const drafts: EntryDraft[] = [
      { type: "custom", customType: "audit", data: { turn: 0 } },
      { type: "custom_message", customType: "nudge", content: "keep going" },
      { type: "context_edit", targetId: user.id, replacement: null },
      { type: "compaction", summary: "earlier work", firstKeptEntryId: kept.id, tokensBefore: 1234 },
    ];
    await commitDrafts(drafts, target);
    const added = log.getBranch().slice(2);
    expect(added.map((e) => e.type)).to.deep.equal([
      "custom",
      "custom_message",
      "context_edit",
      "compaction",
    ]);
    expect(added[1]).to.deep.include({ customType: "nudge", content: "keep going", display: true });
    expect(added[3]).to.deep.include({
      summary: "earlier work",
      firstKeptEntryId: kept.id,
      tokensBefore: 1234,
    });
    // Only the custom entry is announced as appended; the custom message goes through message_start/_end.
    expect(events).to.deep.equal(["entry_appended audit", "message_start custom", "message_end custom"]);
    expect(reported).to.deep.equal([]);
  });

  it("reports a draft it cannot commit and still commits the ones after it", async () => {
    const drafts = [
      { type: "context_edit", targetId: "no-such-entry", replacement: null },
      { type: "bogus" },
      null,
      { type: "custom", customType: "after" },
    ] as unknown as EntryDraft[];
    await commitDrafts(drafts, target);
    expect(reported).to.deep.equal([
      "context_edit targets unknown entry no-such-entry",
      'unknown entry draft type "bogus"',
      "unknown entry draft type undefined",
    ]);
    expect(log.getBranch().map((e) => (e.type === "custom" ? e.customType : e.type))).to.deep.equal([
      "after",
    ]);
  });

  it("records a custom message as message_end handlers leave it", async () => {
    bus.on(
      "message_end",
      (event: { message: { role: string } }) => ({ message: { ...event.message, content: "rewritten" } }),
      { id: "test:rewrite", order: 1 },
    );
    await commitDrafts([{ type: "custom_message", customType: "note", content: "original" }], target);
    expect(log.getBranch()[0]).to.deep.include({ type: "custom_message", content: "rewritten" });
  });
});
