/**
 * The session store's write path takes values extensions produced: one JSON cannot write is written with
 * replacements and a warning, so an append never fails on it and the file stays valid JSONL that reopens.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { SessionManager } from "../../../plugins/session-store/session-manager.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { user } from "./helpers.js";

describe("session-store: writing values JSON cannot write", () => {
  const tmp = useTempDir("kc-safe-write-");

  it("writes a circular custom entry and custom message details with replacements, warns, and reopens", () => {
    const session = SessionManager.create({ cwd: join(tmp.path, "p"), agentDir: join(tmp.path, "agent") });
    const warnings: string[] = [];
    session.onWriteWarning = (message) => warnings.push(message);
    session.appendMessage(user("hello"));
    const data: Record<string, unknown> = { big: 2n ** 70n };
    data.again = data;
    const entry = session.appendCustomEntry("fixture-state", data);
    session.appendCustomMessageEntry("fixture-note", "note", true, { ref: data });
    const file = session.getSessionFile()!;
    session.close();

    expect(entry.data).to.deep.equal({ big: "1180591620717411303424", again: "[Circular]" });
    expect(warnings).to.deep.equal([
      'The custom entry "fixture-state" could not be written as it was: value.data.big: a BigInt, written as a ' +
        'string; value.data.again: a circular reference, written as "[Circular]"',
      'The custom_message entry "fixture-note" could not be written as it was: value.details.ref.big: a BigInt, ' +
        'written as a string; value.details.ref.again: a circular reference, written as "[Circular]"',
    ]);
    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    expect(lines).to.have.length(4);
    for (const line of lines) expect(() => JSON.parse(line)).not.to.throw();
    const reopened = SessionManager.open(file);
    try {
      expect(reopened.warnings).to.deep.equal([]);
      expect(reopened.getEntries().map((e) => e.type)).to.deep.equal(["message", "custom", "custom_message"]);
    } finally {
      reopened.close();
    }
  });
});
