/**
 * The ACP test harness: the built `knightcode acp` as a child process, driven by the ACP SDK's own client side
 * (`client()` connected to the child's stdio), against a scripted OpenAI-compatible server on 127.0.0.1. Every
 * line the child writes to stdout is kept and checked to be a JSON-RPC message; the client's handlers (permission,
 * file system, terminals, forms) are the test's to script.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough, Readable, Writable } from "node:stream";
import {
  type ClientCapabilities,
  type ClientConnection,
  type ClientContext,
  type CreateElicitationRequest,
  type CreateElicitationResponse,
  type CreateTerminalRequest,
  client,
  type InitializeResponse,
  ndJsonStream,
  type ReadTextFileRequest,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionNotification,
  type SessionUpdate,
  type WriteTextFileRequest,
} from "@agentclientprotocol/sdk";
import { textStream, toolCallStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { cliBin } from "../../helpers/cli.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { startTestServer, type TestServer, writeSse } from "../../helpers/sse-server.js";

export interface ClientScript {
  capabilities?: ClientCapabilities;
  permission?(
    request: RequestPermissionRequest,
  ): RequestPermissionResponse | Promise<RequestPermissionResponse>;
  readTextFile?(request: ReadTextFileRequest): string;
  writeTextFile?(request: WriteTextFileRequest): void;
  /** `elicitation/create`: the form's answer. */
  form?(request: CreateElicitationRequest): CreateElicitationResponse;
  /** A fake terminal: what the command "printed" and its exit code. */
  terminal?(request: CreateTerminalRequest): { output: string; exitCode: number };
}

export interface AcpChild {
  child: ChildProcessWithoutNullStreams;
  agent: ClientContext;
  connection: ClientConnection;
  init: InitializeResponse;
  notifications: SessionNotification[];
  /** Every stdout line. */
  lines: string[];
  stderr(): string;
  /** Updates of one session (in order), optionally of one kind. */
  updates(sessionId: string, kind?: SessionUpdate["sessionUpdate"]): SessionUpdate[];
  waitFor(predicate: () => boolean, what: string, ms?: number): Promise<void>;
  /** Ends the child's input and waits (bounded) for it to exit; returns its exit code. */
  stop(): Promise<number | null>;
}

export interface AcpHarness {
  root: string;
  agentDir: string;
  project: string;
  model: TestServer;
  start(script?: ClientScript, args?: string[], env?: Record<string, string>): Promise<AcpChild>;
  close(): Promise<void>;
}

export async function acpHarness(root: string, files: Record<string, unknown> = {}): Promise<AcpHarness> {
  const agentDir = join(root, "agent");
  const project = join(root, "project");
  mkdirSync(project, { recursive: true });
  const model = await startTestServer();
  writeLocalModels(agentDir, {
    baseUrl: `${model.url}/v1`,
    apiKey: "LOCAL_KEY",
    models: [
      { id: "m", contextWindow: 32000, maxTokens: 1024 },
      { id: "m2", contextWindow: 64000, maxTokens: 1024 },
    ],
  });
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ retry: { enabled: false } }));
  for (const [name, content] of Object.entries(files)) {
    writeFileSync(join(agentDir, name), typeof content === "string" ? content : JSON.stringify(content));
  }
  const children: AcpChild[] = [];
  return {
    root,
    agentDir,
    project,
    model,
    async start(script = {}, args = ["--provider", "local", "--model", "m"], env = {}) {
      const spawned = spawnAcp(script, args, {
        cwd: project,
        env: { ...process.env, KNIGHTCODE_AGENT_DIR: agentDir, LOCAL_KEY: "sk-local", NO_COLOR: "1", ...env },
      });
      children.push(spawned.acp);
      spawned.acp.init = await withTimeout(
        spawned.acp.agent.request("initialize", {
          protocolVersion: 1,
          clientCapabilities: script.capabilities ?? {},
          clientInfo: { name: "acp-test", version: "1.0.0" },
        }),
        20_000,
        () => `initialize got no answer\n${spawned.acp.stderr()}`,
      );
      return spawned.acp;
    },
    async close() {
      await Promise.all(children.map((c) => c.stop()));
      await model.close();
      for (const c of children) {
        const bad = c.lines.filter((line) => {
          try {
            return (JSON.parse(line) as { jsonrpc?: string }).jsonrpc !== "2.0";
          } catch {
            return true;
          }
        });
        if (bad.length > 0) throw new Error(`stdout carried lines that are not JSON-RPC:\n${bad.join("\n")}`);
      }
    },
  };
}

