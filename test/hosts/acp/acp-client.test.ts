/**
 * `knightcode acp` and what the client offers: permission requests answered both ways (and not at all), the
 * client's file system and terminal behind the core tools, MCP servers given in session/new, and the session modes.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type {
  ContentBlock,
  CreateElicitationRequest,
  RequestPermissionRequest,
  SessionUpdate,
} from "@agentclientprotocol/sdk";
import { expect } from "chai";
import { everythingServer } from "../../builtin-extensions/mcp/servers.js";
import { useTempDir } from "../../helpers/temp-dir.js";
import { type AcpHarness, acpHarness, toolMessages, toolPerPrompt, toolUpdates } from "./harness.js";

const prompt = (text: string): ContentBlock[] => [{ type: "text", text }];

describe("knightcode acp: permissions, the client's files and terminals, MCP servers and modes", function () {
  this.timeout(60_000);
  let h: AcpHarness;
  // Registered before the temp dir's: the children stop before their folder goes.
  afterEach(() => h.close());
  const tmp = useTempDir("kc-acp-client-");

  describe("with the permission gate asking about bash", () => {
    beforeEach(async () => {
      h = await acpHarness(tmp.path, { "tools.json": { "classifier-gate": { enabled: true, ask: "bash" } } });
      toolPerPrompt(h.model);
    });

    it("asks through session/request_permission: allow runs the call, reject blocks it, allow always stops asking", async () => {
      const asked: RequestPermissionRequest[] = [];
      const answers = ["allow_once", "reject_once", "allow_always"];
      const acp = await h.start({
        permission: (request) => {
          asked.push(request);
          return { outcome: { outcome: "selected", optionId: answers[asked.length - 1] ?? "reject_once" } };
        },
      });
      const { sessionId } = await acp.agent.request("session/new", { cwd: h.project, mcpServers: [] });
      const run = (command: string) =>
        acp.agent.request("session/prompt", {
          sessionId,
          prompt: prompt(`bash: ${JSON.stringify({ command })}`),
        });

      expect((await run("touch allowed.txt")).stopReason).to.equal("end_turn");
      expect(existsSync(join(h.project, "allowed.txt"))).to.equal(true);
      expect(asked).to.have.length(1);
      expect(asked[0]!.toolCall.toolCallId).to.equal("call_1");
      expect(asked[0]!.toolCall.title).to.equal("touch allowed.txt");
      expect(asked[0]!.options.map((o) => o.kind)).to.deep.equal([
        "allow_once",
        "allow_always",
        "reject_once",
      ]);

      expect((await run("touch rejected.txt")).stopReason).to.equal("end_turn");
      expect(existsSync(join(h.project, "rejected.txt"))).to.equal(false);
      const rejected = toolUpdates(acp.updates(sessionId), "call_2").at(-1)!;
      expect(rejected.status).to.equal("failed");
      expect(toolMessages(h.model.requests.at(-1))).to.contain("declined");

      await run("touch always-1.txt");
      await run("touch always-2.txt");
      expect(asked, "allow always: the second call is not asked about").to.have.length(3);
      expect(existsSync(join(h.project, "always-1.txt"))).to.equal(true);
      expect(existsSync(join(h.project, "always-2.txt"))).to.equal(true);
    });

    it("fails closed: a client that never answers gets the call refused once the wait runs out", async () => {
      let asked = 0;
      const acp = await h.start(
        {
          permission: () => {
            asked++;
            return new Promise(() => {});
          },
        },
        ["--provider", "local", "--model", "m", "--acp-permission-timeout", "1"],
      );
      const { sessionId } = await acp.agent.request("session/new", { cwd: h.project, mcpServers: [] });
      const started = Date.now();
      const answer = await acp.agent.request("session/prompt", {
        sessionId,
        prompt: prompt('bash: {"command":"touch unanswered.txt"}'),
      });
      expect(answer.stopReason).to.equal("end_turn");
      expect(asked).to.equal(1);
      expect(Date.now() - started).to.be.lessThan(15_000);
      expect(existsSync(join(h.project, "unanswered.txt"))).to.equal(false);
      expect(acp.stderr()).to.contain("did not answer the permission request");
    });
  });

  describe("with a plain agent dir", () => {
    beforeEach(async () => {
      h = await acpHarness(tmp.path);
      toolPerPrompt(h.model);
    });

    it("reads, writes and edits through the client's fs/read_text_file and fs/write_text_file (its buffers, not the disk)", async () => {
      const notes = join(h.project, "notes.txt");
      writeFileSync(notes, "text on the disk\n");
      const buffers = new Map<string, string>([[notes, "unsaved buffer text\n"]]);
      const writes: { path: string; content: string }[] = [];
      const acp = await h.start({
        capabilities: { fs: { readTextFile: true, writeTextFile: true } },
        readTextFile: ({ path }) => {
          const text = buffers.get(path);
          if (text === undefined) throw new Error(`file not found: ${path}`);
          return text;
        },
        writeTextFile: ({ path, content }) => {
          writes.push({ path, content });
          buffers.set(path, content);
        },
      });
      const { sessionId } = await acp.agent.request("session/new", { cwd: h.project, mcpServers: [] });

      await acp.agent.request("session/prompt", { sessionId, prompt: prompt('read: {"path":"notes.txt"}') });
      const read = toolMessages(h.model.requests.at(-1));
      expect(read).to.contain("unsaved buffer text");
      expect(read).to.not.contain("text on the disk");
      expect(toolUpdates(acp.updates(sessionId), "call_1")[0]).to.deep.include({
        kind: "read",
        locations: [{ path: notes }],
      });

      await acp.agent.request("session/prompt", {
        sessionId,
        prompt: prompt('write: {"path":"out.txt","content":"written through the client\\n"}'),
      });
      expect(writes).to.deep.equal([
        { path: join(h.project, "out.txt"), content: "written through the client\n" },
      ]);
      expect(existsSync(join(h.project, "out.txt")), "nothing written to the disk").to.equal(false);
      const written = toolUpdates(acp.updates(sessionId), "call_2").at(-1)!;
      expect(written.status).to.equal("completed");
      expect(written.content).to.deep.equal([
        {
          type: "diff",
          path: join(h.project, "out.txt"),
          oldText: null,
          newText: "written through the client\n",
        },
      ]);

      await acp.agent.request("session/prompt", {
        sessionId,
        prompt: prompt('edit: {"path":"notes.txt","edits":[{"oldText":"unsaved","newText":"edited"}]}'),
      });
      expect(writes.at(-1)).to.deep.equal({ path: notes, content: "edited buffer text\n" });
      expect(readFileSync(notes, "utf8")).to.equal("text on the disk\n");
      const edited = toolUpdates(acp.updates(sessionId), "call_3");
      expect(edited[0]).to.deep.include({ kind: "edit", title: "Edit notes.txt" });
      expect(edited.at(-1)!.content).to.deep.equal([
        { type: "diff", path: notes, oldText: "unsaved buffer text\n", newText: "edited buffer text\n" },
      ]);
    });

    it("runs bash in the client's terminal (terminal/*) and embeds the terminal in the tool call", async () => {
      const created: { command: string; args?: string[]; cwd?: string | null }[] = [];
      const acp = await h.start({
        capabilities: { terminal: true },
        terminal: (request) => {
          created.push(request);
          return { output: "printed by the client terminal\n", exitCode: 0 };
        },
      });
      const { sessionId } = await acp.agent.request("session/new", { cwd: h.project, mcpServers: [] });
      await acp.agent.request("session/prompt", {
        sessionId,
        prompt: prompt('bash: {"command":"echo local"}'),
      });
      expect(created).to.have.length(1);
      expect(created[0]!.args).to.deep.equal(["-c", "echo local"]);
      expect(created[0]!.cwd).to.equal(h.project);
      expect(toolMessages(h.model.requests.at(-1))).to.contain("printed by the client terminal");
      const updates = toolUpdates(acp.updates(sessionId), "call_1");
      expect(updates.at(-1)).to.deep.include({
        status: "completed",
        content: [{ type: "terminal", terminalId: "term-1" }],
      });
    });

    it("connects the MCP servers given in session/new, and the model calls their tools", async () => {
      const acp = await h.start();
      const { sessionId } = await acp.agent.request("session/new", {
        cwd: h.project,
        mcpServers: [
          { name: "everything", command: process.execPath, args: [everythingServer, "stdio"], env: [] },
        ],
      });
      await acp.agent.request("session/prompt", {
        sessionId,
        prompt: prompt('mcp__everything__echo: {"message":"over acp"}'),
      });
      const declared = (h.model.requests[0]!.body as { tools: { function: { name: string } }[] }).tools.map(
        (t) => t.function.name,
      );
      expect(declared).to.include("mcp__everything__echo");
      expect(toolMessages(h.model.requests.at(-1))).to.contain("Echo: over acp");
      expect(toolUpdates(acp.updates(sessionId), "call_1").at(-1)!.status).to.equal("completed");
    });

    it("asks ask_user's questions through an elicitation form, and says no one can answer when the client has no forms", async () => {
      const questions = {
        questions: [
          {
            id: "color",
            text: "Which colour?",
            options: [{ label: "red" }, { label: "blue", description: "calm" }],
          },
        ],
      };
      const forms: CreateElicitationRequest[] = [];
      const acp = await h.start({
        capabilities: { elicitation: { form: {} } },
        form: (request) => {
          forms.push(request);
          return { action: "accept", content: { color: "blue" } };
        },
      });
      const { sessionId } = await acp.agent.request("session/new", { cwd: h.project, mcpServers: [] });
      await acp.agent.request("session/prompt", {
        sessionId,
        prompt: prompt(`ask_user: ${JSON.stringify(questions)}`),
      });
      expect(forms).to.have.length(1);
      const form = forms[0] as CreateElicitationRequest & {
        requestedSchema: { properties: Record<string, { oneOf: { const: string }[] }> };
      };
      expect(form.mode).to.equal("form");
      expect(form.requestedSchema.properties.color!.oneOf.map((o) => o.const)).to.deep.equal(["red", "blue"]);
      expect(toolMessages(h.model.requests.at(-1))).to.contain("blue");

      const formless = await h.start();
      const other = await formless.agent.request("session/new", { cwd: h.project, mcpServers: [] });
      await formless.agent.request("session/prompt", {
        sessionId: other.sessionId,
        prompt: prompt(`ask_user: ${JSON.stringify(questions)}`),
      });
      expect(toolMessages(h.model.requests.at(-1))).to.contain("No one can answer");
    });

    it("switches modes (read-only refuses changes, ask asks) and models through session/set_mode and set_config_option", async () => {
      const asked: RequestPermissionRequest[] = [];
      const acp = await h.start({
        permission: (request) => {
          asked.push(request);
          return { outcome: { outcome: "selected", optionId: "reject_once" } };
        },
      });
      const { sessionId } = await acp.agent.request("session/new", { cwd: h.project, mcpServers: [] });
      await acp.agent.request("session/set_mode", { sessionId, modeId: "read-only" });
      await acp.agent.request("session/prompt", {
        sessionId,
        prompt: prompt('write: {"path":"blocked.txt","content":"x"}'),
      });
      expect(existsSync(join(h.project, "blocked.txt"))).to.equal(false);
      expect(toolMessages(h.model.requests.at(-1))).to.contain("read-only mode");
      const modeUpdates = acp.updates(sessionId, "current_mode_update") as Extract<
        SessionUpdate,
        { sessionUpdate: "current_mode_update" }
      >[];
      expect(modeUpdates.map((u) => u.currentModeId)).to.deep.equal(["read-only"]);

      // The ask mode: a call that can change something waits for the person.
      await acp.agent.request("session/set_mode", { sessionId, modeId: "ask" });
      await acp.agent.request("session/prompt", {
        sessionId,
        prompt: prompt('write: {"path":"asked.txt","content":"x"}'),
      });
      expect(asked.map((r) => r.toolCall.title)).to.deep.equal(["Write asked.txt"]);
      expect(existsSync(join(h.project, "asked.txt")), "rejected by the client").to.equal(false);
      await acp.agent.request("session/prompt", {
        sessionId,
        prompt: prompt('read: {"path":"nothing.txt"}'),
      });
      expect(asked, "a read-only tool is not asked about").to.have.length(1);

      const set = await acp.agent.request("session/set_config_option", {
        sessionId,
        configId: "model",
        value: "local/m2",
      });
      const offered = set.configOptions.find((o) => o.id === "model");
      expect(offered?.currentValue).to.equal("local/m2");
      // The dropdown offers what can be used (the local server's models), not the catalogues of providers
      // without a key.
      const values = ((offered as { options?: { value: string }[] } | undefined)?.options ?? []).map(
        (o) => o.value,
      );
      expect(values).to.include.members(["local/m2"]);
      expect(
        values.every((v) => v.startsWith("local/")),
        values.join(", "),
      ).to.equal(true);
      await acp.agent.request("session/prompt", { sessionId, prompt: prompt("hello") });
      expect((h.model.requests.at(-1)!.body as { model: string }).model).to.equal("m2");

      const wrong = await acp.agent
        .request("session/set_config_option", { sessionId, configId: "model", value: "local/nope" })
        .then(
          () => undefined,
          (error: Error) => error,
        );
      expect(wrong?.message).to.contain('no available model "local/nope"');
    });
  });
});
