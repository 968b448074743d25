/**
 * App-server behaviour the spec promises that had no test (issue 32): `turn/steer` on a thread with no turn running
 * answers `noActiveTurn`; `git/commit` runs the repository's own hooks (a `pre-commit` that refuses stops the
 * commit, its output in the error; one that passes has run).
 */
import { chmodSync, existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { useTempDir } from "../../helpers/temp-dir.js";
import { git, rpcError, startGitServer, write } from "./git-harness.js";
import { type Harness, harness } from "./harness.js";

describe("knightcode app-server: noActiveTurn and commit hooks", function () {
  this.timeout(60_000);
  let h: Harness;
  afterEach(async () => h?.close());
  const tmp = useTempDir("kc-appserver-untested-");

  it("answers turn/steer on an idle thread with noActiveTurn", async () => {
    h = await harness(tmp.path);
    const server = await h.start();
    await server.client.initialize();
    const { thread } = await server.client.request("thread/start", { cwd: h.project });
    const error = await rpcError(
      server.client.request("turn/steer", {
        threadId: thread.id,
        input: [{ type: "text", text: "faster" }],
        expectedTurnId: "none",
      }),
      "noActiveTurn",
    );
    expect(error.code).to.equal(-32600);
  });

  it("runs the repository's pre-commit hook on git/commit", async () => {
    h = await harness(tmp.path);
    const { server } = await startGitServer(h);
    const { client } = server;
    const { thread } = await client.request("thread/start", { cwd: h.project });
    const hook = join(h.project, ".git", "hooks", "pre-commit");
    const marker = join(tmp.path, "hook-ran");
    // A hook that refuses while a file says so, and leaves a mark each time it runs.
    write(
      h.project,
      ".git/hooks/pre-commit",
      `#!/bin/sh\ntouch ${JSON.stringify(marker)}\nif [ -e refuse ]; then echo "refused by the hook" >&2; exit 1; fi\n`,
    );
    chmodSync(hook, 0o755);
    write(h.project, "refuse", "x\n");
    write(h.project, "c.txt", "c\n");
    const before = git(h.project, ["rev-parse", "HEAD"]).trim();
    // The spec names no reason for a refusing hook: the error carries the hook's own output.
    const refused = await client.request("git/commit", { threadId: thread.id, message: "Add c" }).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(refused?.message).to.contain("refused by the hook");
    expect(existsSync(marker)).to.equal(true);
    expect(git(h.project, ["rev-parse", "HEAD"]).trim()).to.equal(before);

    // Without the file the hook passes and the commit lands.
    git(h.project, ["reset", "-q"]);
    rmSync(join(h.project, "refuse"));
    rmSync(marker);
    const commit = await client.request("git/commit", { threadId: thread.id, message: "Add c" });
    expect(commit).to.be.an("object");
    expect(git(h.project, ["log", "-1", "--format=%s"]).trim()).to.equal("Add c");
    expect(existsSync(marker)).to.equal(true);
  });
});
