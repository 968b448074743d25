/**
 * Values an extension hands to the session (`sendMessage` details, `appendEntry` data) that JSON cannot write are
 * replaced where the extension is known, and the replacement is reported against it (`extension_error`).
 */
import type { ExtensionAPI } from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";

describe("SDK: values an extension stores that JSON cannot write", () => {
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it("replaces circular sendMessage details and BigInt appendEntry data, and blames the extension", async () => {
    let api: ExtensionAPI | undefined;
    t = await createTestSession({
      script: [{ text: "ok" }],
      extensions: [
        (kc) => {
          api = kc;
        },
      ],
    });
    const details: Record<string, unknown> = { step: 1 };
    details.self = details;
    api!.sendMessage({ customType: "note", content: "remember this", details }, { triggerTurn: true });
    await t.session.waitForIdle();
    await new Promise((r) => setTimeout(r, 20));
    await t.session.waitForIdle();
    api!.appendEntry("counter", { total: 10n ** 20n });
    await new Promise((r) => setImmediate(r));

    const entries = t.session.sessionManager.getBranch() as unknown as Record<string, any>[];
    const note = entries.find((e) => e.customType === "note");
    expect(note?.details).to.deep.equal({ step: 1, self: "[Circular]" });
    const counter = entries.find((e) => e.customType === "counter");
    expect(counter?.data).to.deep.equal({ total: "100000000000000000000" });

    const reported = t
      .eventsOfType("extension_error")
      .map((e) => ({ event: e.event, error: String(e.error) }));
    expect(reported).to.deep.equal([
      {
        event: "sendMessage",
        error:
          'sendMessage was given a value that cannot be written as JSON: details.self: a circular reference, written as "[Circular]"',
      },
      {
        event: "appendEntry",
        error:
          "appendEntry was given a value that cannot be written as JSON: data.total: a BigInt, written as a string",
      },
    ]);
  });
});
