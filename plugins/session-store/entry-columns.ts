/**
 * The tree of a session's entries, kept in columns: one typed array per field (parent, byte offset, byte length,
 * type, id) rather than one object per entry, so a session of hundreds of thousands of entries costs a few
 * dozen bytes per entry and no garbage-collected object per entry.
 *
 * Entries are numbered 0, 1, 2… in the order they are added (file order). Ids the store writes (8 lowercase hex
 * characters, see `SessionManager.newId`) are kept as a 32-bit number and found through an open-addressing hash
 * table on an Int32Array; any other id (a file written by another tool, a hand edit) is kept as a string in a
 * Map, which only such ids pay for.
 */

/**
 * Initial number of entries the columns have room for. They grow by a quarter as needed, not by doubling: the room
 * left unused is then at most a fifth of the columns, where doubling left up to half of them empty (at 300,000
 * entries, columns for 524,288), and a resume's peak memory would grow with the file for nothing.
 */
export const INITIAL_CAPACITY = 256;
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
  private parents = new Int32Array(INITIAL_CAPACITY);
  /** Float64: a file may pass 4 GiB. -1 for an entry that is only in memory. */
  private offsets = new Float64Array(INITIAL_CAPACITY);
  /** A line is read into one Buffer, which Node caps below 4 GiB. */
  private lengths = new Uint32Array(INITIAL_CAPACITY);
  private typeCodes = new Uint8Array(INITIAL_CAPACITY);
  /** The id's number for a compact id; meaningless for the others (see `isCompact`). */
  private idNumbers = new Uint32Array(INITIAL_CAPACITY);
  /** 1 when the id is compact (in `idNumbers`), 0 when it is in `otherIds`. */
  private isCompact = new Uint8Array(INITIAL_CAPACITY);
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
    if (this.count === this.parents.length) this.grow();
    const at = this.count;
    this.parents[at] = parent;
    this.offsets[at] = offset;
    this.lengths[at] = length;
    this.typeCodes[at] = this.codeOf(type, at);
    const value = compactId(id);
    if (value >= 0) {
      this.idNumbers[at] = value;
      this.isCompact[at] = 1;
    } else {
      this.isCompact[at] = 0;
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
    if (last >= 0 && this.isCompact[last] === 1 && this.idNumbers[last] === value) return last;
    const mask = this.table.length - 1;
    for (let cell = this.cellOf(value); ; cell = (cell + 1) & mask) {
      const stored = this.table[cell]!;
      if (stored === 0) return NO_ENTRY;
      const at = stored - 1;
      if (this.idNumbers[at] === value) return at;
    }
  }

  has(id: string): boolean {
    return this.indexOf(id) !== NO_ENTRY;
  }

  idAt(at: number): string {
    if (this.isCompact[at] === 1) return this.idNumbers[at]!.toString(16).padStart(8, "0");
    return this.otherIds.get(at)!;
  }

  /** The parent's number, or -1 for a root. */
  parentAt(at: number): number {
    return this.parents[at]!;
  }

  typeAt(at: number): string {
    const code = this.typeCodes[at]!;
    return code === RARE_TYPE ? this.rareTypes.get(at)! : this.typeNames[code]!;
  }

  offsetAt(at: number): number {
    return this.offsets[at]!;
  }

  lengthAt(at: number): number {
    return this.lengths[at]!;
  }

  /** Bytes the columns and the hash table take (not the Maps of other ids), for tests and measurements. */
  get byteLength(): number {
    return (
      this.parents.byteLength +
      this.offsets.byteLength +
      this.lengths.byteLength +
      this.typeCodes.byteLength +
      this.idNumbers.byteLength +
      this.isCompact.byteLength +
      this.table.byteLength
    );
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
      if (this.isCompact[at] === 1) this.insert(at, this.idNumbers[at]!);
    }
  }

  private grow(): void {
    const capacity = Math.ceil((this.parents.length * 1.25) / 256) * 256;
    this.parents = grown(this.parents, new Int32Array(capacity));
    this.offsets = grown(this.offsets, new Float64Array(capacity));
    this.lengths = grown(this.lengths, new Uint32Array(capacity));
    this.typeCodes = grown(this.typeCodes, new Uint8Array(capacity));
    this.idNumbers = grown(this.idNumbers, new Uint32Array(capacity));
    this.isCompact = grown(this.isCompact, new Uint8Array(capacity));
  }
}

function grown<T extends { set(source: ArrayLike<number>): void }>(old: T, larger: T): T {
  larger.set(old as unknown as ArrayLike<number>);
  return larger;
}
