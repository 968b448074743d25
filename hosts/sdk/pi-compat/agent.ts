/**
 * pi-agent-core's `Agent` over a KnightCode session: an extension that builds an agent of its own
 * (`new Agent({ initialState: { systemPrompt, model, tools }, streamFn: streamSimple })`, `subscribe`, `prompt`)
 * gets an in-memory KnightCode session in this process (no extension files, its system prompt, exactly its tools),
 * started on the first prompt and kept for the next. pi's loop hooks (`convertToLlm`, `transformContext`,
 * `beforeToolCall`, ...) and a stream function other than pi-ai's `streamSimple` have no KnightCode counterpart:
 * the constructor refuses them by name rather than run without them.
 */
import type {
  AgentMessage,
  ExtensionAPI,
  ModelInfo,
  SessionEntry,
  ThinkingLevel,
  ToolDefinition,
} from "../../../kernel/index.js";
import type { CreateAgentSessionOptions, SessionEvent } from "../session-options.js";

interface Handle {
  prompt(text: string): Promise<void>;
  steer(text: string): void;
  followUp(text: string): void;
  abort(): unknown;
  waitForIdle(): Promise<void>;
  isIdle(): boolean;
  subscribe(listener: (event: SessionEvent) => void): () => void;
  dispose(): Promise<void>;
  readonly sessionManager: { getBranch(): SessionEntry[] };
}

/** Options an `Agent` reads; any other given option is refused. */
const READ = new Set(["initialState", "streamFn", "getApiKey", "sessionId", "steeringMode", "followUpMode"]);

type Listener = (event: SessionEvent, signal: AbortSignal) => unknown;

/** The text of a prompt given as a string or as user messages. */
function promptText(input: unknown, images?: unknown[]): string {
  if (images?.length) throw new Error("Agent.prompt: images are not supported by KnightCode's Agent");
  if (typeof input === "string") return input;
  const messages = Array.isArray(input) ? input : [input];
  return messages
    .map((message: { role?: string; content?: unknown }) => {
      if (message?.role !== "user") throw new Error("Agent.prompt: only user messages can start a run here");
      if (typeof message.content === "string") return message.content;
      return (message.content as { type: string; text?: string }[])
        .map((part) => {
          if (part.type !== "text") throw new Error("Agent.prompt: only text content is supported here");
          return part.text ?? "";
        })
        .join("");
    })
    .join("\n\n");
}

interface AgentDeps {
  create(options: CreateAgentSessionOptions): Promise<Handle>;
  streamSimple: unknown;
}

/** pi-agent-core's `Agent`, given KnightCode's `createAgentSession` and the `streamSimple` pi-ai's module offers. */
export function piAgentClass(
  create: AgentDeps["create"],
  streamSimple: unknown,
): new (
  options?: Record<string, unknown>,
) => PiAgent {
  const deps: AgentDeps = { create, streamSimple };
  return class Agent extends PiAgent {
    constructor(options: Record<string, unknown> = {}) {
      super(deps, options);
    }
  };
}

export class PiAgent {
  private systemPrompt: string;
  private model: ModelInfo | undefined;
  private thinkingLevel: ThinkingLevel;
  private tools: ToolDefinition[];
  private readonly listeners = new Set<Listener>();
  private session: Promise<Handle> | undefined;
  private run: Promise<void> | undefined;
  private controller = new AbortController();
  private errorMessage: string | undefined;

  constructor(
    private readonly deps: AgentDeps,
    options: Record<string, unknown>,
  ) {
    const refused = Object.keys(options).filter((key) => !READ.has(key) && options[key] !== undefined);
    if (options.streamFn !== undefined && options.streamFn !== deps.streamSimple) refused.unshift("streamFn");
    if (refused.length > 0) {
      throw new Error(
        `Agent from pi-agent-core: ${refused.join(", ")} ${refused.length > 1 ? "are" : "is"} not supported by KnightCode ` +
          "(its Agent runs a KnightCode session: give initialState and pi-ai's streamSimple, or use createAgentSession)",
      );
    }
    const initial = (options.initialState ?? {}) as {
      systemPrompt?: string;
      model?: ModelInfo;
      thinkingLevel?: ThinkingLevel;
      tools?: ToolDefinition[];
      messages?: unknown[];
    };
    if (initial.messages?.length) {
      throw new Error(
        "Agent from pi-agent-core: initialState.messages is not supported by KnightCode (it starts empty)",
      );
    }
    this.systemPrompt = initial.systemPrompt ?? "";
    this.model = initial.model;
    this.thinkingLevel = initial.thinkingLevel ?? "off";
    this.tools = initial.tools ?? [];
  }

