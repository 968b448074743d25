/**
 * The columnar entry index: typed-array columns that double as they fill, compact (8 lowercase hex) ids in a hash
 * table, other ids in a Map. Every id added must be found again with its own parent, type and byte range, and no
 * id that was not added may be found, however the ids are shaped.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import {
  BLOCK_SIZE,
  compactId,
  EntryColumns,
  INITIAL_CAPACITY,
} from "../../../plugins/session-store/entry-columns.js";
import { SessionManager } from "../../../plugins/session-store/session-manager.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { user } from "./helpers.js";

/** A small deterministic generator, so a failure can be reproduced. */
function numbers(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1_664_525) + 1_013_904_223) >>> 0;
    return state;
  };
}

interface Expected {
  id: string;
  parent: number;
  type: string;
  offset: number;
  length: number;
}

function check(columns: EntryColumns, expected: Expected[]): void {
  expect(columns.size).to.equal(expected.length);
  expected.forEach((entry, at) => {
    expect(columns.indexOf(entry.id), `index of ${entry.id}`).to.equal(at);
    expect(columns.has(entry.id)).to.equal(true);
    expect(columns.idAt(at)).to.equal(entry.id);
    expect(columns.parentAt(at), `parent of ${entry.id}`).to.equal(entry.parent);
    expect(columns.typeAt(at)).to.equal(entry.type);
    expect(columns.offsetAt(at)).to.equal(entry.offset);
    expect(columns.lengthAt(at)).to.equal(entry.length);
  });
}

