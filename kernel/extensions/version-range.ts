/**
 * The part of semver ranges an extension's `apiVersion` may use (the npm `semver` package's meaning, for this
 * subset): a version (`0.1.0`), a partial one (`0.1`, `1`, `1.x`: any version it covers), `^` (changes that do not
 * modify the left-most non-zero part), `~` (patch changes; minor changes for a bare major), `>=`, `>`, `<=`, `<`,
 * `*`; comparators separated by spaces must all hold, and `||` separates alternatives. A prerelease version
 * (`0.2.0-beta.1`) satisfies an alternative only when one of its comparators names a prerelease of the same
 * `major.minor.patch`, as in semver. Hyphen ranges (`1.2 - 1.4`) and build metadata in ranges are not supported.
 *
 * Why not the `semver` package: it is well kept, but this subset is about a hundred lines, and the kernel imports no
 * package for something this small.
 */

interface Version {
  nums: [number, number, number];
  pre: (string | number)[];
}

interface Comparator {
  op: ">=" | ">" | "<=" | "<" | "=";
  version: Version;
}

const VERSION = /^v?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;
const PARTIAL =
  /^(\^|~|>=|<=|>|<|=)?\s*v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-([0-9A-Za-z.-]+))?$/;

export function parseVersion(text: string): Version | undefined {
  const m = VERSION.exec(text.trim());
  if (!m) return undefined;
  return {
    nums: [Number(m[1]), Number(m[2]), Number(m[3])],
    pre: m[4] ? m[4].split(".").map((id) => (/^\d+$/.test(id) ? Number(id) : id)) : [],
  };
}

export function compareVersions(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a.nums[i] !== b.nums[i]) return a.nums[i]! - b.nums[i]!;
  if (a.pre.length === 0 || b.pre.length === 0) return b.pre.length - a.pre.length;
  for (let i = 0; i < Math.max(a.pre.length, b.pre.length); i++) {
    const x = a.pre[i];
    const y = b.pre[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    if (typeof x === "number" && typeof y === "number") return x - y;
    if (typeof x === "number") return -1;
    if (typeof y === "number") return 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

const v = (major: number, minor: number, patch: number, pre: (string | number)[] = []): Version => ({
  nums: [major, minor, patch],
  pre,
});

/** One comparator word (`^0.1`, `>=1.2.3`, `1.x`) as the comparators it stands for. */
function desugar(word: string): Comparator[] {
  const m = PARTIAL.exec(word);
  if (!m) throw new Error(`"${word}" is not a version or a comparator`);
  const op = m[1] ?? "=";
  const wild = (part: string | undefined) => part === undefined || /^[xX*]$/.test(part);
  const major = wild(m[2]) ? undefined : Number(m[2]);
  const minor = major === undefined || wild(m[3]) ? undefined : Number(m[3]);
  const patch = minor === undefined || wild(m[4]) ? undefined : Number(m[4]);
  const pre =
    m[5] && patch !== undefined ? m[5].split(".").map((id) => (/^\d+$/.test(id) ? Number(id) : id)) : [];
  if (m[5] && patch === undefined) throw new Error(`"${word}": a prerelease needs a full version`);
  if (major === undefined) return op === "<" || op === ">" ? [{ op: "<", version: v(0, 0, 0) }] : [];
  const low = v(major, minor ?? 0, patch ?? 0, pre);
  /** The first version past what the partial covers (`1.2` → `1.3.0`, `1` → `2.0.0`). */
  const past = minor === undefined ? v(major + 1, 0, 0) : v(major, minor + 1, 0);
  /** An upper bound below every prerelease of `to` too (`<2.0.0-0`), as semver writes them. */
  const below = (to: Version): Comparator => ({ op: "<", version: { nums: to.nums, pre: [0] } });
  switch (op) {
    case "^":
      return [
        { op: ">=", version: low },
        below(
          major > 0 || minor === undefined
            ? v(major + 1, 0, 0)
            : minor > 0 || patch === undefined
              ? v(0, minor + 1, 0)
              : v(0, 0, patch + 1),
        ),
      ];
    case "~":
      return [{ op: ">=", version: low }, below(past)];
    case "=":
      return patch !== undefined ? [{ op: "=", version: low }] : [{ op: ">=", version: low }, below(past)];
    case ">":
      return [patch !== undefined ? { op: ">", version: low } : { op: ">=", version: past }];
    case "<=":
      return [patch !== undefined ? { op: "<=", version: low } : below(past)];
    case "<":
      return [patch !== undefined ? { op: "<", version: low } : below(low)];
    default:
      return [{ op: ">=", version: low }];
  }
}

function holds(c: Comparator, version: Version): boolean {
  const d = compareVersions(version, c.version);
  switch (c.op) {
    case ">=":
      return d >= 0;
    case ">":
      return d > 0;
    case "<=":
      return d <= 0;
    case "<":
      return d < 0;
    default:
      return d === 0;
  }
}

/** The range as alternatives of comparators; throws an Error saying what is wrong with it. */
export function parseRange(range: string): Comparator[][] {
  if (range.trim() === "") throw new Error("the range is empty");
  return range.split("||").map((alternative) => {
    // `>= 1.2` is one comparator: join an operator to the version after it.
    const words = alternative
      .trim()
      .replace(/(\^|~|>=|<=|>|<|=)\s+/g, "$1")
      .split(/\s+/)
      .filter(Boolean);
    if (words.length === 0) throw new Error(`"${range}" has an empty alternative`);
    return words.flatMap(desugar);
  });
}

/** Whether `version` (a full version) is in `range`; throws when either cannot be read. */
export function satisfies(version: string, range: string): boolean {
  const parsed = parseVersion(version);
  if (!parsed) throw new Error(`"${version}" is not a version`);
  return parseRange(range).some(
    (comparators) =>
      comparators.every((c) => holds(c, parsed)) &&
      (parsed.pre.length === 0 ||
        comparators.some(
          (c) => c.version.pre.length > 0 && c.version.nums.every((n, i) => n === parsed.nums[i]),
        )),
  );
}
