/**
 * The tree of a session's entries, kept in columns: typed arrays per field (parent, byte offset, byte length,
 * type, id), in blocks of `BLOCK_SIZE` entries, rather than one object per entry, so a session of hundreds of thousands of entries costs a few
 * dozen bytes per entry and no garbage-collected object per entry.
 *
 * Entries are numbered 0, 1, 2… in the order they are added (file order). Ids the store writes (8 lowercase hex
 * characters, see `SessionManager.newId`) are kept as a 32-bit number and found through an open-addressing hash
 * table on an Int32Array; any other id (a file written by another tool, a hand edit) is kept as a string in a
 * Map, which only such ids pay for.
 */

/**
 * Entries per block. The columns are kept in blocks of this many entries, added as needed and never copied: a
 * session's columns never hold more than one block of unused room, and growing never needs the old and the new
 * arrays at once (growing by copying peaked at more than twice the columns while a 300,000-entry file was read).
 */
export const BLOCK_SIZE = 4096;
const BLOCK_SHIFT = 12;
const BLOCK_MASK = BLOCK_SIZE - 1;
/** Room the hash table starts with. */
export const INITIAL_CAPACITY = BLOCK_SIZE;
/** The type code meaning "the type is one of the rare ones kept in a Map" (more distinct types than codes). */
const RARE_TYPE = 0xff;
const NO_ENTRY = -1;
/** Golden-ratio multiplier of Fibonacci hashing. */
const HASH_MULTIPLIER = 0x9e3779b1;

/** The id as a 32-bit number when it is exactly 8 lowercase hex characters, else -1. */
export function compactId(id: string): number {
  if (id.length !== 8) return -1;
  let value = 0;
  for (let i = 0; i < 8; i++) {
    const c = id.charCodeAt(i);
    let digit: number;
    if (c >= 0x30 && c <= 0x39) digit = c - 0x30;
    else if (c >= 0x61 && c <= 0x66) digit = c - 0x61 + 10;
    else return -1;
    value = value * 16 + digit;
  }
  return value;
}

export class EntryColumns {
  private count = 0;
  private readonly blocks: Block[] = [];
  /** Open addressing, linear probing: entry number + 1 per cell, 0 for an empty cell. At most 3/4 full. */
  private table = new Int32Array(INITIAL_CAPACITY * 2);
  private tableShift = 32 - Math.log2(INITIAL_CAPACITY * 2);

  private readonly otherIds = new Map<number, string>();
  private readonly otherIndex = new Map<string, number>();
  private readonly typeNames: string[] = [];
  private readonly typeCodeOf = new Map<string, number>();
  private readonly rareTypes = new Map<number, string>();

  /** How many entries there are. */
  get size(): number {
    return this.count;
  }

  /**
   * Adds an entry at the end and returns its number. `parent` is an earlier entry's number, or -1 for a root.
   * The caller makes sure `id` is not already there.
   */
  add(id: string, parent: number, type: string, offset: number, length: number): number {
    const at = this.count;
    const slot = at & BLOCK_MASK;
    if (slot === 0) this.blocks.push(newBlock());
    const block = this.blocks[at >>> BLOCK_SHIFT]!;
    block.parents[slot] = parent;
    block.offsets[slot] = offset;
    block.lengths[slot] = length;
    block.typeCodes[slot] = this.codeOf(type, at);
    const value = compactId(id);
    if (value >= 0) {
      block.idNumbers[slot] = value;
      block.isCompact[slot] = 1;
    } else {
      block.isCompact[slot] = 0;
      this.otherIds.set(at, id);
      this.otherIndex.set(id, at);
    }
    this.count++;
    if (value >= 0) {
      if (this.count * 4 > this.table.length * 3) this.rehash(this.table.length * 2);
      else this.insert(at, value);
    }
    return at;
  }

  /** The number of the entry with this id, or -1. */
  indexOf(id: string): number {
    const value = compactId(id);
    if (value < 0) return this.otherIndex.get(id) ?? NO_ENTRY;
    // Most lookups are of the entry just added (a parent in a linear session): no probing for that.
    const last = this.count - 1;
    if (last >= 0 && this.compactAt(last) === value) return last;
    const mask = this.table.length - 1;
    for (let cell = this.cellOf(value); ; cell = (cell + 1) & mask) {
      const stored = this.table[cell]!;
      if (stored === 0) return NO_ENTRY;
      const at = stored - 1;
      if (this.compactAt(at) === value) return at;
    }
  }

