/**
 * Random identifiers (session ids, entry ids, temp-file suffixes) and SHA-256 digests, without loading
 * `node:crypto` when a module loads. Requiring node:crypto costs a start-up a few milliseconds (it brings some
 * thirty modules with it), and a print or JSON run needs nothing else from it: its ids come from the operating
 * system's random source, `/dev/urandom`, read a few hundred bytes at a time, which is what node:crypto's
 * `randomBytes` reads in the end too. Where that device cannot be read (Windows), node:crypto serves them.
 */
import { closeSync, openSync, readSync } from "node:fs";

const nodeCrypto = () => process.getBuiltinModule("node:crypto");

/** Random bytes read ahead; each is handed out once. */
let pool = Buffer.alloc(0);
let used = 0;
let noDevice = process.platform === "win32";

const POOL_BYTES = 512;

function fill(size: number): void {
  if (!noDevice) {
    try {
      const fd = openSync("/dev/urandom", "r");
      try {
        const bytes = Buffer.allocUnsafe(size);
        let read = 0;
        while (read < size) {
          const n = readSync(fd, bytes, read, size - read, null);
          if (n <= 0) throw new Error("/dev/urandom ended");
          read += n;
        }
        pool = bytes;
        used = 0;
        return;
      } finally {
        closeSync(fd);
      }
    } catch {
      noDevice = true;
    }
  }
  pool = nodeCrypto().randomBytes(size);
  used = 0;
}

/** `count` bytes from a cryptographically secure source. */
export function secureRandomBytes(count: number): Buffer {
  if (used + count > pool.length) fill(Math.max(POOL_BYTES, count));
  const bytes = Buffer.from(pool.subarray(used, used + count));
  // Handed-out bytes are not kept where a later caller could read them again.
  pool.fill(0, used, used + count);
  used += count;
  return bytes;
}

/** `count` random bytes as `2 * count` hex characters. */
export function randomHex(count: number): string {
  return secureRandomBytes(count).toString("hex");
}

/** A random (version 4) UUID, as `crypto.randomUUID()` makes. */
export function randomUuid(): string {
  const b = secureRandomBytes(16);
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = b.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The SHA-256 of `data` in hex; node:crypto loads with the first digest. */
export function sha256Hex(data: string | Uint8Array): string {
  return nodeCrypto().createHash("sha256").update(data).digest("hex");
}