function spawnAcp(
  script: ClientScript,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): { acp: AcpChild } {
  const child = spawn(process.execPath, [cliBin, "acp", ...args], {
    ...options,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (d: string) => {
    stderr += d;
  });
  const lines: string[] = [];
  let pending = "";
  const copy = new PassThrough();
  child.stdout.on("data", (chunk: Buffer) => {
    pending += chunk.toString("utf8");
    let at = pending.indexOf("\n");
    while (at >= 0) {
      lines.push(pending.slice(0, at));
      pending = pending.slice(at + 1);
      at = pending.indexOf("\n");
    }
  });
  child.stdout.pipe(copy);
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const notifications: SessionNotification[] = [];
  const terminals = new Map<string, { output: string; exitCode: number }>();
  let app = client({ name: "acp-test" })
    .onNotification("session/update", ({ params }) => {
      notifications.push(params);
    })
    .onRequest("session/request_permission", async ({ params }) =>
      script.permission
        ? script.permission(params)
        : { outcome: { outcome: "selected", optionId: "reject_once" } },
    );
  if (script.readTextFile) {
    const read = script.readTextFile;
    app = app.onRequest("fs/read_text_file", ({ params }) => ({ content: read(params) }));
  }
  if (script.writeTextFile) {
    const write = script.writeTextFile;
    app = app.onRequest("fs/write_text_file", ({ params }) => {
      write(params);
      return {};
    });
  }
  if (script.form) {
    const answer = script.form;
    app = app.onRequest("elicitation/create", ({ params }) => answer(params));
  }
  if (script.terminal) {
    const run = script.terminal;
    let n = 0;
    app = app
      .onRequest("terminal/create", ({ params }) => {
        const terminalId = `term-${++n}`;
        terminals.set(terminalId, run(params));
        return { terminalId };
      })
      .onRequest("terminal/output", ({ params }) => ({
        output: terminals.get(params.terminalId)?.output ?? "",
        truncated: false,
        exitStatus: { exitCode: terminals.get(params.terminalId)?.exitCode ?? null },
      }))
      .onRequest("terminal/wait_for_exit", ({ params }) => ({
        exitCode: terminals.get(params.terminalId)?.exitCode ?? null,
      }))
      .onRequest("terminal/kill", () => ({}))
      .onRequest("terminal/release", () => ({}));
  }
  const connection = app.connect(
    ndJsonStream(
      Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      Readable.toWeb(copy) as ReadableStream<Uint8Array>,
    ),
  );
  const acp: AcpChild = {
    child,
    agent: connection.agent,
    connection,
    init: undefined as unknown as InitializeResponse,
    notifications,
    lines,
    stderr: () => stderr,
    updates: (sessionId, kind) =>
      notifications
        .filter((n) => n.sessionId === sessionId && (kind === undefined || n.update.sessionUpdate === kind))
        .map((n) => n.update),
    async waitFor(predicate, what, ms = 15_000) {
      const until = Date.now() + ms;
      while (!predicate()) {
        if (Date.now() > until) throw new Error(`timed out waiting for ${what}\n${stderr}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.stdin.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      const code = await exited;
      clearTimeout(timer);
      connection.close();
      return code;
    },
  };
  return { acp };
}

export async function withTimeout<T>(promise: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(what())), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The text of a session's agent message chunks, joined. */
export function agentText(updates: SessionUpdate[]): string {
  return updates
    .flatMap((u) =>
      u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? [u.content.text] : [],
    )
    .join("");
}

type Message = { role: string; content: unknown };

/** A message's text (string content, or its text parts). */
export function messageText(message: Message | undefined): string {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((p: { type?: string; text?: string }) => (p.type === "text" ? (p.text ?? "") : ""))
    .join("");
}

/**
 * A model for several prompts: a prompt `<tool>: <json args>` makes it call that tool once (ids call_1, call_2, ...
 * in order); after a tool result it answers "done"; any other prompt gets "nothing to do".
 */
export function toolPerPrompt(model: TestServer): void {
  let n = 0;
  model.respond((req, res) => {
    const messages = (req.body as { messages: Message[] }).messages;
    const last = messages.at(-1)!;
    if (last.role === "tool") return writeSse(res, textStream("done"));
    const match = /^(\w+): (\{.*\})\s*$/s.exec(messageText(last));
    if (!match) return writeSse(res, textStream("nothing to do"));
    return writeSse(res, toolCallStream(`call_${++n}`, match[1]!, JSON.parse(match[2]!)));
  });
}

/** The tool results the model was sent in a request, as JSON text. */
export function toolMessages(request: { body: unknown } | undefined): string {
  return JSON.stringify(
    ((request?.body ?? { messages: [] }) as { messages: Message[] }).messages.filter(
      (m) => m.role === "tool",
    ),
  );
}

/** A tool call's `tool_call` and `tool_call_update`s, in order. */
export function toolUpdates(updates: SessionUpdate[], toolCallId: string) {
  return updates.filter(
    (u) =>
      (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") &&
      u.toolCallId === toolCallId,
  ) as Extract<SessionUpdate, { toolCallId: string }>[];
}
