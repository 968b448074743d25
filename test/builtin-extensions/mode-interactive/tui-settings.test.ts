/**
 * The settings pi users reach for beyond the everyday ones, end to end: the built `knightcode` runs in tmux
 * against a local server that speaks the OpenAI Chat Completions wire format; each test writes settings.json (or
 * changes a setting in `/settings`), then reads the screen and the requests the server received.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { PNG as PNGImage } from "pngjs";
import { cliBin } from "../../helpers/cli.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { type RecordedRequest, type TestServer, writeSse } from "../../helpers/sse-server.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { textStream, toolCallStream } from "../providers/openai-compatible/fixtures.js";
import { PNG } from "./clipboard-fixture.js";
import { TmuxDriver, useTerminalAndModel } from "./tmux-driver.js";

/** Every image the request carries, in any message. */
function imagesIn(request: RecordedRequest): string[] {
  return (request.body.messages as { content: unknown }[]).flatMap((m) =>
    Array.isArray(m.content)
      ? (m.content as { type: string; image_url?: { url: string } }[])
          .filter((part) => part.type === "image_url")
          .map((part) => part.image_url!.url)
      : [],
  );
}

describe("interactive settings beside pi's (tmux, local model server)", function () {
  this.timeout(90_000);
  const tmp = useTempDir("kc-tui-set-");
  let server: TestServer;
  let term: TmuxDriver;

  useTerminalAndModel((started) => {
    ({ server, term } = started);
  });
  /** Terminals of a second or third start in one test (a new tmux server each: a closing one may linger). */
  const more: TmuxDriver[] = [];
  afterEach(() => {
    for (const driver of more.splice(0)) driver.close();
  });
  function nextTerminal(): void {
    term.close();
    term = new TmuxDriver();
    more.push(term);
  }

  const agentDir = () => join(tmp.path, "agent");

  function launch(
    settings: Record<string, unknown> = {},
    options: { rows?: number; args?: string } = {},
  ): void {
    writeLocalModels(agentDir(), {
      baseUrl: `${server.url}/v1`,
      apiKey: "LOCAL_KEY",
      models: [{ id: "m1", contextWindow: 32_000, maxTokens: 1024 }],
    });
    mkdirSync(agentDir(), { recursive: true });
    writeFileSync(join(agentDir(), "settings.json"), JSON.stringify(settings));
    const command = [
      `KNIGHTCODE_AGENT_DIR=${agentDir()} LOCAL_KEY=sk-local`,
      process.execPath,
      cliBin,
      options.args ?? "",
      "--provider local --model m1",
    ].join(" ");
    term.start(command, tmp.path, 160, options.rows ?? 40);
  }

  async function quit(): Promise<void> {
    term.enter("/quit");
    await term.waitFor("KC-EXIT-0");
  }

  /**
   * Esc twice, quickly: one write of both keys. The app may read them as one chunk or two, and both count as esc
   * twice (app.test.ts covers each way); two writes a moment apart could drift past half a second on a busy machine.
   */
  function escTwice(): void {
    term.key("Escape", "Escape");
  }

  /** Closes a list with esc, waiting until it is gone (keys typed at once would read as alt+key). */
  async function closeList(text = "type to search"): Promise<void> {
    term.key("Escape");
    await term.waitForGone(text);
  }

  function saved(): Record<string, unknown> {
    return JSON.parse(readFileSync(join(agentDir(), "settings.json"), "utf8"));
  }

  it("esc twice on an empty editor opens /tree; doubleEscapeAction fork (set in /settings) opens the fork picker, none nothing", async () => {
    server.respondInOrder((_req, res) => writeSse(res, textStream("First answer.")));
    launch();
    await term.waitFor("local/m1");
    term.enter("first question");
    await term.waitFor("First answer.");
    // One esc alone does nothing; two within half a second open the tree.
    // Keys are read in order: once the text typed after it shows, the esc has been handled. The text starts with
    // a space: a busy app can read the esc and the text as one chunk, and esc with a letter is alt+letter (the
    // letter lost), esc with a space nothing.
    term.key("Escape");
    await new Promise((r) => setTimeout(r, 150));
    term.type(" after-one-esc");
    expect(await term.waitFor("after-one-esc")).to.not.contain("Continue from which entry?");
    term.key("C-c");
    await term.waitForGone("after-one-esc");
    await new Promise((r) => setTimeout(r, 600));
    escTwice();
    await term.waitFor("Continue from which entry?");
    await closeList("Continue from which entry?");
    // With text in the editor esc twice leaves it alone.
    term.type("draft");
    await term.waitFor("draft");
    escTwice();
    await new Promise((r) => setTimeout(r, 150));
    term.type(" kept");
    // The space may go with the escapes (see above): "draftkept" or "draft kept".
    expect(await term.waitFor(/draft ?kept/)).to.not.contain("Continue from which entry?");
    term.key("C-c");

    term.enter("/settings");
    await term.waitFor("type to search");
    term.type("double");
    await term.waitFor("→ Double escape: tree");
    term.key("Enter");
    await term.waitFor("none");
    term.key("Down");
    term.key("Enter");
    await term.waitFor("Double escape: fork");
    await closeList();
    expect(saved().doubleEscapeAction).to.equal("fork");
    escTwice();
    await term.waitFor("Fork from which message?");
    await closeList("Fork from which message?");
    await quit();

    nextTerminal();
    launch({ doubleEscapeAction: "none" });
    await term.waitFor("local/m1");
    escTwice();
    await new Promise((r) => setTimeout(r, 150));
    term.type(" after-esc-esc");
    const screen = await term.waitFor("after-esc-esc");
    term.key("C-c");
    await term.waitForGone("after-esc-esc");
    expect(screen).to.not.contain("Continue from which entry?");
    expect(screen).to.not.contain("Fork from which message?");
    await quit();
  });

  it("/tree opens with treeFilterMode's filter; ctrl+o cycles pi's five", async () => {
    server.respondInOrder(
      (_req, res) => writeSse(res, toolCallStream("call_ls", "bash", { command: "echo listed" })),
      (_req, res) => writeSse(res, textStream("Listed it.")),
    );
    launch({ treeFilterMode: "user-only" });
    await term.waitFor("local/m1");
    term.enter("run echo");
    await term.waitFor("Listed it.");
    term.enter("/tree");
    let tree = await term.waitFor("(your messages)");
    expect(tree).to.match(/[0-9a-f]{8} user: run echo/);
    expect(tree).to.not.match(/[0-9a-f]{8} assistant:/);
    term.key("C-o");
    tree = await term.waitFor("(labelled)");
    term.key("C-o");
    tree = await term.waitFor("(everything)");
    // Everything: the bookkeeping entries too (the model chosen at start).
    expect(tree).to.match(/[0-9a-f]{8} model_change: local\/m1/);
    term.key("C-o");
    tree = await term.waitFor("(conversation)");
    expect(tree).to.match(/result: bash/);
    expect(tree).to.not.match(/model_change/);
    term.key("C-o");
    tree = await term.waitFor("(no tool results)");
    expect(tree).to.not.match(/result: bash/);
    expect(tree).to.match(/[0-9a-f]{8} assistant: Listed it\./);
    await closeList("Continue from which entry?");
    await quit();
  });

  it("quietStartup hides the header and the list of what loaded; header keeps the header", async () => {
    /** The screen once the start is over: `/settings` runs after it, and the start screen stays above the list. */
    const started = async (shown: string): Promise<string> => {
      await term.waitFor("local/m1");
      term.enter("/settings");
      await term.waitFor("type to search");
      term.type("quiet");
      const screen = await term.waitFor(`→ Quiet start-up: ${shown}`);
      await closeList();
      return screen;
    };
    launch();
    let screen = await started("off");
    expect(screen).to.contain("esc stops · ctrl+c clears");
    expect(screen).to.match(/Loaded \d+ extensions/);
    await quit();

    for (const [quiet, header] of [
      [true, false],
      ["header", true],
    ] as const) {
      nextTerminal();
      launch({ quietStartup: quiet });
      screen = await started(quiet === true ? "on" : "header");
      expect(screen, String(quiet)).to.not.match(/Loaded \d+ extensions/);
      if (header) expect(screen).to.contain("esc stops · ctrl+c clears");
      else expect(screen).to.not.contain("esc stops · ctrl+c clears");
      await quit();
    }
  });

  it("images.blockImages: neither a pasted image nor one read by a tool reaches the model, a note does", async () => {
    const shot = join(tmp.path, "shot.png");
    writeFileSync(shot, PNG);
    server.respondInOrder(
      (_req, res) => writeSse(res, textStream("No image came.")),
      (_req, res) => writeSse(res, toolCallStream("call_read", "read", { path: shot })),
      (_req, res) => writeSse(res, textStream("Read it blind.")),
    );
    launch({ images: { blockImages: true } });
    await term.waitFor("local/m1");
    term.type("what is in ");
    term.paste(shot);
    await term.waitFor("shot.png");
    term.key("Enter");
    await term.waitFor("No image came.");
    const first = server.requests[0]!;
    expect(imagesIn(first)).to.deep.equal([]);
    expect(JSON.stringify(first.body.messages)).to.contain("Image reading is disabled.");
    term.enter("read it with the tool");
    await term.waitFor("Read it blind.");
    expect(server.requests).to.have.length(3);
    const third = server.requests[2]!;
    expect(imagesIn(third)).to.deep.equal([]);
    // The tool result's image became the note, and the earlier one stayed one.
    expect(JSON.stringify(third.body.messages).split("Image reading is disabled.").length - 1).to.be.at.least(
      2,
    );
    // The session keeps the image: only what is sent changes.
    term.enter("/settings");
    await term.waitFor("type to search");
    term.type("block");
    await term.waitFor("→ Block images: on");
    await closeList();
    await quit();
  });

  it("images.autoResize scales a pasted image over 2000x2000 pixels down before sending; off sends it as it is", async () => {
    const png = new PNGImage({ width: 3000, height: 2 });
    png.data.fill(200);
    const wide = PNGImage.sync.write(png);
    const path = join(tmp.path, "wide.png");
    writeFileSync(path, wide);
    server.respondInOrder(
      (_req, res) => writeSse(res, textStream("Got it smaller.")),
      (_req, res) => writeSse(res, textStream("Sent wide.")),
    );
    launch();
    await term.waitFor("local/m1");
    term.type("look ");
    term.paste(path);
    await term.waitFor("wide.png");
    term.key("Enter");
    const screen = await term.waitFor("Got it smaller.");
    expect(screen).to.contain("wide.png: resized from 3000x2 to 2000x1 pixels");
    const [sent] = imagesIn(server.requests[0]!);
    const decoded = PNGImage.sync.read(Buffer.from(sent!.replace("data:image/png;base64,", ""), "base64"));
    expect([decoded.width, decoded.height]).to.deep.equal([2000, 1]);
    term.enter("/settings");
    await term.waitFor("type to search");
    term.type("auto-resize");
    await term.waitFor("→ Auto-resize images: on");
    term.key("Enter");
    await term.waitFor("Auto-resize images: off");
    await closeList();
    expect(saved().images).to.deep.equal({ autoResize: false });
    term.type("again ");
    term.paste(path);
    await term.waitFor(/again .*wide\.png/);
    term.key("Enter");
    await term.waitFor("Sent wide.");
    // The history carries the first, resized; the new message the file as it is.
    expect(imagesIn(server.requests[1]!)).to.deep.equal([
      sent,
      `data:image/png;base64,${wide.toString("base64")}`,
    ]);
    await quit();
  });

  it("images.autoResize works off the main thread: while a 4000x3000 photo resizes the UI says so and takes keys; esc stops it, a broken one keeps the message", async function () {
    this.timeout(120_000);
    const photo = new PNGImage({ width: 4000, height: 3000 });
    for (let y = 0; y < 3000; y++)
      for (let x = 0; x < 4000; x++)
        photo.data.set([x & 255, y & 255, (x ^ y) & 255, 255], (y * 4000 + x) * 4);
    const big = join(tmp.path, "big.png");
    writeFileSync(big, PNGImage.sync.write(photo, { deflateLevel: 1 }));
    // A PNG header for 4000x3000, then bytes that are no image data.
    const broken = join(tmp.path, "broken.png");
    const corrupt = Buffer.concat([
      PNGImage.sync.write(new PNGImage({ width: 4000, height: 1 })).subarray(0, 33),
      Buffer.alloc(400, 9),
    ]);
    corrupt.writeUInt32BE(3000, 20);
    writeFileSync(broken, corrupt);
    server.respondInOrder((_req, res) => writeSse(res, textStream("Got the photo.")));
    launch();
    await term.waitFor("local/m1");
    term.type("see ");
    term.paste(big);
    await term.waitFor("big.png");
    term.key("Enter");
    await term.waitFor("Resizing big.png (4000x3000)… (esc stops)");
    // Keys reach the editor and the screen is drawn while the worker works.
    term.type("typed meanwhile");
    await term.waitFor(/Resizing big\.png \(4000x3000\)…[\s\S]*typed meanwhile/);
    term.key("Escape");
    const stopped = await term.waitFor("the message was not sent (its text is back in the editor)");
    // The notice names the file as the message spells it (here its full path).
    expect(stopped).to.match(/Resizing \S*big\.png was stopped; the message was not sent/);
    expect(stopped).not.to.contain("Resizing big.png (4000x3000)…");
    // The message and what was typed meanwhile are both in the editor; nothing went to the model. (Waited for, not
    // read from the notice's capture: the editor can be drawn back a frame after the notice.)
    await term.waitFor(/see \S*big\.png[\s\S]*typed meanwhile/);
    expect(server.requests).to.have.length(0);
    term.key("Enter");
    const answered = await term.waitFor("Got the photo.", 60_000);
    expect(answered).to.contain("big.png: resized from 4000x3000 to 2000x1500 pixels");
    const [sent] = imagesIn(server.requests[0]!);
    const decoded = PNGImage.sync.read(Buffer.from(sent!.replace("data:image/png;base64,", ""), "base64"));
    expect([decoded.width, decoded.height]).to.deep.equal([2000, 1500]);
    term.type("look ");
    term.paste(broken);
    await term.waitFor("broken.png");
    term.key("Enter");
    // The notice wraps where the temp folder's length puts it, so any space may be a line break;
    // waiting for the whole notice, not its first words, keeps a capture taken mid-frame from failing it.
    const notice =
      "broken.png is 4000x3000 pixels, over 2000x2000, and resizing it failed: the file is not a readable PNG image";
    const words = notice.split(" ").map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    await term.waitFor(new RegExp(words.join("\\s+")));
    // The message waits in the editor (drawn back in the same frame or the next).
    await term.waitFor(/look \S*broken\.png/);
    expect(server.requests).to.have.length(1);
    term.key("C-c");
    await quit();
  });

  it("transport: /settings shows and saves it; a provider that speaks only SSE says so once and still answers", async () => {
    server.respondInOrder(
      (_req, res) => writeSse(res, textStream("Answer one.")),
      (_req, res) => writeSse(res, textStream("Answer two.")),
    );
    launch({ transport: "websocket" });
    await term.waitFor("local/m1");
    term.enter("/settings");
    await term.waitFor("type to search");
    term.type("transport");
    await term.waitFor("→ Transport: websocket");
    await closeList();
    term.enter("one");
    await term.waitFor("Answer one.");
    term.enter("two");
    let screen = await term.waitFor("Answer two.");
    const warning = 'Provider "local" cannot use the "websocket" transport';
    expect(screen).to.contain(warning);
    expect(screen).to.contain("its requests use SSE");
    expect(screen.split(warning).length - 1, "said once").to.equal(1);
    expect(server.requests).to.have.length(2);
    // Back to auto: picked in the list, saved, and no warning for it.
    term.enter("/settings");
    await term.waitFor("type to search");
    term.type("transport");
    await term.waitFor("→ Transport: websocket");
    term.key("Enter");
    await term.waitFor("websocket-cached");
    // The list opens on the value in force (websocket); auto is two rows up.
    term.key("Up");
    term.key("Up");
    term.key("Enter");
    await term.waitFor("Transport: auto");
    term.key("Escape");
    screen = await term.waitFor("Reloaded: the new settings apply");
    expect(saved().transport).to.equal("auto");
    await quit();
  });
});
