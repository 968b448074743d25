/** The safe serialiser: JSON for anything an extension produced, with every value JSON cannot write replaced. */
import { expect } from "chai";
import { stringifySafely, toJsonSafe } from "../../../../plugins/kit/util/safe-json.js";

describe("kit: safe JSON", () => {
  it("writes what JSON can write exactly as JSON.stringify does, and returns the same object", () => {
    const value = { a: [1, "two", null, { b: true }], shared: { x: 1 }, when: new Date(0) };
    expect(stringifySafely(value)).to.deep.equal({ text: JSON.stringify(value), replaced: [] });
    expect(toJsonSafe(value).value).to.equal(value);
    expect(stringifySafely(undefined).text).to.equal("null");
  });

  it("replaces a circular reference and a BigInt, listing each with its path", () => {
    const details: Record<string, unknown> = { count: 12n, list: [1n] };
    details.self = details;
    const { text, replaced } = stringifySafely({ details });
    expect(JSON.parse(text)).to.deep.equal({ details: { count: "12", list: ["1"], self: "[Circular]" } });
    expect(replaced).to.deep.equal([
      "value.details.count: a BigInt, written as a string",
      "value.details.list[0]: a BigInt, written as a string",
      'value.details.self: a circular reference, written as "[Circular]"',
    ]);
  });

  it("keeps an object seen twice outside a cycle (a shared reference is not circular)", () => {
    const shared = { n: 1 };
    const { value, replaced } = toJsonSafe({ a: shared, b: shared, c: 1n }, "details");
    expect(value).to.deep.equal({ a: { n: 1 }, b: { n: 1 }, c: "1" });
    expect(replaced).to.deep.equal(["details.c: a BigInt, written as a string"]);
  });

  it("replaces a throwing getter, a throwing toJSON and a hostile Proxy, and never throws", () => {
    const trap = () => {
      throw new Error("no");
    };
    const value = {
      ok: 1,
      get bad(): number {
        throw new Error("getter failed");
      },
      custom: { toJSON: trap },
      proxy: new Proxy({}, { ownKeys: trap, get: trap, getPrototypeOf: trap }),
    };
    const { text, replaced } = stringifySafely(value);
    expect(JSON.parse(text)).to.deep.equal({
      ok: 1,
      bad: "[Unserializable]",
      custom: "[Unserializable]",
      proxy: "[Unserializable]",
    });
    expect(replaced[0]).to.equal(
      'value.bad: reading it threw (getter failed), written as "[Unserializable]"',
    );
    expect(replaced).to.have.length(3);
  });

  it("replaces a structure nested too deep to walk instead of overflowing the stack", () => {
    let deep: Record<string, unknown> = { end: 1n };
    for (let i = 0; i < 20_000; i++) deep = { deep };
    const { text, replaced } = stringifySafely(deep);
    expect(text).to.contain('"[Too deep]"');
    expect(replaced).to.have.length(1);
  });
});
