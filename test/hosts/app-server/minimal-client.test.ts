/**
 * The minimal client of docs/app-server.md ("A minimal client"), a Python script with only the standard library,
 * run exactly as the document shows it against the built `knightcode app-server` and a local model server: what
 * the document promises a client author must work.
 */
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { textStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { cliBin } from "../../helpers/cli.js";
import { runProcess } from "../../helpers/processes.js";
import { writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { type Harness, harness } from "./harness.js";

const doc = fileURLToPath(new URL("../../../docs/app-server.md", import.meta.url));

/** The first python block after the "A minimal client" heading. */
function documentedClient(): string {
  const text = readFileSync(doc, "utf8");
  const section = text.slice(text.indexOf("## A minimal client"));
  const match = /```python\n([\s\S]*?)```/.exec(section);
  if (!match?.[1]) throw new Error('docs/app-server.md has no python block under "A minimal client"');
  return match[1];
}

describe("docs/app-server.md: the minimal client", function () {
  this.timeout(60_000);
  let h: Harness | undefined;
  afterEach(async () => h?.close());
  const tmp = useTempDir("kc-appserver-minimal-");

  it("runs as documented: handshake, a thread, a turn whose answer streams to stdout", async function () {
    if (spawnSync("python3", ["--version"]).status !== 0) this.skip();
    h = await harness(tmp.path);
    h.model.respond((_req, res) => writeSse(res, textStream("Hello from the local model")));
    const script = join(tmp.path, "client.py");
    writeFileSync(script, documentedClient());
    const result = await runProcess("python3", [script, "Say hello"], {
      what: "the documented client",
      cwd: h.project,
      env: {
        ...process.env,
        KNIGHTCODE: `${process.execPath} ${cliBin}`,
        KNIGHTCODE_AGENT_DIR: h.agentDir,
        LOCAL_KEY: "sk-local",
      },
      timeoutMs: 45_000,
    });
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.equal("Hello from the local model\n[turn completed]\n");
    // The prompt reached the model.
    expect(JSON.stringify(h.model.requests[0]?.body.messages)).to.contain("Say hello");
  });
});
