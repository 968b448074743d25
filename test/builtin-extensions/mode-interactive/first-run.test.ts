/**
 * First run and models in the full terminal UI (issue 30): the built `knightcode` in tmux, a local server that
 * speaks the OpenAI Chat Completions wire format, and an agent folder that starts with no usable model. The tests
 * read the screen and the files the UI writes.
 */
import { readFileSync, statSync } from "node:fs";
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
  usageChunk,
} from "../providers/openai-compatible/fixtures.js";
import { type TmuxDriver, useTerminalAndModel } from "./tmux-driver.js";

describe("interactive UI: first run and models (tmux, local model server)", function () {
  this.timeout(90_000);
  const tmp = useTempDir("kc-first-");
  let server: TestServer;
  let term: TmuxDriver;

  useTerminalAndModel((started) => {
    ({ server, term } = started);
  });

  const agentDir = () => join(tmp.path, "agent");

  /** No provider key anywhere: the environment's are blanked, so only what the test stores counts. */
  function launch(args = "", columns = 120, rows = 36): void {
    const command = [
      `KNIGHTCODE_AGENT_DIR=${agentDir()} ANTHROPIC_API_KEY= OPENAI_API_KEY= LOCAL_KEY=`,
      process.execPath,
      cliBin,
      args,
    ].join(" ");
    term.start(command, tmp.path, columns, rows);
  }

  it("says on the first screen what to do without a model, naming the real agent folder, and after a prompt too", async () => {
    launch();
    const first = await term.waitFor("No model yet");
    expect(first).to.contain(`/login`).and.contain(`${agentDir()}/auth.json`);
    expect(first).to.contain(`${agentDir()}/models.json`);
    await term.waitFor("no model (/login, /model)");
    expect(first).to.not.contain("$0.000").and.not.contain("?/");
    term.enter("hello");
    // The error names the folder's files; no placeholder, no file of this repository.
    const after = await term.waitFor("No model is selected");
    const text = term.history();
    expect(text).to.contain(join(agentDir(), "auth.json"));
    expect(text).to.not.contain("<agentDir>").and.not.contain("examples/scripts");
    expect(after).to.not.contain("KC-EXIT");
    term.enter("/model");
    await term.waitFor("No model can be used yet: /login stores a key");
    term.key("C-d");
    await term.waitFor("KC-EXIT-0");
  });

  it("/login stores a key masked and private, makes the model usable and picks it; /model lists only usable models; /logout removes it", async () => {
    writeLocalModels(agentDir(), {
      baseUrl: `${server.url}/v1`,
      apiKey: "LOCAL_KEY",
      models: [
        { id: "m1", contextWindow: 32_000, maxTokens: 1024 },
        { id: "m2", contextWindow: 64_000, maxTokens: 1024 },
      ],
    });
    server.respondInOrder((_req, res) => writeSse(res, textStream("Hello from m1.", [3000, 20])));
    launch();
    await term.waitFor("No model yet");
    term.enter("/login");
    const providers = await term.waitFor("Sign in to which provider?");
    expect(providers).to.contain("anthropic").and.contain("local").and.not.contain("scripted");
    // The list holds every named provider (it scrolls, and filters as you type): "local" is picked by name.
    term.type("local");
    await term.waitFor(/→\s*local\b/);
    term.key("Enter");
    await term.waitFor("API key for local");
    term.type("sk-secret-4242");
    const masked = await term.waitFor("••••");
    expect(masked).to.not.contain("sk-secret");
    term.key("Enter");
    const saved = await term.waitFor("Signed in to local");
    // The notice wraps at the pane's width when the temp folder's path is long (mocha's parallel runs): compare
    // without the white space.
    const squeezed = (text: string) => text.replace(/\s+/g, "");
    expect(squeezed(saved)).to.contain(
      squeezed(`Signed in to local (****4242): key saved in ${agentDir()}/auth.json; model local/m1`),
    );
    const auth = join(agentDir(), "auth.json");
    expect(statSync(auth).mode & 0o777).to.equal(0o600);
    expect(JSON.parse(readFileSync(auth, "utf8"))).to.deep.equal({
      local: { type: "api_key", key: "sk-secret-4242" },
    });
    // The footer before the first answer: the window alone, and no dollars for a model without prices.
    const footer = await term.waitFor("local/m1");
    expect(footer).to.contain("32k context").and.not.contain("?/32k").and.not.contain("$0.000");

    term.enter("hi");
    await term.waitFor("Hello from m1.");
    expect(server.requests.at(-1)!.headers.authorization).to.equal("Bearer sk-secret-4242");
    const answered = await term.waitFor("9.4%/32k");
    expect(answered).to.not.contain("$0.000");

    term.enter("/model");
    const picker = await term.waitFor("Model (2 can be used)");
    expect(picker).to.contain("local/m2").and.contain("key in auth.json").and.not.contain("scripted");
    expect(picker).to.not.contain("anthropic/");
    term.key("Escape");
    await term.waitForGone("Model (2 can be used)");

    term.enter("/logout local");
    await term.waitFor(`Removed the key of local from ${auth}`);
    expect(JSON.parse(readFileSync(auth, "utf8"))).to.deep.equal({});
    term.enter("/model");
    await term.waitFor("No model can be used yet");
    term.key("C-d");
    await term.waitFor("KC-EXIT-0");
  });

  it("/login offers a provider's own sign-in method (ProviderConfig.login) and stores what it returns", async () => {
    const ext = tmp.write(
      "corp.ts",
      `export default (kc: any) => kc.registerProvider("corp", {
         api: "openai-completions", baseUrl: "${server.url}/v1", apiKey: "CORP_KEY",
         models: [{ id: "c1", contextWindow: 16000, maxTokens: 512 }],
         login: [{ label: "Corp single sign-on", login: async (io: any) => {
           io.notify("Open https://sso.example/device and read the code");
           const code = await io.input("Code from the page", { secret: true });
           return code ? { type: "oauth", key: "tok-" + code, refresh: "r-1" } : undefined;
         } }],
       });`,
    );
    server.respondInOrder((_req, res) => writeSse(res, textStream("Corp answer.")));
    launch(`-e ${ext}`);
    await term.waitFor("No model yet");
    term.enter("/login corp");
    const methods = await term.waitFor("Corp single sign-on");
    expect(methods).to.contain("API key");
    term.key("Enter");
    await term.waitFor("Code from the page");
    expect(term.screen()).to.contain("Open https://sso.example/device");
    term.type("777");
    await term.waitFor("•••");
    term.key("Enter");
    await term.waitFor("Signed in to corp");
    expect(JSON.parse(readFileSync(join(agentDir(), "auth.json"), "utf8"))).to.deep.equal({
      corp: { type: "oauth", key: "tok-777", refresh: "r-1" },
    });
    await term.waitFor("corp/c1");
    term.enter("hello corp");
    await term.waitFor("Corp answer.");
    expect(server.requests.at(-1)!.headers.authorization).to.equal("Bearer tok-777");
    term.key("C-d");
    await term.waitFor("KC-EXIT-0");
  });

  it("names the usable models on the first screen when some can be used but none is chosen", async () => {
    writeLocalModels(agentDir(), {
      baseUrl: `${server.url}/v1`,
      models: [
        { id: "m1", contextWindow: 32_000, maxTokens: 1024 },
        { id: "m2", contextWindow: 64_000, maxTokens: 1024 },
      ],
    });
    launch();
    const first = await term.waitFor("No model selected");
    expect(first).to.contain("2 can be used (local/m1, local/m2)").and.contain("/model picks one");
    term.key("C-p");
    await term.waitFor(/local\/m1\s*$/m);
    term.key("C-d");
    await term.waitFor("KC-EXIT-0");
  });

  it("the start screen lists what loaded on one line, and the expand key lists the names", async () => {
    writeLocalModels(agentDir(), {
      baseUrl: `${server.url}/v1`,
      models: [{ id: "m1", contextWindow: 32_000, maxTokens: 1024 }],
    });
    tmp.write(
      "agent/skills/pdf-forms/SKILL.md",
      "---\nname: pdf-forms\ndescription: Fill PDF forms\n---\nUse the form tool.\n",
    );
    tmp.write("agent/prompts/review.md", "---\ndescription: Review a change\n---\nReview $@\n");
    const ext = tmp.write(
      "hello-ext.ts",
      `export default (kc: any) => kc.registerCommand("hello", { description: "Say hello", handler: async () => {} });`,
    );
    launch(`-e ${ext} --model local/m1`);
    const folded = await term.waitFor(/Loaded \d+ extensions \(1 yours\)/);
    expect(folded).to.match(
      /1 skill · 1 prompt template · 0 MCP servers · 0 packages \(ctrl\+o lists them\)/,
    );
    expect(folded).to.not.contain("pdf-forms");
    term.key("C-o");
    const expanded = await term.waitFor("Skills: pdf-forms");
    expect(expanded)
      .to.contain("Prompt templates: /review")
      .and.match(/Extensions: cli:\S*hello-ext\.ts, \d+ built-in/);
    term.key("C-o");
    await term.waitForGone("Skills: pdf-forms");
    term.key("C-d");
    await term.waitFor("KC-EXIT-0");
  });

  it("/scoped-models saves enabledModels and ctrl+p cycles through those only; a stopped answer keeps the last context figure", async () => {
    writeLocalModels(agentDir(), {
      baseUrl: `${server.url}/v1`,
      models: [
        { id: "m1", contextWindow: 32_000, maxTokens: 1024 },
        { id: "m2", contextWindow: 64_000, maxTokens: 1024 },
        { id: "m3", contextWindow: 64_000, maxTokens: 1024 },
      ],
    });
    const slow = Array.from({ length: 200 }, (_, i) => `w${i} `);
    server.respondInOrder(
      (_req, res) => writeSse(res, textStream("First answer.", [6400, 10])),
      (_req, res) =>
        writeSse(res, [roleChunk(), ...textChunks(...slow), finishChunk("stop"), usageChunk(10, 10), DONE], {
          delayMs: 50,
        }),
    );
    launch("--model local/m1");
    await term.waitFor("local/m1");
    term.enter("one");
    await term.waitFor("First answer.");
    await term.waitFor("20.0%/32k");
    term.enter("two");
    await term.waitFor("w3 ");
    term.key("Escape");
    await term.waitForGone("esc stops)");
    const stopped = term.screen();
    expect(stopped)
      .to.contain("20.0%/32k")
      .and.not.match(/\s0\.0%\/32k/);

    term.enter("/scoped-models");
    await term.waitFor("Models the cycling keys go through");
    // Save, [ ] local/m1, [ ] local/m2, [ ] local/m3: tick m1 and m3.
    term.key("Down", "Enter");
    await term.waitFor("[x] local/m1");
    term.key("Down", "Down", "Enter");
    await term.waitFor("[x] local/m3");
    term.key("Up", "Up", "Up", "Enter");
    await term.waitFor("Cycling through 2: local/m1, local/m3");
    const settings = JSON.parse(readFileSync(join(agentDir(), "settings.json"), "utf8"));
    expect(settings.enabledModels).to.deep.equal(["local/m1", "local/m3"]);
    term.key("C-p");
    await term.waitFor("local/m3");
    term.key("C-p");
    const back = await term.waitFor("local/m1");
    expect(back).to.not.contain("local/m2");
    term.key("C-d");
    await term.waitFor("KC-EXIT-0");
  });
});
