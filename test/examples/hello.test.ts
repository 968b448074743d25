/** The first example of the extension guide: /hello notifies a greeting. */

import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import hello from "../../examples/extensions/hello.js";

describe("examples/extensions/hello.ts", () => {
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it("greets the name given to /hello, or the world", async () => {
    t = await createTestSession({ extensions: [hello] });
    await t.prompt("/hello Ada");
    await t.prompt("/hello");
    expect(t.ui.notifications).to.deep.equal([
      { message: "Hello, Ada!", level: "info" },
      { message: "Hello, world!", level: "info" },
    ]);
    expect(t.eventsOfType("agent_start")).to.deep.equal([]);
  });
});
