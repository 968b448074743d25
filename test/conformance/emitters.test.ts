/**
 * Every catalogued event has an emitter in the sources, unless the catalogue marks it reserved for a feature that
 * has not landed; and a reserved event has none (then it is no longer reserved). Emitters are found as dispatch
 * calls with the event's name as a literal (`bus.emit("agent_start", ...)`), which typed dispatch requires.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { eventCatalog, eventNames } from "../../kernel/events/catalog.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const DISPATCH = /\.(emit|gate|transform|lastWins|boundary|emitHot)\(\s*"([a-z_]+)"/g;

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts"))
    .map((e) => join(e.parentPath, e.name));
}

function emittedEvents(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of ["kernel", "plugins", "builtin-extensions", "hosts"].flatMap(sources)) {
    const text = readFileSync(file, "utf8");
    for (const match of text.matchAll(DISPATCH)) {
      const name = match[2]!;
      found.set(name, [...(found.get(name) ?? []), file.slice(root.length)]);
    }
  }
  return found;
}

describe("event emitters", () => {
  const emitted = emittedEvents();

  it("finds an emitter for every event that is not reserved", () => {
    const missing = eventNames.filter((name) => !eventCatalog[name].reserved && !emitted.has(name));
    expect(missing).to.deep.equal([]);
  });

  it("finds no emitter for a reserved event (drop the mark when its feature lands)", () => {
    const early = eventNames.filter((name) => eventCatalog[name].reserved && emitted.has(name));
    expect(early).to.deep.equal([]);
  });

  it("dispatches only catalogued events", () => {
    const unknown = [...emitted.keys()].filter((name) => !eventNames.includes(name as never));
    expect(unknown).to.deep.equal([]);
  });
});
