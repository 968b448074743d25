/**
 * The test kit for extension authors: a real session (the standard plugins, the extensions under test, the scripted
 * provider answering from steps given in the test) in a temp folder, with an event recorder and helpers for prompts,
 * dialogs and tool calls. Dispose it after each test.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createScriptedProvider,
  type ScriptEntry,
} from "../../builtin-extensions/scripted-provider/index.js";
import type {
  AssistantMessage,
  DialogOptions,
  ExtensionFactory,
  ExtensionLogEntry,
  Kernel,
  ToolResult,
} from "../../kernel/index.js";
import {
  type AgentSessionHandle,
  createAgentSession,
  createStandardKernel,
  type SessionEvent,
} from "../sdk/create-agent-session.js";
import { createTestUI, type DialogAnswer, type TestUIRecord } from "./test-ui.js";

export interface TestSessionOptions {
  /** Extension factories, or paths of extension files. */
  extensions?: (ExtensionFactory | string)[];
  /** What the scripted model answers, one step per request (see the scripted provider's script format). */
  script?: ScriptEntry[];
  settings?: Record<string, unknown>;
  /** The working folder; a fresh temp folder by default (removed by dispose). */
  cwd?: string;
  /** The agent folder (personal settings, prompts, ...); a fresh one in the temp folder by default. */
  agentDir?: string;
  /**
   * Trust the project (`true`, `--approve`); by default it is not trusted (`false`, `--no-approve`). `"ask"` passes
   * neither flag: saved decisions in the agent folder's trust.json, `project_trust` handlers and
   * `defaultProjectTrust` decide, and a trust dialog goes to the UI.
   */
  approve?: boolean | "ask";
  /** Keep the session in memory (default) or write it to the temp agent folder. */
  persist?: boolean;
  /** Values of flags the extensions registered. */
  flags?: Record<string, boolean | string>;
  /** Built-in extensions to leave out, e.g. `["builtin:core-tools"]`. */
  disableBuiltins?: string[];
  /** The exact set of active tools (`--tools`), by name; `[]` for none; by default all of them. */
  tools?: string[];
}

export interface ToolCallRecord {
  toolCallId: string;
  toolName: string;
  args: unknown;
  result?: ToolResult;
  isError?: boolean;
}

/** Scripted answers for dialogs, in the order they are asked; `undefined` dismisses one. */

export interface TestSession {
  readonly session: AgentSessionHandle;
  readonly cwd: string;
  /** The agent folder: `agentDir` if given, otherwise the one in the temp folder. */
  readonly agentDir: string;
  readonly events: SessionEvent[];
  /** What the extensions wrote with `knightcode.log`, every level, in order. */
  readonly logs: ExtensionLogEntry[];
  /** Diagnostics the session reported (extension errors, settings and trust notices). */
  readonly warnings: string[];
  /** What the extensions did with `ctx.ui`: notifications, status texts, widgets, every call in order, ... */
  readonly ui: TestUIRecord;
  /** Runs a prompt (or `/command`) until the session settles. */
  prompt(text: string): Promise<void>;
  eventsOfType(type: string): SessionEvent[];
  /** The assistant's last text answer. */
  lastAssistantText(): string | undefined;
  /** Tool calls the session ran (model-issued and nested), with their results. */
  toolCalls(): ToolCallRecord[];
  /** Queues answers for the next dialogs (select: the option text; confirm: a boolean; input/editor: text). */
  answerDialogs(...answers: DialogAnswer[]): void;
  /** Dialogs asked so far, as `kind: title`. */
  readonly dialogs: string[];
  dispose(): Promise<void>;
}

export async function createTestSession(options: TestSessionOptions = {}): Promise<TestSession> {
  const temp = mkdtempSync(join(tmpdir(), "kc-test-session-"));
  const cwd = options.cwd ?? join(temp, "project");
  if (!options.cwd) (await import("node:fs")).mkdirSync(cwd, { recursive: true });
  const agentDir = options.agentDir ?? join(temp, "agent");
  let kernel: Kernel | undefined;
  let session: AgentSessionHandle | undefined;
  const logs: ExtensionLogEntry[] = [];
  const warnings: string[] = [];
  const answers: DialogAnswer[] = [];
  const dialogs: string[] = [];
  const next = (kind: string, title: string, _opts?: DialogOptions): DialogAnswer => {
    dialogs.push(`${kind}: ${title}`);
    return answers.shift();
  };
  const { ui: testUI, record: ui } = createTestUI(next);
  try {
    kernel = await createStandardKernel({ agentDir });
    session = await createAgentSession({
      cwd,
      agentDir,
      kernel,
      provider: "scripted",
      model: "scripted",
      session: options.persist ? {} : { inMemory: true },
      settings: {
        retry: { baseDelayMs: 1, maxDelayMs: 20 },
        ...(options.disableBuiltins ? { extensions: options.disableBuiltins.map((id) => `-${id}`) } : {}),
        ...options.settings,
      },
      extensions: [createScriptedProvider(options.script ?? []), ...(options.extensions ?? [])],
      ui: testUI,
      hasUI: true,
      ...(options.approve === "ask" ? {} : { approve: options.approve ?? false }),
      ...(options.tools ? { tools: options.tools } : {}),
      ...(options.flags ? { flags: options.flags } : {}),
      warn: (message) => warnings.push(message),
      log: (entry) => logs.push(entry),
    });
  } catch (error) {
    await kernel?.dispose();
    rmSync(temp, { recursive: true, force: true });
    throw error;
  }
  const handle = session;
  const events: SessionEvent[] = [];
  handle.subscribe((event) => events.push(event));
  return {
    session: handle,
    cwd,
    agentDir,
    events,
    logs,
    warnings,
    ui,
    dialogs,
    prompt: async (text) => {
      await handle.prompt(text);
      await handle.waitForIdle();
    },
    eventsOfType: (type) => events.filter((e) => e.type === type),
    lastAssistantText: () => {
      const last = events
        .filter((e) => e.type === "message_end" && (e.message as { role: string }).role === "assistant")
        .at(-1)?.message as AssistantMessage | undefined;
      return last?.content
        .filter((c) => c.type === "text")
        .map((c) => (c as { text: string }).text)
        .join("");
    },
    toolCalls: () => {
      // Ids can repeat across sessions of one test (a fork restarts the script's numbering), so an end event
      // belongs to the latest open call with its id.
      const calls: ToolCallRecord[] = [];
      for (const e of events) {
        if (e.type === "tool_execution_start") {
          calls.push({ toolCallId: String(e.toolCallId), toolName: String(e.toolName), args: e.args });
        } else if (e.type === "tool_execution_end") {
          const call = calls.findLast((c) => c.toolCallId === e.toolCallId && c.result === undefined);
          if (call) {
            call.result = e.result as ToolResult;
            call.isError = e.isError === true;
          }
        }
      }
      return calls;
    },
    answerDialogs: (...more) => {
      answers.push(...more);
    },
    dispose: async () => {
      await handle.dispose();
      await kernel?.dispose();
      rmSync(temp, { recursive: true, force: true });
    },
  };
}
