/** The check every app-server test's client runs can tell a wrong message from a right one. */
import { expect } from "chai";
import { protocolCheck } from "./protocol-check.js";

describe("app-server protocol check", () => {
  it("names the first problem of a result, a notification or a server request, and passes what matches", () => {
    expect(protocolCheck.result?.("thread/list", { data: [] })).to.equal(undefined);
    expect(protocolCheck.result?.("thread/list", { data: [{ id: "t" }] })).to.match(/^\/data\/0/);
    expect(protocolCheck.result?.("demo/echo", { anything: true })).to.equal(undefined);
    expect(protocolCheck.notification?.("thread/closed", { threadId: "t" })).to.equal(undefined);
    expect(protocolCheck.notification?.("thread/closed", {})).to.match(/threadId/);
    expect(protocolCheck.notification?.("thread/exploded", {})).to.match(/not a notification/);
    expect(protocolCheck.serverRequest?.("ui/dialog", { threadId: "t", kind: "beep", title: "x" })).to.match(
      /\/kind/,
    );
  });
});
