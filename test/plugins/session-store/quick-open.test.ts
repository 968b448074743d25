/**
 * Opening reads message lines in the writer's layout by their prefix only and parses just the context's. These
 * tests damage a message line so that its start and end still look right: on the context path the open falls back
 * to checking every line (the same warning and skip as always); off it, the open is not slowed by it and the damage
 * shows when the entry is read back.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { SessionManager, SessionStoreError } from "../../../plugins/session-store/session-manager.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { assistant, user } from "./helpers.js";

describe("session-store: opening without parsing the history", () => {
  const tmp = useTempDir("kc-quick-open-");
  let managers: SessionManager[] = [];
  const track = (manager: SessionManager) => {
    managers.push(manager);
    return manager;
  };
  afterEach(() => {
    for (const manager of managers) manager.close();
    managers = [];
  });

  /** 10 messages, a compaction keeping messages 6-9, then 2 more. */
  function writeSession() {
    const session = SessionManager.create({ cwd: join(tmp.path, "p"), agentDir: join(tmp.path, "agent") });
    const ids: string[] = [];
    for (let i = 0; i < 10; i++)
      ids.push(session.appendMessage(i % 2 ? assistant(`a${i}`) : user(`u${i}`)).id);
    session.appendCompaction("summary", ids[6]!, 100);
    ids.push(session.appendMessage(user("u10")).id, session.appendMessage(assistant("a11")).id);
    const expected = { context: session.buildContext(), entries: session.getEntries() };
    session.close();
    return { file: session.getSessionFile()!, ids, expected };
  }

  /** Breaks the JSON in the middle of entry `id`'s line; its prefix and closing `}` stay. Returns its line number. */
  function breakMiddle(file: string, id: string): number {
    const lines = readFileSync(file, "utf8").split("\n");
    const index = lines.findIndex((line) => line.includes(`"id":"${id}"`));
    lines[index] = lines[index]!.replace('"message":{', '"message":{{');
    writeFileSync(file, lines.join("\n"));
    return index + 1;
  }

  it("gives the same entries and context as the session that wrote them", () => {
    const { file, expected } = writeSession();
    const session = track(SessionManager.open(file));
    expect(session.warnings).to.deep.equal([]);
    expect(session.buildContext()).to.deep.equal(expected.context);
    expect(session.getEntries()).to.deep.equal(expected.entries);
  });

  it("reports and skips a damaged context message with its line number, as a full check does", () => {
    const { file, ids } = writeSession();
    const line = breakMiddle(file, ids[10]!);
    const session = track(SessionManager.open(file));
    expect(session.warnings).to.include(`${file}: line ${line} is not valid JSON and was skipped`);
    expect(session.warnings.join("\n")).to.contain(
      `(entry ${ids[11]}) refers to a missing parent ${ids[10]}`,
    );
    expect(session.getEntry(ids[10]!)).to.equal(undefined);
    const texts = session.buildContext().messages.map((m) => JSON.stringify(m.content));
    expect(texts.some((t) => t.includes("a11"))).to.equal(true);
    expect(texts.some((t) => t.includes("u10"))).to.equal(false);
  });

  it("opens past a damaged message the context does not use, and names it when it is read back", () => {
    const { file, ids, expected } = writeSession();
    breakMiddle(file, ids[2]!);
    const session = track(SessionManager.open(file));
    expect(session.warnings).to.deep.equal([]);
    expect(session.buildContext()).to.deep.equal(expected.context);
    let error: unknown;
    try {
      session.getEntry(ids[2]!);
    } catch (caught) {
      error = caught;
    }
    expect(error).to.be.instanceOf(SessionStoreError);
    expect((error as SessionStoreError).code).to.equal("KC_ERR_SESSION_IO");
    expect((error as Error).message)
      .to.contain(file)
      .and.contain(`entry ${ids[2]}`);
  });
});
