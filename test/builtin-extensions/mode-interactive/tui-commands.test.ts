/**
 * The interactive mode's everyday commands, keys and tool calls, end to end: the built `knightcode` runs in tmux
 * against a local server that speaks the OpenAI Chat Completions wire format, and the tests read the screen.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { cliBin } from "../../helpers/cli.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { type TestServer, writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import {
  DONE,
  finishChunk,
  roleChunk,
  textChunks,
  textStream,
  toolCallChunks,
  toolCallStream,
  usageChunk,
} from "../providers/openai-compatible/fixtures.js";
import { type TmuxDriver, useTerminalAndModel } from "./tmux-driver.js";

describe("interactive commands, keys and tool calls (tmux, local model server)", function () {
  this.timeout(90_000);
  const tmp = useTempDir("kc-tui-cmd-");
  let server: TestServer;
  let term: TmuxDriver;

  useTerminalAndModel((started) => {
    ({ server, term } = started);
  });

  const agentDir = () => join(tmp.path, "agent");

  function launch(options: { extension?: string; env?: string; columns?: number; rows?: number } = {}): void {
    writeLocalModels(agentDir(), {
      baseUrl: `${server.url}/v1`,
      apiKey: "LOCAL_KEY",
      models: [
        { id: "m1", contextWindow: 32_000, maxTokens: 1024 },
        { id: "m2", contextWindow: 64_000, maxTokens: 1024 },
      ],
    });
    const command = [
      `${options.env ?? ""} KNIGHTCODE_AGENT_DIR=${agentDir()} LOCAL_KEY=sk-local`,
      process.execPath,
      cliBin,
      ...(options.extension ? ["-e", options.extension] : []),
      "--provider local --model m1",
    ].join(" ");
    // Wide enough that a temp path under the test runner's per-process TMPDIR stays on one line.
    term.start(command, tmp.path, options.columns ?? 160, options.rows ?? 32);
  }

  async function quit(): Promise<void> {
    term.enter("/quit");
    await term.waitFor("KC-EXIT-0");
  }

  it("shows a bash call while its command streams in, its elapsed time while it runs and the time it took", async () => {
    let argsSent = false;
    // The arguments arrive slowly; `argsSent` tells when the last piece went out.
    server.respondInOrder(
      async (_req, res) => {
        const args = { command: "sleep 3; echo streamed-done" };
        const events = [...toolCallChunks(0, "call_1", "bash", args, 3), finishChunk("tool_calls")];
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        for (const event of events) {
          res.write(`data: ${JSON.stringify(event.data)}\n\n`);
          // Gaps a loaded machine's screen can show the half-streamed command in.
          await new Promise((r) => setTimeout(r, 400));
        }
        argsSent = true;
        res.write(`data: ${JSON.stringify(usageChunk(30, 12).data)}\n\ndata: ${DONE.data}\n\n`);
        res.end();
      },
      (_req, res) => writeSse(res, textStream("Slept.")),
    );
    launch();
    await term.waitFor("local/m1");
    term.enter("sleep please");
    // The command shows while the model is still writing it.
    const writing = await term.waitFor(/● \$ sleep/);
    expect(argsSent, "the call showed only after its arguments were complete").to.equal(false);
    expect(writing).to.not.contain("streamed-done");
    // Then the whole command, with the time it has been running.
    // The command runs 3 s: its whole seconds show while it runs (1s, then 2s; a busy machine may skip one).
    const running = await term.waitFor(/● \$ sleep 3; echo streamed-done \([12]s\)/, 10_000);
    expect(running).to.not.contain("⎿ streamed-done");
    const done = await term.waitFor("Slept.");
    const took = /● \$ sleep 3; echo streamed-done \((\d+\.\d)s\)/.exec(done);
    expect(took, done).to.not.equal(null);
    expect(Number(took![1])).to.be.at.least(3);
    expect(done).to.contain("⎿ streamed-done");
    await quit();
  });

  it("shows a codemode call as its script, with the tool calls the script made nested under it", async () => {
    const ext = join(tmp.path, "lookup.ts");
    writeFileSync(
      ext,
      `import { Type } from "@sinclair/typebox";
       export default (kc: any) => kc.registerTool({
         name: "lookup", description: "Looks a word up", exposure: "codemode",
         parameters: Type.Object({ query: Type.String() }),
         execute: async (_id: string, p: { query: string }) => ({ content: [{ type: "text", text: "found-" + p.query }], details: undefined }),
       });`,
    );
    const code = [
      'const a = await tools.lookup({ query: "alpha" });',
      'const b = await tools.lookup({ query: "beta" });',
      "return [a, b];",
    ].join("\n");
    server.respondInOrder(
      (_req, res) => writeSse(res, toolCallStream("call_cm", "codemode", { code })),
      (_req, res) => writeSse(res, textStream("Looked both up.")),
    );
    launch({ extension: ext });
    await term.waitFor("local/m1");
    term.enter("look up alpha and beta");
    const screen = await term.waitFor("Looked both up.");
    const lines = screen.split("\n");
    const head = lines.findIndex((l) => /^● codemode \(\d+ms|^● codemode \(\d\.\ds/.test(l));
    expect(head, screen).to.be.greaterThan(-1);
    expect(lines[head + 1]).to.equal('  │ const a = await tools.lookup({ query: "alpha" });');
    expect(lines[head + 3]).to.equal("  │ return [a, b];");
    expect(lines[head + 4]).to.match(/^ {2}● lookup alpha \(\d+ms\)$/);
    expect(lines[head + 5]).to.equal("    ⎿ found-alpha");
    expect(lines[head + 6]).to.match(/^ {2}● lookup beta \(\d+ms\)$/);
    expect(screen).to.not.contain('{"code"');
    expect(screen).to.not.contain("\\n");
    await quit();
  });

  function script(name: string, body: string): string {
    const dir = join(tmp.path, "bin");
    mkdirSync(dir, { recursive: true });
    const file = join(dir, name);
    writeFileSync(file, `#!/bin/sh\n${body}\n`);
    chmodSync(file, 0o755);
    return file;
  }

  it("folds a skill run to [skill] name with what was typed after it; ctrl+o shows the skill's text", async () => {
    mkdirSync(join(agentDir(), "skills", "tidy"), { recursive: true });
    writeFileSync(
      join(agentDir(), "skills", "tidy", "SKILL.md"),
      "---\nname: tidy\ndescription: Tidies the code\n---\nSKILL-BODY-LINE one\nSKILL-BODY-LINE two\n",
    );
    server.respondInOrder((_req, res) => writeSse(res, textStream("Tidied.")));
    launch();
    await term.waitFor("local/m1");
    term.enter("/skill:tidy the src folder");
    const screen = await term.waitFor("Tidied.");
    expect(screen).to.match(/› \[skill\] tidy \(ctrl\+o expands\)\n {2}the src folder/);
    expect(screen).to.not.contain("SKILL-BODY-LINE");
    expect(screen).to.not.contain("<skill");
    expect(JSON.stringify(server.requests[0]!.body.messages)).to.contain("SKILL-BODY-LINE one");
    term.key("C-o");
    const expanded = await term.waitFor("│ SKILL-BODY-LINE two");
    expect(expanded).to.not.contain("<skill");
    await quit();
  });

  it("ctrl+g edits the message in $VISUAL and takes back what the editor saved", async () => {
    const editor = script(
      "stand-in-editor",
      `sed -i 's/draft/edited-by-editor/' "$1"; echo "$1" > ${join(tmp.path, "edited-file")}`,
    );
    launch({ env: `VISUAL=${editor}` });
    await term.waitFor("local/m1");
    term.type("my draft here");
    await term.waitFor("my draft here");
    term.key("C-g");
    const back = await term.waitFor("my edited-by-editor here");
    expect(back).to.contain("local/m1");
    const file = readFileSync(join(tmp.path, "edited-file"), "utf8").trim();
    expect(file).to.match(/knightcode-message-.*\.md$/);
    expect(existsSync(file), "the temporary file is removed").to.equal(false);
    term.key("C-c");
    await term.waitForGone("edited-by-editor");
    await quit();
  });

  it("ctrl+z suspends to the shell and fg resumes with the screen drawn again and keys working", async () => {
    server.respondInOrder((_req, res) => writeSse(res, textStream("Back after fg.")));
    writeLocalModels(agentDir(), {
      baseUrl: `${server.url}/v1`,
      apiKey: "LOCAL_KEY",
      models: [{ id: "m1", contextWindow: 32_000, maxTokens: 1024 }],
    });
    // An interactive shell with job control, as a person's.
    term.start("env PS1='kc-shell$ ' bash --norc --noprofile -i", tmp.path, 100, 32);
    await term.waitFor("kc-shell$");
    term.enter(
      `KNIGHTCODE_AGENT_DIR=${agentDir()} LOCAL_KEY=sk-local ${process.execPath} ${cliBin} --provider local --model m1`,
    );
    await term.waitFor("local/m1");
    term.type("typed before");
    await term.waitFor("typed before");
    term.key("C-z");
    const stopped = await term.waitFor(/Stopped/);
    expect(stopped).to.contain("kc-shell$");
    term.enter("echo in-the-shell-$((2*21))");
    await term.waitFor("in-the-shell-42");
    term.enter("fg");
    const resumed = await term.waitFor("local/m1");
    expect(resumed).to.contain("typed before");
    term.type(" and after");
    term.key("Enter");
    await term.waitFor("Back after fg.");
    expect(JSON.stringify(server.requests[0]!.body.messages)).to.contain("typed before and after");
    term.enter("/quit");
    await term.waitFor(/^kc-shell\$\s*$/m);
  });

  it("/copy puts the last answer on the clipboard, /session shows file, ids, tokens and cost, /name names it", async () => {
    const copied = join(tmp.path, "clipboard.txt");
    script("xclip", `cat > ${copied}`);
    server.respondInOrder((_req, res) => writeSse(res, textStream("The **answer** to copy.", [1200, 34])));
    launch({ env: `PATH=${join(tmp.path, "bin")}:$PATH WAYLAND_DISPLAY=`, rows: 40, columns: 200 });
    await term.waitFor("local/m1");
    term.enter("/copy");
    await term.waitFor("Nothing to copy: no answer yet");
    term.enter("a question");
    await term.waitFor("answer to copy.");
    term.enter("/copy");
    await term.waitFor("Copied the last answer");
    expect(readFileSync(copied, "utf8")).to.equal("The **answer** to copy.");
    term.enter("/name my named work");
    await term.waitFor('Session named "my named work"');
    term.enter("/session");
    const shown = await term.waitFor("Cost");
    expect(shown).to.match(/Name +my named work/);
    expect(sessionFile(shown), shown).to.match(/^\/\S+\.jsonl$/);
    expect(shown).to.match(/Session id +[0-9a-f-]{8,}/);
    expect(shown).to.match(/Messages +1 yours, 1 answers, 0 tool calls/);
    expect(shown).to.match(/Tokens +1,200 in, 34 out/);
    expect(shown).to.match(/Context +[\d,?]+ of 32,000 tokens/);
    await quit();
  });

  it("/clone continues in a new session file; /import resumes a session file; /changelog shows the changelog", async () => {
    server.respondInOrder(
      (_req, res) => writeSse(res, textStream("First answer.")),
      (_req, res) => writeSse(res, textStream("Second answer.")),
    );
    launch({ rows: 40, columns: 200 });
    await term.waitFor("local/m1");
    term.enter("first question");
    await term.waitFor("First answer.");
    term.enter("/session");
    const before = sessionFile(await term.waitFor("Cost"))!;
    term.enter("/clone");
    const cloned = await term.waitFor("Cloned into a new session");
    expect(cloned).to.contain("› first question");
    term.enter("second question");
    await term.waitFor("Second answer.");
    term.enter("/session");
    await term.waitFor(/Messages +2 yours/);
    const after = sessionFile(term.screen())!;
    expect(after).to.not.equal(before);
    expect(readFileSync(before, "utf8")).to.not.contain("second question");

    const outside = join(tmp.path, "elsewhere.jsonl");
    writeFileSync(outside, readFileSync(before, "utf8"));
    term.enter(`/import ${join(tmp.path, "notes.txt")}`);
    await term.waitFor("No file");
    writeFileSync(join(tmp.path, "bad.jsonl"), '{"hello":1}\n');
    term.enter(`/import ${join(tmp.path, "bad.jsonl")}`);
    await term.waitFor("is no session file");
    term.enter(`/import ${outside}`);
    const imported = await term.waitFor("Imported");
    expect(imported).to.contain("› first question");
    expect(imported).to.not.contain("second question");
    term.enter("/changelog");
    // The changelog is longer than the screen, which shows its end: the first version's heading.
    await term.waitFor("## 0.1.0");
    await quit();
  });

  it("/hotkeys lists each key once; ctrl+l opens the model picker; alt+up brings queued messages back", async () => {
    const words = Array.from({ length: 40 }, (_, i) => `slow${i} `);
    server.respondInOrder((_req, res) =>
      writeSse(res, [roleChunk(), ...textChunks(...words), finishChunk("stop"), usageChunk(40, 40), DONE], {
        delayMs: 150,
      }),
    );
    launch({ rows: 60, columns: 160 });
    await term.waitFor("local/m1");
    term.enter("/hotkeys");
    await term.waitFor("Change keys in");
    const keys = term.history();
    const typing = keys.slice(keys.lastIndexOf("While typing"), keys.lastIndexOf("In lists and dialogs"));
    const listed = typing
      .split("\n")
      .slice(1)
      .map((l) => /^\s+(\S+) {2,}/.exec(l)?.[1])
      .filter((k): k is string => k !== undefined);
    expect(listed.length).to.be.greaterThan(20);
    expect(new Set(listed).size, listed.join(" ")).to.equal(listed.length);
    expect(keys).to.match(/ctrl\+g +Edit the message in \$VISUAL or \$EDITOR/);
    expect(keys).to.match(
      /ctrl\+d +Quit when the editor is empty \(app\.exit\); else Delete character forward/,
    );
    term.key("C-l");
    await term.waitFor("→ local/m1");
    term.key("Escape");
    await term.waitForGone("→ local/m1");
    term.enter("a long question");
    await term.waitFor("slow3");
    term.type("queued to edit");
    term.key("M-Enter");
    await term.waitFor("↳ follow-up: queued to edit");
    term.key("M-Up");
    await term.waitForGone("↳ follow-up:");
    expect(term.screen()).to.match(/^ queued to edit/m);
    await term.waitFor("slow39", 30_000);
    await new Promise((r) => setTimeout(r, 500));
    expect(server.requests.length, "the follow-up taken back was not sent").to.equal(1);
    term.key("C-u");
    await quit();
  });

  it("/settings is searchable and saves a choice in settings.json", async () => {
    launch({ rows: 40 });
    await term.waitFor("local/m1");
    term.enter("/settings");
    await term.waitFor("type to search");
    term.type("auto-comp");
    await term.waitFor("→ Auto-compaction: on");
    term.key("Enter");
    await term.waitFor("Auto-compaction: off");
    term.key("Escape");
    await term.waitFor("Reloaded: the new settings apply");
    const saved = JSON.parse(readFileSync(join(agentDir(), "settings.json"), "utf8"));
    expect(saved.compaction).to.deep.equal({ enabled: false });
    await quit();
  });

  it("shows warnings written to stderr inside the UI, wrapped to the width, with the frame intact", async () => {
    const ext = join(tmp.path, "warner.ts");
    const long = `WARN-START ${"this warning goes on ".repeat(8)}WARN-END`;
    writeFileSync(
      ext,
      `export default (kc: any) => kc.registerCommand("warn-me", {
         handler: async () => { kc.log.warn(${JSON.stringify(long)}); console.error("CONSOLE-ERROR-LINE"); },
       });`,
    );
    launch({ extension: ext, columns: 80 });
    await term.waitFor("local/m1");
    term.enter("/warn-me");
    const screen = await term.waitFor("WARN-END");
    expect(screen).to.contain("WARN-START");
    expect(screen).to.contain("CONSOLE-ERROR-LINE");
    expect(screen).to.not.contain("knightcode: ");
    for (const line of screen.split("\n")) expect(line.length, line).to.be.at.most(80);
    // Drawn as part of the frame: the footer is still the last thing, and the warning stays after a redraw.
    expect(screen.trimEnd().split("\n").at(-1)).to.match(/local\/m1$/);
    term.key("C-o");
    await new Promise((r) => setTimeout(r, 300));
    expect(term.screen()).to.contain("WARN-END");
    await quit();
  });

  it("/tree shows tool calls by their command and @files by their path, searches, filters, labels and says where it went", async () => {
    writeFileSync(join(tmp.path, "notes.txt"), "NOTE-CONTENT-42\n");
    server.respondInOrder(
      (_req, res) => writeSse(res, toolCallStream("call_ls", "bash", { command: "ls -la" })),
      (_req, res) => writeSse(res, textStream("Listed.")),
      (_req, res) => writeSse(res, textStream("Read notes.")),
      (_req, res) => writeSse(res, textStream("After the move.")),
    );
    launch({ rows: 40 });
    await term.waitFor("local/m1");
    term.enter("run ls");
    await term.waitFor("Listed.");
    // The space ends the @ word, so Enter sends the prompt rather than taking a file suggestion.
    term.type("summarise @notes.txt ");
    await term.waitFor("summarise @notes.txt");
    term.key("Enter");
    await term.waitFor("Read notes.");
    term.enter("/tree");
    let tree = await term.waitFor("Continue from which entry?");
    expect(tree).to.match(/assistant: \[bash: ls -la\]/);
    expect(tree).to.match(/user: summarise @notes\.txt/);
    expect(tree).to.not.contain("NOTE-CONTENT-42");
    // pi's default filter: the conversation, tool results included.
    expect(tree).to.contain("(conversation)");
    expect(tree).to.match(/result: bash/);
    term.type("notes");
    tree = await term.waitFor(/search: notes/);
    // Rows are `<id> text`; the transcript above the picker has the messages too, without ids.
    expect(tree).to.not.match(/[0-9a-f]{8} user: run ls/);
    expect(tree).to.match(/[0-9a-f]{8} user: summarise @notes\.txt/);
    term.key("Escape");
    await term.waitFor(/[0-9a-f]{8} user: run ls/);
    term.key("C-o");
    tree = await term.waitFor("(no tool results)");
    expect(tree).to.not.match(/result: bash/);
    term.key("C-o");
    tree = await term.waitFor("(your messages)");
    expect(tree).to.not.match(/[0-9a-f]{8} assistant:/);
    term.key("C-o", "C-o");
    tree = await term.waitFor("(everything)");
    expect(tree).to.match(/result: bash/);
    term.key("C-o");
    await term.waitFor("(conversation)");
    // The selected entry is the active one (the last answer); label it in the picker.
    term.key("L");
    await term.waitFor("Label of");
    term.type("mark-one");
    term.key("Enter");
    tree = await term.waitFor("[mark-one]");
    expect(tree).to.match(/assistant: Read notes\. \[mark-one\]/);
    term.key("Up", "Up");
    await term.waitFor(/→ .*assistant: Listed\./);
    term.key("Enter");
    await term.waitFor("Summarize the branch you leave?");
    term.key("Enter");
    const moved = await term.waitFor(/Navigated to [0-9a-f]{8} "assistant: Listed\."/);
    expect(moved).to.not.contain("Read notes.");
    await quit();
  });
});

/** The File row of `/session`, its lines joined: a session file's path can be longer than the screen is wide. */
function sessionFile(screen: string): string | undefined {
  const row = /File\s+([\s\S]*?)\n\s*Session id/.exec(screen);
  return row ? row[1]!.replace(/\s+/g, "") : undefined;
}