  get state() {
    const agent = this;
    return {
      get systemPrompt() {
        return agent.systemPrompt;
      },
      set systemPrompt(value: string) {
        agent.systemPrompt = value;
      },
      get model() {
        return agent.model;
      },
      set model(value: ModelInfo | undefined) {
        agent.beforeStart("model");
        agent.model = value;
      },
      get thinkingLevel() {
        return agent.thinkingLevel;
      },
      set thinkingLevel(value: ThinkingLevel) {
        agent.beforeStart("thinkingLevel");
        agent.thinkingLevel = value;
      },
      get tools() {
        return agent.tools;
      },
      set tools(value: ToolDefinition[]) {
        agent.beforeStart("tools");
        agent.tools = value;
      },
      get messages(): AgentMessage[] {
        return agent.messages();
      },
      set messages(value: AgentMessage[]) {
        if (value.length > 0 || agent.session) {
          throw new Error(
            "Agent.state.messages: KnightCode's Agent keeps its own transcript; use reset() to clear it",
          );
        }
      },
      get isStreaming() {
        return agent.run !== undefined;
      },
      pendingToolCalls: new Set<string>(),
      get errorMessage() {
        return agent.errorMessage;
      },
    };
  }

  setSystemPrompt(value: string): void {
    this.systemPrompt = value;
  }

  setModel(model: ModelInfo): void {
    this.state.model = model;
  }

  setThinkingLevel(level: ThinkingLevel): void {
    this.state.thinkingLevel = level;
  }

  setTools(tools: ToolDefinition[]): void {
    this.state.tools = tools;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get signal(): AbortSignal | undefined {
    return this.run ? this.controller.signal : undefined;
  }

  async prompt(input: unknown, images?: unknown[]): Promise<void> {
    if (this.run) {
      throw new Error(
        "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.",
      );
    }
    const text = promptText(input, images);
    this.controller = new AbortController();
    this.errorMessage = undefined;
    this.run = (async () => {
      const handle = await this.start();
      await handle.prompt(text);
      const last = this.messages().at(-1) as { errorMessage?: string } | undefined;
      this.errorMessage = last?.errorMessage;
    })();
    try {
      await this.run;
    } finally {
      this.run = undefined;
    }
  }

  async continue(): Promise<never> {
    throw new Error("Agent.continue() is not supported by KnightCode's Agent: prompt() again");
  }

  steer(message: unknown): void {
    void this.start().then((handle) => handle.steer(promptText(message)));
  }

  followUp(message: unknown): void {
    void this.start().then((handle) => handle.followUp(promptText(message)));
  }

  abort(): void {
    this.controller.abort();
    void this.session?.then((handle) => handle.abort());
  }

  async waitForIdle(): Promise<void> {
    await this.run?.catch(() => {});
  }

  reset(): void {
    const session = this.session;
    this.session = undefined;
    void session?.then((handle) =>
      handle.dispose().catch((error: unknown) => process.stderr.write(`Agent.reset: ${String(error)}\n`)),
    );
  }

  private beforeStart(what: string): void {
    if (this.session) {
      throw new Error(`Agent.state.${what}: KnightCode's Agent fixes it at the first prompt; reset() first`);
    }
  }

  private messages(): AgentMessage[] {
    return (
      this.current?.sessionManager
        .getBranch()
        .flatMap((entry) => (entry.type === "message" ? [entry.message as AgentMessage] : [])) ?? []
    );
  }

  private current: Handle | undefined;

  private start(): Promise<Handle> {
    this.session ??= (async () => {
      const tools = this.tools;
      const handle = await this.deps.create({
        ...(this.model ? { provider: this.model.provider, model: this.model.id } : {}),
        thinkingLevel: this.thinkingLevel,
        tools: tools.map((tool) => tool.name),
        noExtensions: true,
        session: { inMemory: true },
        extensions: [
          (knightcode: ExtensionAPI) => {
            for (const tool of tools) knightcode.registerTool(tool);
            knightcode.on("before_agent_start", () => ({ systemPrompt: this.systemPrompt }));
          },
        ],
      });
      handle.subscribe((event) => {
        for (const listener of this.listeners) {
          const report = (error: unknown) => process.stderr.write(`Agent listener error: ${String(error)}\n`);
          try {
            Promise.resolve(listener(event, this.controller.signal)).catch(report);
          } catch (error) {
            report(error);
          }
        }
      });
      this.current = handle;
      return handle;
    })();
    return this.session;
  }
}
