/**
 * The app-server's handlers return the protocol's own types (TypeBox `Static` of protocol.ts), so the compiler checks
 * every result: no cast may hide a result from it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";

const folder = fileURLToPath(new URL("../../../builtin-extensions/mode-app-server/", import.meta.url));

describe("app-server types", () => {
  it("has no `as never`, `as any` or `@ts-ignore` in builtin-extensions/mode-app-server/", () => {
    const found: string[] = [];
    for (const name of readdirSync(folder).filter((n) => n.endsWith(".ts"))) {
      readFileSync(join(folder, name), "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (/\bas never\b|\bas any\b|@ts-ignore/.test(line)) found.push(`${name}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(found).to.deep.equal([]);
  });
});
