/** The `knightcode.system` entries: the system prompt and tool set recorded at the first request and on change. */

import { expect } from "chai";
import type { CustomEntry } from "../../../kernel/index.js";
import { recordSystemState, SYSTEM_ENTRY } from "../../../plugins/agent-loop/system-state.js";
import { SessionManager } from "../../../plugins/session-store/session-manager.js";

const read = { name: "read", description: "Read a file", parameters: { type: "object" } };
const write = { name: "write", description: "Write a file", parameters: { type: "object" } };

const systemEntries = (log: SessionManager) =>
  log.getBranch().filter((e): e is CustomEntry => e.type === "custom" && e.customType === SYSTEM_ENTRY);

describe("system state recording", () => {
  let log: SessionManager;
  beforeEach(() => {
    log = SessionManager.inMemory("/work");
    log.appendMessage({ role: "user", content: "hi", timestamp: 0 });
  });

  it("records the prompt and the tools' names and descriptions at the first request", () => {
    const entry = recordSystemState(log, "You are helpful.", [read]);
    expect(entry).to.not.equal(undefined);
    expect(systemEntries(log).map((e) => e.data)).to.deep.equal([
      { systemPrompt: "You are helpful.", tools: [{ name: "read", description: "Read a file" }] },
    ]);
  });

  it("records nothing while the state stays the same, even with entries in between", () => {
    recordSystemState(log, "P", [read]);
    log.appendMessage({ role: "user", content: "again", timestamp: 0 });
    log.appendCustomEntry("bookmark", { at: 1 });
    expect(recordSystemState(log, "P", [read])).to.equal(undefined);
    expect(systemEntries(log)).to.have.length(1);
  });

  it("records a changed prompt or tool set before the request that uses it", () => {
    recordSystemState(log, "P", [read]);
    recordSystemState(log, "P", [read, write]);
    recordSystemState(log, "Q", [read, write]);
    recordSystemState(log, "P", [read]);
    expect(systemEntries(log).map((e) => e.data)).to.deep.equal([
      { systemPrompt: "P", tools: [{ name: "read", description: "Read a file" }] },
      {
        systemPrompt: "P",
        tools: [
          { name: "read", description: "Read a file" },
          { name: "write", description: "Write a file" },
        ],
      },
      {
        systemPrompt: "Q",
        tools: [
          { name: "read", description: "Read a file" },
          { name: "write", description: "Write a file" },
        ],
      },
      { systemPrompt: "P", tools: [{ name: "read", description: "Read a file" }] },
    ]);
  });

  it("compares against the active branch, so a branch without the state records it again", () => {
    const root = log.getLeafId()!;
    recordSystemState(log, "P", [read]);
    log.branch(root);
    expect(systemEntries(log)).to.deep.equal([]);
    expect(recordSystemState(log, "P", [read])).to.not.equal(undefined);
    expect(systemEntries(log)).to.have.length(1);
  });
});
