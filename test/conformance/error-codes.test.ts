/** Every `KC_ERR_*` code the sources raise or match on is in the one table of codes (kernel/api/error-codes.ts). */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { errorCodes } from "../../kernel/api/error-codes.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

describe("error codes", () => {
  it("lists every code that appears in the sources, and each has a meaning", () => {
    const used = new Map<string, string>();
    for (const dir of ["kernel", "plugins", "builtin-extensions", "hosts"]) {
      for (const entry of readdirSync(join(root, dir), { withFileTypes: true, recursive: true })) {
        if (!entry.isFile() || !entry.name.endsWith(".ts")) continue;
        const file = join(entry.parentPath, entry.name);
        for (const match of readFileSync(file, "utf8").matchAll(/\bKC_ERR_[A-Z_]+\b/g)) {
          used.set(match[0], file.slice(root.length));
        }
      }
    }
    const missing = [...used].filter(([code]) => !Object.hasOwn(errorCodes, code));
    expect(missing).to.deep.equal([]);
    expect(used.size).to.be.greaterThan(30);
    for (const [code, meaning] of Object.entries(errorCodes))
      expect(meaning.length, code).to.be.greaterThan(20);
  });
});