describe("session-store: columnar entry index", () => {
  it("reads ids of 8 lowercase hex characters as numbers, and nothing else", () => {
    expect(compactId("00000000")).to.equal(0);
    expect(compactId("0000000a")).to.equal(10);
    expect(compactId("ffffffff")).to.equal(0xffffffff);
    expect(compactId("deadbeef")).to.equal(0xdeadbeef);
    for (const other of [
      "",
      "abc",
      "DEADBEEF",
      "deadbeeg",
      "deadbeef0",
      "dead-bee",
      "0x123456",
      " eadbeef",
    ]) {
      expect(compactId(other), other).to.equal(-1);
    }
  });

  it("finds every one of thousands of random ids, with its parent, type and byte range, past the initial capacity", () => {
    const columns = new EntryColumns();
    const next = numbers(7);
    const types = ["message", "custom_message", "compaction", "label", "model_change"];
    const expected: Expected[] = [];
    const seen = new Set<string>();
    const count = BLOCK_SIZE * 3 + 3;
    while (expected.length < count) {
      const id = next().toString(16).padStart(8, "0");
      if (seen.has(id)) continue;
      seen.add(id);
      const at = expected.length;
      // Mostly the entry before (a linear session), sometimes any earlier one (a branch), sometimes a root.
      const roll = next() % 10;
      const parent = at === 0 || roll === 0 ? -1 : roll < 8 ? at - 1 : next() % at;
      // Offsets past 4 GiB: a column narrower than 53 bits would cut them.
      const entry = {
        id,
        parent,
        type: types[next() % types.length]!,
        offset: at * 3_000_001,
        length: next() % 9_000,
      };
      expected.push(entry);
      expect(columns.add(entry.id, entry.parent, entry.type, entry.offset, entry.length)).to.equal(at);
    }
    check(columns, expected);
    expect(expected.at(-1)!.offset).to.be.greaterThan(2 ** 32);

    // Ids that were not added: nearby numbers, other shapes, an added id in upper case.
    let unknown = 0;
    while (unknown < 2_000) {
      const id = next().toString(16).padStart(8, "0");
      if (seen.has(id)) continue;
      unknown++;
      expect(columns.indexOf(id), id).to.equal(-1);
      expect(columns.has(id)).to.equal(false);
    }
    expect(columns.indexOf(expected[5]!.id.toUpperCase())).to.equal(
      expected[5]!.id === expected[5]!.id.toUpperCase() ? 5 : -1,
    );
    expect(columns.indexOf("")).to.equal(-1);
    expect(columns.indexOf("root")).to.equal(-1);
  });

  it("finds sequential and zero-padded ids (all landing near each other in the table)", () => {
    const columns = new EntryColumns();
    const expected: Expected[] = [];
    // Past the hash table's first size (it is at most 3/4 full), and small enough that `i << 19` stays in 32 bits.
    const count = 8_000;
    expect(count * 4).to.be.greaterThan(INITIAL_CAPACITY * 2 * 3);
    for (let i = 0; i < count; i++) {
      // The high bits alone change in the second half: a hash that looks only at low bits collides there.
      const value = i < count / 2 ? i : (i << 19) >>> 0;
      const entry = {
        id: value.toString(16).padStart(8, "0"),
        parent: i - 1,
        type: "message",
        offset: i,
        length: 1,
      };
      expected.push(entry);
      columns.add(entry.id, entry.parent, entry.type, entry.offset, entry.length);
    }
    check(columns, expected);
    expect(columns.indexOf("00000000")).to.equal(0);
    expect(columns.indexOf(count.toString(16).padStart(8, "0"))).to.equal(-1);
  });

  it("grows a block at a time, never holding more than one block of unused room", () => {
    const columns = new EntryColumns();
    const blockBytes = () => columns.byteLength - tableBytes(columns);
    columns.add("00000000", -1, "message", 0, 1);
    const perBlock = blockBytes();
    for (let i = 1; i < BLOCK_SIZE * 5 + 1; i++) {
      columns.add(i.toString(16).padStart(8, "0"), i - 1, "message", i, 1);
      const blocks = Math.ceil((i + 1) / BLOCK_SIZE);
      if (blockBytes() !== blocks * perBlock) expect.fail(`${i + 1} entries take ${blockBytes()} bytes`);
    }
    expect(columns.indexOf((BLOCK_SIZE * 5).toString(16).padStart(8, "0"))).to.equal(BLOCK_SIZE * 5);
    expect(columns.parentAt(BLOCK_SIZE * 5)).to.equal(BLOCK_SIZE * 5 - 1);
  });

  it("keeps ids of any other shape exactly, next to compact ones", () => {
    const columns = new EntryColumns();
    const shapes = [
      "root",
      "ABCDEF01",
      "abcdef0",
      "abcdef012",
      "a1b2c3d4-0000-4000-8000-000000000000",
      "é😀",
      "7",
    ];
    const expected: Expected[] = [];
    for (let i = 0; i < INITIAL_CAPACITY * 3; i++) {
      const id = i % 2 === 0 ? `${shapes[i % shapes.length]}-${i}` : i.toString(16).padStart(8, "0");
      const entry = {
        id,
        parent: i % 5 === 0 ? -1 : i - 1,
        type: i % 3 ? "message" : `custom-${i % 4}`,
        offset: -1,
        length: 0,
      };
      expected.push(entry);
      columns.add(entry.id, entry.parent, entry.type, entry.offset, entry.length);
    }
    for (const shape of shapes) {
      const entry = { id: shape, parent: expected.length - 1, type: "label", offset: 5, length: 6 };
      expected.push(entry);
      columns.add(entry.id, entry.parent, entry.type, entry.offset, entry.length);
    }
    check(columns, expected);
    // "abcdef01" is compact but was only added in upper case.
    expect(columns.indexOf("abcdef01")).to.equal(-1);
    expect(columns.indexOf("root-1")).to.equal(-1);
  });

  it("keeps types past the codes it has (an open file of unknown types)", () => {
    const columns = new EntryColumns();
    const count = 0x100 + 10;
    for (let i = 0; i < count; i++) columns.add(`t${i}`, -1, `type-${i}`, i, 0);
    for (const at of [0, 1, 0xfe, 0xff, 0x100, count - 1]) expect(columns.typeAt(at)).to.equal(`type-${at}`);
  });

  describe("in a session", () => {
    const tmp = useTempDir("kc-entry-columns-");

    it("reopens a branched session of other-shaped and compact ids with its tree, labels and entries", () => {
      const file = join(tmp.path, "mixed.jsonl");
      const header = {
        type: "session",
        version: 3,
        id: "s1",
        timestamp: "2026-01-01T00:00:00.000Z",
        cwd: tmp.path,
      };
      const lines = [JSON.stringify(header)];
      const ids: string[] = [];
      const parents: (string | null)[] = [];
      for (let i = 0; i < INITIAL_CAPACITY * 2 + 7; i++) {
        const id = i % 3 === 0 ? `entry-${i}` : i.toString(16).padStart(8, "0");
        // A branch off entry 10 at entry 300.
        const parent = i === 0 ? null : i === 300 ? ids[10]! : ids[i - 1]!;
        ids.push(id);
        parents.push(parent);
        const timestamp = "2026-01-01T00:00:00.000Z";
        lines.push(
          JSON.stringify({ type: "message", id, parentId: parent, timestamp, message: user(`m${i}`, 1) }),
        );
      }
      writeFileSync(file, `${lines.join("\n")}\n`);

      const session = SessionManager.open(file);
      try {
        expect(session.warnings).to.deep.equal([]);
        expect(session.getLeafId()).to.equal(ids.at(-1));
        ids.forEach((id, i) => {
          const entry = session.getEntry(id)!;
          expect(entry.id).to.equal(id);
          expect(entry.parentId).to.equal(parents[i]);
        });
        expect(session.getEntry("ffffffff")).to.equal(undefined);
        expect(session.getEntry("entry-1")).to.equal(undefined);
        const branch = session.getBranch().map((e) => e.id);
        expect(branch).to.deep.equal([...ids.slice(0, 11), ...ids.slice(300)]);
        expect(session.getChildren(ids[10]!).map((e) => e.id)).to.deep.equal([ids[11], ids[300]]);
        expect(session.getEntries().map((e) => e.id)).to.deep.equal(ids);
        const roots = session.getTree();
        expect(roots).to.have.length(1);
        expect(roots[0]!.entry.id).to.equal(ids[0]);
        session.appendLabel(ids[299]!, "old end");
        expect(session.getLabel(ids[299]!)).to.equal("old end");
        expect(() => session.getBranch("nope")).to.throw(/no such entry/);
        const fork = session.createBranchedSession(ids[299]!);
        try {
          expect(fork.getBranch().map((e) => e.id)).to.deep.equal(ids.slice(0, 300));
        } finally {
          fork.close();
        }
      } finally {
        session.close();
      }
    });
  });
});

/** The hash table's share of `byteLength`: one 32-bit cell per slot, a power of two at least 4/3 of the entries. */
function tableBytes(columns: EntryColumns): number {
  let cells = INITIAL_CAPACITY * 2;
  while (columns.size * 4 > cells * 3) cells *= 2;
  return cells * 4;
}
