/**
 * The ACP mode (`knightcode acp`): KnightCode as an Agent Client Protocol agent (protocol version 1) on stdin and
 * stdout, with the official TypeScript SDK. Each `session/new` or `session/load` opens a KnightCode session through
 * `ModeContext.openSession` (acp-session.ts); stdout carries only ACP messages, diagnostics go to stderr. End of
 * input ends the mode: running prompts are cancelled and every session shuts down in order.
 */
import { Readable, Writable } from "node:stream";
import {
  type AgentContext,
  agent,
  type ClientCapabilities,
  type InitializeRequest,
  type InitializeResponse,
  type ListSessionsResponse,
  type LoadSessionRequest,
  type NewSessionRequest,
  ndJsonStream,
  PROTOCOL_VERSION,
  RequestError,
} from "@agentclientprotocol/sdk";
import { errorMessage, type ModeContext, VERSION } from "@knightcodeai/cli/kit";
import { AcpSession } from "./acp-session.js";

export interface AcpOptions {
  permissionTimeoutMs: number;
}

export async function runAcp(ctx: ModeContext, options: AcpOptions): Promise<number> {
  if (!ctx.openSession || !ctx.host) {
    ctx.io.stderr.write(
      "knightcode: the acp mode opens a session per ACP session and needs a host that can (run it as `knightcode acp`)\n",
    );
    return 1;
  }
  const server = new AcpAgent(ctx, options);
  const app = agent({ name: "knightcode" })
    .onRequest("initialize", ({ params }) => server.initialize(params))
    .onRequest("authenticate", () => server.authenticate())
    .onRequest("session/new", ({ params, client }) => server.newSession(params, client))
    .onRequest("session/load", ({ params, client }) => server.loadSession(params, client))
    .onRequest("session/list", ({ params }) => server.listSessions(params.cwd ?? undefined))
    .onRequest("session/close", async ({ params }) => {
      await server.closeSession(params.sessionId);
      return {};
    })
    .onRequest("session/set_mode", ({ params }) => {
      server.session(params.sessionId).setMode(params.modeId);
      return {};
    })
    .onRequest("session/set_config_option", async ({ params }) => ({
      configOptions: await server.session(params.sessionId).setConfigOption(params.configId, params.value),
    }))
    .onRequest("session/prompt", async ({ params }) => ({
      stopReason: await server.session(params.sessionId).prompt(params.prompt),
    }))
    .onNotification("session/cancel", ({ params }) => {
      server.sessions.get(params.sessionId)?.cancel();
    });

  const output = Writable.toWeb(ctx.io.stdout as Writable) as WritableStream<Uint8Array>;
  const input = Readable.toWeb(ctx.io.stdin as Readable) as ReadableStream<Uint8Array>;
  const connection = app.connect(ndJsonStream(output, input));
  const stopped = new Promise<void>((resolve) => {
    if (ctx.signal.aborted || ctx.shutdown?.aborted) resolve();
    ctx.signal.addEventListener("abort", () => resolve(), { once: true });
    ctx.shutdown?.addEventListener("abort", () => resolve(), { once: true });
  });
  await Promise.race([connection.closed, stopped]);
  await server.closeAll();
  connection.close();
  return 0;
}

class AcpAgent {
  readonly sessions = new Map<string, AcpSession>();
  private caps: ClientCapabilities = {};

  constructor(
    private readonly ctx: ModeContext,
    private readonly options: AcpOptions,
  ) {}

  private readonly log = (message: string) => this.ctx.io.stderr.write(`knightcode: ${message}\n`);

