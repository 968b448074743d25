/**
 * A slow start on a terminal says why it waits: when the session takes over a second to open (a large package's
 * first start compiles its TypeScript), stderr on a terminal shows one line, erased once the session is open. Not on
 * a pipe: scripts and protocol clients see nothing new. The extension here holds the start until the test lets it
 * go (a file appears), so no timing decides the outcome.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { hasTmux, TmuxDriver } from "../../builtin-extensions/mode-interactive/tmux-driver.js";
import { cliBin, runCli } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const NOTICE = "Loading extensions…";

/** An extension whose module waits (top-level await) until the file KC_RELEASE names exists. */
const HELD = `import { existsSync } from "node:fs";
const release = process.env.KC_RELEASE!;
const deadline = Date.now() + 30_000;
while (!existsSync(release) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
console.error("held: released");
export default function () {}
`;

describe("knightcode: a slow start on a terminal says why it waits", function () {
  this.timeout(60_000);
  const tmp = useTempDir("kc-slow-open-");
  let term: TmuxDriver | undefined;
  afterEach(() => {
    term?.close();
    term = undefined;
  });

  function setup(): { ext: string; script: string; release: string; env: string } {
    const ext = tmp.write("held.ts", HELD);
    const script = tmp.write("script.json", JSON.stringify({ steps: [{ text: "The answer." }] }));
    const release = join(tmp.path, "release");
    const env = `KNIGHTCODE_AGENT_DIR=${join(tmp.path, "agent")} KC_RELEASE=${release}`;
    return { ext, script, release, env };
  }

  for (const [mode, flags, shownAfter] of [
    ["the interactive mode", "", "KnightCode"],
    ["a print run", "-p", "KC-EXIT-0"],
    ["--list-extensions", "--list-extensions", "KC-EXIT-0"],
  ] as const) {
    it(`${mode}: the line shows while the session opens and is gone after`, async function () {
      if (!hasTmux) this.skip();
      const { ext, script, release, env } = setup();
      term = new TmuxDriver();
      const command = `${env} ${process.execPath} ${cliBin} ${flags} -e ${ext} --provider scripted --script ${script} --no-session "Go"`;
      term.start(command, tmp.path, 100, 20);
      const waiting = await term.waitFor(NOTICE);
      expect(waiting).to.contain("the first start of a package compiles its TypeScript");
      writeFileSync(release, "");
      const after = await term.waitFor(shownAfter);
      expect(after).to.not.contain(NOTICE);
      if (flags === "-p") expect(after).to.contain("\nThe answer.\n");
      if (flags === "--list-extensions") expect(after).to.contain("held.ts");
      // What the extension wrote to stderr while the line showed starts on a line of its own.
      if (flags !== "") expect(after.split("\n")).to.include("held: released");
    });
  }

  it("writes nothing when stderr is not a terminal", async () => {
    const { ext, script, release } = setup();
    // Let the start go after 1.5 s: past the moment the line would show.
    const timer = setTimeout(() => writeFileSync(release, ""), 1500);
    try {
      const result = await runCli(
        ["-p", "-e", ext, "--provider", "scripted", "--script", script, "--no-session", "Go"],
        {
          cwd: tmp.path,
          env: { KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent"), KC_RELEASE: release },
        },
      );
      expect(result).to.deep.equal({ code: 0, stdout: "The answer.\n", stderr: "held: released\n" });
    } finally {
      clearTimeout(timer);
    }
  });
});