  has(id: string): boolean {
    return this.indexOf(id) !== NO_ENTRY;
  }

  idAt(at: number): string {
    const value = this.compactAt(at);
    if (value >= 0) return value.toString(16).padStart(8, "0");
    return this.otherIds.get(at)!;
  }

  /** The parent's number, or -1 for a root. */
  parentAt(at: number): number {
    return this.blocks[at >>> BLOCK_SHIFT]!.parents[at & BLOCK_MASK]!;
  }

  typeAt(at: number): string {
    const code = this.blocks[at >>> BLOCK_SHIFT]!.typeCodes[at & BLOCK_MASK]!;
    return code === RARE_TYPE ? this.rareTypes.get(at)! : this.typeNames[code]!;
  }

  offsetAt(at: number): number {
    return this.blocks[at >>> BLOCK_SHIFT]!.offsets[at & BLOCK_MASK]!;
  }

  lengthAt(at: number): number {
    return this.blocks[at >>> BLOCK_SHIFT]!.lengths[at & BLOCK_MASK]!;
  }

  /** Bytes the columns and the hash table take (not the Maps of other ids), for tests and measurements. */
  get byteLength(): number {
    return this.blocks.length * BLOCK_BYTES + this.table.byteLength;
  }

  private codeOf(type: string, at: number): number {
    const known = this.typeCodeOf.get(type);
    if (known !== undefined) return known;
    if (this.typeNames.length < RARE_TYPE) {
      const code = this.typeNames.length;
      this.typeNames.push(type);
      this.typeCodeOf.set(type, code);
      return code;
    }
    this.rareTypes.set(at, type);
    return RARE_TYPE;
  }

  private cellOf(value: number): number {
    return Math.imul(value, HASH_MULTIPLIER) >>> this.tableShift;
  }

  private insert(at: number, value: number): void {
    const mask = this.table.length - 1;
    let cell = this.cellOf(value);
    while (this.table[cell] !== 0) cell = (cell + 1) & mask;
    this.table[cell] = at + 1;
  }

  private rehash(cells: number): void {
    this.table = new Int32Array(cells);
    this.tableShift = 32 - Math.log2(cells);
    for (let at = 0; at < this.count; at++) {
      const value = this.compactAt(at);
      if (value >= 0) this.insert(at, value);
    }
  }

  /** The id's number when entry `at` has a compact id, else -1. */
  private compactAt(at: number): number {
    const block = this.blocks[at >>> BLOCK_SHIFT]!;
    const slot = at & BLOCK_MASK;
    return block.isCompact[slot] === 1 ? block.idNumbers[slot]! : -1;
  }
}

/** One block of the columns: the fields of `BLOCK_SIZE` consecutive entries. */
interface Block {
  parents: Int32Array;
  /** Float64: a file may pass 4 GiB. -1 for an entry that is only in memory. */
  offsets: Float64Array;
  /** A line is read into one Buffer, which Node caps below 4 GiB. */
  lengths: Uint32Array;
  typeCodes: Uint8Array;
  /** The id's number for a compact id; meaningless for the others (see `isCompact`). */
  idNumbers: Uint32Array;
  /** 1 when the id is compact (in `idNumbers`), 0 when it is in `otherIds`. */
  isCompact: Uint8Array;
}

/** Bytes per entry across the columns. */
const BLOCK_BYTES = BLOCK_SIZE * (4 + 8 + 4 + 1 + 4 + 1);

function newBlock(): Block {
  return {
    parents: new Int32Array(BLOCK_SIZE),
    offsets: new Float64Array(BLOCK_SIZE),
    lengths: new Uint32Array(BLOCK_SIZE),
    typeCodes: new Uint8Array(BLOCK_SIZE),
    idNumbers: new Uint32Array(BLOCK_SIZE),
    isCompact: new Uint8Array(BLOCK_SIZE),
  };
}