  initialize(params: InitializeRequest): InitializeResponse {
    this.caps = params.clientCapabilities ?? {};
    return {
      // Version 1 is the one this agent speaks; a client asking for a later one decides whether to go on.
      protocolVersion: Math.min(params.protocolVersion, PROTOCOL_VERSION),
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: true, audio: false, embeddedContext: true },
        mcpCapabilities: { http: true, sse: true },
        sessionCapabilities: { list: {}, close: {} },
      },
      authMethods: this.usable() ? [] : [API_KEY_METHOD],
      agentInfo: { name: "knightcode", title: "KnightCode", version: VERSION },
    };
  }

  /** Whether sessions get a model: without one, the person must configure a provider first. */
  private usable(): boolean {
    return this.modelFound || this.ctx.session.getState().model !== undefined;
  }

  /** `authenticate` found a model that the host session, opened before, did not have. */
  private modelFound = false;

  /**
   * The one method, `api-key`: KnightCode reads API keys from the environment, models.json and its auth file at
   * start, so authenticating means checking that a model is usable now.
   */
  async authenticate(): Promise<Record<string, never>> {
    if (this.usable()) return {};
    const probe = await this.ctx.openSession!({ cwd: this.ctx.session.cwd, inMemory: true, warn: this.log });
    try {
      if (probe.getState().model !== undefined) {
        this.modelFound = true;
        return {};
      }
    } finally {
      await probe.dispose();
    }
    throw RequestError.authRequired(undefined, NO_MODEL);
  }

  async newSession(params: NewSessionRequest, client: AgentContext) {
    const session = await this.open(params.cwd, params.mcpServers, client);
    queueMicrotask(() => setTimeout(() => session.sendCommands(), 0));
    return {
      sessionId: session.sessionId,
      modes: session.modeState(),
      configOptions: session.configOptions(),
    };
  }

  async loadSession(params: LoadSessionRequest, client: AgentContext) {
    const stored = this.ctx.host!.sessions.find(params.sessionId);
    if (!stored || stored.id !== params.sessionId) throw RequestError.sessionNotFound(params.sessionId);
    await this.closeSession(params.sessionId);
    const session = await this.open(params.cwd, params.mcpServers, client, stored.path);
    await session.replay();
    setTimeout(() => session.sendCommands(), 0);
    return { modes: session.modeState(), configOptions: session.configOptions() };
  }

  private async open(
    cwd: string,
    mcpServers: NewSessionRequest["mcpServers"],
    client: AgentContext,
    sessionFile?: string,
  ): Promise<AcpSession> {
    if (typeof cwd !== "string" || !cwd.startsWith("/")) {
      throw RequestError.invalidParams(undefined, `cwd must be an absolute path, not ${JSON.stringify(cwd)}`);
    }
    if (!this.usable()) throw RequestError.authRequired(undefined, NO_MODEL);
    let session: AcpSession;
    try {
      session = await AcpSession.open({
        ctx: this.ctx,
        client,
        caps: this.caps,
        permissionTimeoutMs: this.options.permissionTimeoutMs,
        cwd,
        mcpServers,
        ...(sessionFile ? { sessionFile } : {}),
        log: this.log,
      });
    } catch (error) {
      throw new RequestError(-32603, `the session could not open: ${errorMessage(error)}`);
    }
    this.sessions.set(session.sessionId, session);
    return session;
  }

  listSessions(cwd: string | undefined): ListSessionsResponse {
    const stored = this.ctx.host!.sessions.list(cwd ? { cwd } : {});
    return {
      sessions: stored.map((s) => ({
        sessionId: s.id,
        cwd: s.cwd,
        title: s.name ?? (s.firstMessage || null),
        updatedAt: s.modified.toISOString(),
      })),
    };
  }

  session(sessionId: string): AcpSession {
    const session = this.sessions.get(sessionId);
    if (!session) throw RequestError.sessionNotFound(sessionId);
    return session;
  }

  async closeSession(sessionId: string): Promise<void> {
    const session = this.sessions.get(sessionId);
    if (!session) return;
    this.sessions.delete(sessionId);
    await session.close();
  }

  async closeAll(): Promise<void> {
    const open = [...this.sessions.keys()];
    await Promise.allSettled(open.map((id) => this.closeSession(id)));
  }
}

const NO_MODEL =
  "KnightCode has no usable model: set a provider's API key (ANTHROPIC_API_KEY, OPENAI_API_KEY, ...) in the environment the client starts it with, or configure a provider in ~/.knightcode/agent/models.json, then try again";

const API_KEY_METHOD = {
  id: "api-key",
  name: "API key",
  description: NO_MODEL,
};
