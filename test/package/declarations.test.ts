/**
 * The published declarations (`dist/**.d.ts`, written by `npm run build`) keep the repository's internals out:
 * nothing declares the session internals or the handle's `@internal` members, so a host or extension author cannot
 * type-check against them. Run `npm run build` first.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";

const dist = fileURLToPath(new URL("../../dist/", import.meta.url));

function declarations(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "vendor" ? [] : declarations(path);
    return entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

describe("published declarations", () => {
  it("declare no session internals and none of the handle's @internal members", () => {
    const files = declarations(dist);
    expect(files.length, "npm run build wrote the declarations").to.be.greaterThan(50);
    const leaks = files.flatMap((file) => {
      const text = readFileSync(file, "utf8");
      return [/\bsessionInternals\b/, /\bSessionInternals\b/, /\binternals\(\)/, /\bregisterInternals\b/]
        .filter((pattern) => pattern.test(text))
        .map((pattern) => `${file.slice(dist.length)}: ${pattern}`);
    });
    expect(leaks).to.deep.equal([]);
    const handle = readFileSync(join(dist, "hosts/sdk/session-handle.d.ts"), "utf8");
    expect(handle).to.contain("class AgentSessionHandle");
    expect(handle, "the handle's start() is @internal").to.not.match(/\bstart\(\): Promise<void>/);
  });
});
