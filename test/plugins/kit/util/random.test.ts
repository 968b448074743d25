import { createHash } from "node:crypto";
import { expect } from "chai";
import { randomHex, randomUuid, secureRandomBytes, sha256Hex } from "../../../../plugins/kit/util/random.js";

describe("kit random ids without node:crypto at load", () => {
  it("makes version 4 UUIDs, all different", () => {
    const ids = Array.from({ length: 2000 }, () => randomUuid());
    for (const id of ids)
      expect(id).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(ids).size).to.equal(ids.length);
  });

  it("hands out hex of the asked length, across refills of its pool", () => {
    const seen = new Set<string>();
    // 300 x 6 bytes is more than three pools' worth.
    for (let i = 0; i < 300; i++) {
      const hex = randomHex(6);
      expect(hex).to.match(/^[0-9a-f]{12}$/);
      seen.add(hex);
    }
    expect(seen.size).to.equal(300);
    // A request larger than the pool is served whole.
    expect(secureRandomBytes(2048)).to.have.length(2048);
  });

  it("returns bytes the caller owns: changing them changes no later answer", () => {
    const first = secureRandomBytes(16);
    first.fill(0);
    const next = secureRandomBytes(16);
    expect(next.equals(Buffer.alloc(16))).to.equal(false);
    // Bytes are spread: 8 KB of output has all 256 values (a stuck source would not).
    expect(new Set(secureRandomBytes(8192)).size).to.equal(256);
  });

  it("digests with SHA-256 as node:crypto does", () => {
    for (const data of ["", "settings", Buffer.from([0, 1, 2, 255])]) {
      expect(sha256Hex(data)).to.equal(createHash("sha256").update(data).digest("hex"));
    }
  });
});
