/**
 * The Gemini provider inside a real session: models.json points the built-in `google` at a local server speaking the
 * Gemini API (the entry has only a baseUrl, so the catalogue and key variable stay), and the agent loop's retries
 * and classify() go through it.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type AgentSessionHandle,
  type AssistantMessage,
  createAgentSession,
  createStandardKernel,
  type SessionEvent,
} from "@knightcodeai/cli";
import { expect } from "chai";
import googleProvider from "../../../../builtin-extensions/providers/google/index.js";
import { sessionInternals } from "../../../../hosts/sdk/session-internals.js";
import { startTestServer, type TestServer } from "../../../helpers/sse-server.js";
import { chunk, retryInfo, textChunks, writeGemini, writeGoogleError } from "./wire.js";

type Kernel = Awaited<ReturnType<typeof createStandardKernel>>;

describe("google provider: in a session", () => {
  let server: TestServer;
  let dir: string;
  const opened: { handle: AgentSessionHandle; kernel: Kernel }[] = [];
  const previousKey = process.env.GEMINI_API_KEY;

  beforeEach(async () => {
    server = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), "kc-google-"));
    process.env.GEMINI_API_KEY = "gm-session-key";
  });

  afterEach(async () => {
    for (const { handle, kernel } of opened.splice(0)) {
      await handle.dispose();
      await kernel.dispose();
    }
    await server.close();
    rmSync(dir, { recursive: true, force: true });
    if (previousKey === undefined) delete process.env.GEMINI_API_KEY;
    else process.env.GEMINI_API_KEY = previousKey;
  });

  async function open(model = "gemini-2.5-flash") {
    const agentDir = join(dir, "agent");
    mkdirSync(agentDir, { recursive: true });
    writeFileSync(
      join(agentDir, "models.json"),
      JSON.stringify({ providers: { google: { baseUrl: server.url } } }),
    );
    const kernel = await createStandardKernel({ agentDir, cacheDir: false });
    const handle = await createAgentSession({
      cwd: dir,
      agentDir,
      kernel,
      provider: "google",
      model,
      session: { inMemory: true },
      settings: { retry: { baseDelayMs: 1, maxDelayMs: 2000 } },
      extensions: [googleProvider],
      tools: [],
    });
    opened.push({ handle, kernel });
    const events: SessionEvent[] = [];
    handle.subscribe((event) => events.push(structuredClone(event)));
    return {
      handle,
      ofType: (type: string) =>
        events.filter((e) => e.type === type) as (SessionEvent & Record<string, unknown>)[],
      assistants: () =>
        events
          .filter((e) => e.type === "message_end")
          .map((e) => (e as unknown as { message: AssistantMessage }).message)
          .filter((m) => m.role === "assistant"),
    };
  }

  it("retries a 429 after the RetryInfo delay, then succeeds", async () => {
    server.respondInOrder(
      (_req, res) =>
        writeGoogleError(res, 429, "RESOURCE_EXHAUSTED", "Resource has been exhausted (e.g. check quota).", [
          retryInfo("0.2s"),
        ]),
      (_req, res) => writeGemini(res, textChunks(["Recovered."])),
    );
    const s = await open();
    await s.handle.prompt("hi");
    const start = s.ofType("auto_retry_start");
    expect(start).to.have.length(1);
    expect(start[0]).to.deep.include({ attempt: 1, delayMs: 200 });
    expect(String(start[0]!.errorMessage))
      .to.contain("rate limit")
      .and.contain("Resource has been exhausted");
    expect(s.ofType("auto_retry_end")[0]).to.deep.include({ success: true, attempt: 2 });
    expect(s.assistants().at(-1)!.content).to.deep.equal([{ type: "text", text: "Recovered." }]);
    expect(server.requests).to.have.length(2);
    expect(server.requests[1]!.headers["x-goog-api-key"]).to.equal("gm-session-key");
  });

  it("classify() forces the tool (mode ANY) with the labels as a string enum, and returns the label", async () => {
    server.respond((_req, res) =>
      writeGemini(res, [
        chunk([{ functionCall: { name: "classify", args: { label: "risky" } } }], {
          finishReason: "STOP",
          usage: { prompt: 60, candidates: 10 },
        }),
      ]),
    );
    const s = await open("gemini-3-flash-preview");
    const answer = await sessionInternals(s.handle).models.classify({
      prompt: "rm -rf /",
      labels: ["safe", "risky"],
    });
    expect(answer.label).to.equal("risky");
    expect(answer.usage).to.include({ input: 60, output: 10 });
    const body = server.requests[0]!.body;
    expect(body.toolConfig).to.deep.equal({
      functionCallingConfig: { mode: "ANY", allowedFunctionNames: ["classify"] },
    });
    expect(body.tools[0].functionDeclarations).to.have.length(1);
    expect(body.tools[0].functionDeclarations[0].parameters.properties.label).to.deep.include({
      type: "string",
      enum: ["safe", "risky"],
    });
    expect(JSON.stringify(body)).not.to.contain("additionalProperties").and.not.contain("$schema");
  });
});
