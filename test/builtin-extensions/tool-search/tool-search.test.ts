/**
 * builtin:tool-search in a real session against a local OpenAI-compatible server: the model's request bodies show
 * which tools are declared before and after a search.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ExtensionAPI, Type } from "@knightcodeai/cli";
import { expect } from "chai";
import openaiCompatible from "../../../builtin-extensions/providers/openai-compatible/index.js";
import { TOOL_SEARCH_DESCRIPTION } from "../../../builtin-extensions/tool-search/index.js";
import {
  type AgentSessionHandle,
  createAgentSession,
  createStandardKernel,
} from "../../../hosts/sdk/create-agent-session.js";
import type { Kernel } from "../../../kernel/index.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { startTestServer, type TestServer, writeSse } from "../../helpers/sse-server.js";
import { textStream, toolCallStream } from "../providers/openai-compatible/fixtures.js";

/** Deferred tools of a fake issue tracker and a docs server, plus one codemode tool and one hidden tool. */
function catalogue(kc: ExtensionAPI): void {
  const tool = (
    name: string,
    description: string,
    exposure: "deferred" | "codemode" | "hidden",
    ns?: string,
  ) =>
    kc.registerTool({
      name,
      description,
      parameters: Type.Object({ id: Type.Optional(Type.String({ description: "Record id" })) }),
      exposure,
      ...(ns ? { namespace: { name: ns, description: `The ${ns} server` } } : {}),
      execute: async () => ({ content: [{ type: "text", text: `${name} ran` }], details: undefined }),
    });
  tool("tracker_create_ticket", "Create a ticket in the tracker.", "deferred", "tracker");
  tool("tracker_close_ticket", "Close a ticket.", "deferred", "tracker");
  tool("docs_read_page", "Read a documentation page.", "deferred", "docs");
  tool("weather_forecast", "Weather forecast for a city.", "codemode");
  tool("secret_ticket_dump", "Dump every ticket.", "hidden");
}

describe("builtin:tool-search in a session", () => {
  let server: TestServer;
  let dir: string;
  let kernel: Kernel | undefined;
  const handles: AgentSessionHandle[] = [];

  beforeEach(async () => {
    server = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), "kc-tool-search-"));
    writeLocalModels(join(dir, "agent"), {
      baseUrl: `${server.url}/v1`,
      apiKey: "sk-test",
      models: [{ id: "m1", contextWindow: 32768, maxTokens: 1024 }],
    });
  });

  afterEach(async () => {
    for (const handle of handles.splice(0)) await handle.dispose();
    await kernel?.dispose();
    kernel = undefined;
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function open(extensions: ((kc: ExtensionAPI) => void)[], settings: Record<string, unknown> = {}) {
    const agentDir = join(dir, "agent");
    kernel ??= await createStandardKernel({ agentDir, cacheDir: false });
    const handle = await createAgentSession({
      cwd: dir,
      agentDir,
      kernel,
      provider: "local",
      model: "m1",
      session: { inMemory: true },
      settings: { retry: { enabled: false }, ...settings },
      extensions: [openaiCompatible, ...extensions],
      warn: () => {},
    });
    handles.push(handle);
    return handle;
  }

  const declared = (i: number): string[] =>
    (server.requests[i]!.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name);
  const describedAs = (i: number, name: string): string =>
    server.requests[i]!.body.tools.find((t: { function: { name: string } }) => t.function.name === name)
      .function.description;

  it("activates the tools it finds: they appear in the next request's tools", async () => {
    server.respondInOrder(
      (_req, res) => writeSse(res, toolCallStream("call_1", "tool_search", { query: "create ticket" })),
      (_req, res) => writeSse(res, textStream("found it")),
    );
    const handle = await open([catalogue]);
    await handle.prompt("open a ticket");
    expect(server.requests).to.have.length(2);
    expect(declared(0)).to.include("tool_search");
    expect(declared(0)).to.not.include("tracker_create_ticket");
    expect(declared(1)).to.include("tracker_create_ticket");
    // Only the best matches with a positive score: "close" is not in the query, but "ticket" is.
    expect(declared(1)).to.include("tracker_close_ticket");
    expect(declared(1)).to.not.include("docs_read_page");
    expect(declared(1)).to.not.include("secret_ticket_dump");
    const toolMessage = server.requests[1]!.body.messages.find((m: { role: string }) => m.role === "tool");
    expect(toolMessage.content).to.contain(
      "- tracker_create_ticket (tracker): Create a ticket in the tracker.",
    );
    // The description is the same in both requests, whatever registered in between.
    expect(describedAs(0, "tool_search")).to.equal(TOOL_SEARCH_DESCRIPTION);
    expect(describedAs(1, "tool_search")).to.equal(TOOL_SEARCH_DESCRIPTION);
  });

  it("select: activates a whole namespace, and an inactive codemode tool by name without codemode", async () => {
    server.respondInOrder(
      (_req, res) =>
        writeSse(res, toolCallStream("call_1", "tool_search", { query: "select:tracker,weather_forecast" })),
      (_req, res) => writeSse(res, textStream("done")),
    );
    const handle = await open([catalogue], { extensions: ["-builtin:codemode"] });
    await handle.prompt("load them");
    expect(declared(1)).to.include.members([
      "tracker_create_ticket",
      "tracker_close_ticket",
      "weather_forecast",
    ]);
    expect(declared(1)).to.not.include("docs_read_page");
  });

  it("leaves codemode tools to an active codemode tool", async () => {
    server.respondInOrder(
      (_req, res) =>
        writeSse(res, toolCallStream("call_1", "tool_search", { query: "select:weather_forecast" })),
      (_req, res) => writeSse(res, textStream("done")),
    );
    const handle = await open([catalogue]);
    await handle.prompt("load it");
    expect(declared(0)).to.include("codemode");
    expect(declared(1)).to.not.include("weather_forecast");
    const toolMessage = server.requests[1]!.body.messages.find((m: { role: string }) => m.role === "tool");
    expect(toolMessage.content).to.contain('No tool or namespace is named "weather_forecast"');
  });

  it("says there is no match and names the namespaces to select", async () => {
    server.respondInOrder(
      (_req, res) => writeSse(res, toolCallStream("call_1", "tool_search", { query: "spaceship" })),
      (_req, res) => writeSse(res, textStream("nothing")),
    );
    const handle = await open([catalogue]);
    await handle.prompt("find a spaceship tool");
    const toolMessage = server.requests[1]!.body.messages.find((m: { role: string }) => m.role === "tool");
    expect(toolMessage.content).to.contain('No tools match "spaceship"');
    expect(toolMessage.content).to.contain("- tracker: The tracker server");
    expect(toolMessage.content).to.contain("- docs: The docs server");
    expect(declared(1)).to.not.include("tracker_create_ticket");
  });

  it("is not declared while there are no deferred tools", async () => {
    server.respond((_req, res) => writeSse(res, textStream("hi")));
    const handle = await open([]);
    await handle.prompt("hello");
    expect(declared(0)).to.not.include("tool_search");
  });
});
