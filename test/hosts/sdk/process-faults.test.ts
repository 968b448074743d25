/**
 * The process-level fault handlers follow the sessions that are open: installed with the first, removed with the
 * last, also when a session fails to start, so neither the SDK nor a test suite is left with listeners.
 */
import { join } from "node:path";
import { expect } from "chai";
import {
  type AgentSessionHandle,
  createAgentSession,
  createStandardKernel,
} from "../../../hosts/sdk/create-agent-session.js";
import type { Kernel } from "../../../kernel/index.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("createAgentSession: process-level fault handlers", () => {
  const tmp = useTempDir("kc-faults-sdk-");
  let kernel: Kernel;
  const listeners = () => ({
    exception: process.listenerCount("uncaughtException"),
    rejection: process.listenerCount("unhandledRejection"),
  });

  beforeEach(async () => {
    kernel = await createStandardKernel({ agentDir: join(tmp.path, "agent"), cacheDir: false });
  });
  afterEach(() => kernel.dispose());

  const open = () =>
    createAgentSession({
      cwd: tmp.path,
      agentDir: join(tmp.path, "agent"),
      kernel,
      warn: () => {},
      session: { inMemory: true },
    });

  it("installs one pair of listeners while sessions are open and removes it with the last dispose", async () => {
    const before = listeners();
    const first: AgentSessionHandle = await open();
    expect(listeners()).to.deep.equal({ exception: before.exception + 1, rejection: before.rejection + 1 });
    const second = await open();
    expect(listeners(), "a second session shares the listeners").to.deep.equal({
      exception: before.exception + 1,
      rejection: before.rejection + 1,
    });
    await first.dispose();
    expect(listeners().exception).to.equal(before.exception + 1);
    await second.dispose();
    expect(listeners()).to.deep.equal(before);
  });

  it("removes them when the session cannot be opened", async () => {
    const before = listeners();
    let failure: unknown;
    await createAgentSession({
      cwd: tmp.path,
      agentDir: join(tmp.path, "agent"),
      kernel,
      warn: () => {},
      session: { path: join(tmp.path, "missing.jsonl") },
    }).catch((error: unknown) => {
      failure = error;
    });
    expect(String(failure)).to.contain("missing.jsonl");
    expect(listeners()).to.deep.equal(before);
  });
});
