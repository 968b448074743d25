/**
 * errorMessage: the one function every error report takes its text from. An extension can throw anything, and
 * describing what it threw must never throw in turn.
 */
import { expect } from "chai";
import { errorMessage } from "../../kernel/errors.js";

const trap = () => {
  throw new Error("trapped");
};

describe("kernel: errorMessage", () => {
  it("gives an Error's message, a string itself, and other values as JSON", () => {
    expect(errorMessage(new TypeError("bad input"))).to.equal("bad input");
    expect(errorMessage("plain words")).to.equal("plain words");
    expect(errorMessage({ code: 7 })).to.equal('{"code":7}');
    expect(errorMessage(undefined)).to.equal("undefined");
    expect(errorMessage(null)).to.equal("null");
  });

  it("describes an object whose message getter throws, naming why it could not be read", () => {
    const thrown = {
      get message(): string {
        throw new Error("gotcha");
      },
    };
    expect(errorMessage(thrown)).to.equal("an unreadable object was thrown (reading it failed: gotcha)");
  });

  it("describes an Error whose message getter throws", () => {
    const error = new Error("hidden");
    Object.defineProperty(error, "message", { get: trap });
    expect(() => errorMessage(error)).not.to.throw();
    expect(errorMessage(error)).to.contain("unreadable");
  });

  it("describes a Proxy whose every trap throws, and a revoked Proxy", () => {
    const hostile = new Proxy({}, { get: trap, getPrototypeOf: trap, ownKeys: trap, has: trap });
    expect(errorMessage(hostile)).to.contain("an unreadable object was thrown");
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    expect(errorMessage(proxy)).to.contain("an unreadable object was thrown");
  });

  it("falls back to the value's text for circular objects and BigInts, and survives a throwing toString", () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(errorMessage(circular)).to.contain("unreadable object");
    expect(errorMessage(12n)).to.equal("12");
    const noText = { toJSON: trap, toString: trap };
    expect(errorMessage(noText)).to.equal("an unreadable object was thrown (reading it failed: trapped)");
  });
});
