/**
 * A session for loop tests: the standard plugins, an in-memory (or temp-dir) session, the scripted provider with
 * steps given in code, and a recorder of every wire event.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ScriptEntry } from "../../builtin-extensions/scripted-provider/index.js";
import { createScriptedProvider } from "../../builtin-extensions/scripted-provider/index.js";
import {
  type AgentSessionHandle,
  type CreateAgentSessionOptions,
  createAgentSession,
  createStandardKernel,
  type SessionEvent,
} from "../../hosts/sdk/create-agent-session.js";
import type { ExtensionFactory, Kernel } from "../../kernel/index.js";

export interface Harness {
  handle: AgentSessionHandle;
  events: SessionEvent[];
  errors: string[];
  dir: string;
  ofType(type: string): SessionEvent[];
  /** Event types in order, without message_update noise unless asked. */
  types(options?: { updates?: boolean }): string[];
}

export function useHarness(): {
  open(options: {
    steps: ScriptEntry[];
    extensions?: ExtensionFactory[];
    settings?: Record<string, unknown>;
    session?: CreateAgentSessionOptions["session"];
    tools?: string[];
  }): Promise<Harness>;
} {
  const opened: { handle: AgentSessionHandle; kernel: Kernel; dir: string }[] = [];
  afterEach(async () => {
    for (const { handle, kernel, dir } of opened.splice(0)) {
      await handle.dispose();
      await kernel.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });
  return {
    async open(options) {
      const dir = mkdtempSync(join(tmpdir(), "kc-loop-"));
      const kernel = await createStandardKernel({ agentDir: join(dir, "agent"), cacheDir: false });
      const errors: string[] = [];
      const handle = await createAgentSession({
        cwd: dir,
        agentDir: join(dir, "agent"),
        kernel,
        provider: "scripted",
        model: "scripted",
        session: options.session ?? { inMemory: true },
        settings: { retry: { baseDelayMs: 5, maxDelayMs: 50 }, ...options.settings },
        extensions: [createScriptedProvider(options.steps), ...(options.extensions ?? [])],
        ...(options.tools ? { tools: options.tools } : {}),
        warn: (message) => errors.push(message),
      });
      opened.push({ handle, kernel, dir });
      const events: SessionEvent[] = [];
      handle.subscribe((event) => events.push(structuredClone(event)));
      return {
        handle,
        events,
        errors,
        dir,
        ofType: (type) => events.filter((e) => e.type === type),
        types: (o = {}) => events.filter((e) => o.updates || e.type !== "message_update").map((e) => e.type),
      };
    },
  };
}
