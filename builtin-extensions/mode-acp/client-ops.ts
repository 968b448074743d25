/**
 * The client's file system and terminals as KnightCode's tool operations (`toolOperationsService`): with
 * `fs.readTextFile` the read and edit tools see the editor's buffers, unsaved changes included; with
 * `fs.writeTextFile` write and edit go through the editor; with `terminal` bash runs in a client terminal that the
 * tool call embeds, its output read back for the model. A capability the client did not advertise stays local.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import {
  type AgentContext,
  type ClientCapabilities,
  RequestError,
  type TerminalOutputResponse,
  type WaitForTerminalExitResponse,
} from "@agentclientprotocol/sdk";
import {
  type BashOperations,
  errorMessage,
  type ToolOperations,
  type ToolTextFiles,
  writeFileAtomic,
} from "@knightcodeai/cli/kit";

/** What the operations need of their session; `sessionId` is read at each call (it is known only once open). */
export interface OpsSession {
  readonly sessionId: string;
  /** The terminal a bash call runs in, for its tool call's content. */
  attachTerminal(command: string, terminalId: string): Promise<void>;
}

/** How often a running command's output is read back. */
const POLL_MS = 100;
/** The output a client terminal keeps (its start is dropped past this). */
const OUTPUT_LIMIT = 1024 * 1024;

export function clientToolOperations(
  client: AgentContext,
  caps: ClientCapabilities,
  session: OpsSession,
): ToolOperations | undefined {
  const reads = caps.fs?.readTextFile === true;
  const writes = caps.fs?.writeTextFile === true;
  const files: ToolTextFiles | undefined =
    reads || writes
      ? {
          readTextFile: reads
            ? (path) => clientRead(client, session, path)
            : async (path) => (await readFile(path)).toString("utf8"),
          writeTextFile: writes
            ? async (path, content) => {
                await client.request("fs/write_text_file", { sessionId: session.sessionId, path, content });
              }
            : async (path, content) => {
                await writeFileAtomic(path, content);
              },
        }
      : undefined;
  const bash = caps.terminal === true ? terminalBash(client, session) : undefined;
  if (!files && !bash) return undefined;
  return { ...(files ? { files } : {}), ...(bash ? { bash } : {}) };
}

async function clientRead(client: AgentContext, session: OpsSession, path: string): Promise<string> {
  try {
    const { content } = await client.request("fs/read_text_file", { sessionId: session.sessionId, path });
    return content;
  } catch (error) {
    // The tools word a missing file themselves ("File not found: ..."); anything else keeps the client's words.
    const message = errorMessage(error);
    const missing =
      (error instanceof RequestError && error.code === -32002) ||
      /not found|no such file|does not exist|ENOENT/i.test(
        `${message} ${JSON.stringify((error as RequestError).data ?? "")}`,
      );
    const failure = new Error(`the client could not read ${path}: ${message}`) as NodeJS.ErrnoException;
    if (missing) failure.code = "ENOENT";
    throw failure;
  }
}

const SHELL = existsSync("/bin/bash") ? "/bin/bash" : "/bin/sh";

function terminalBash(client: AgentContext, session: OpsSession): BashOperations {
  return {
    async exec(command, cwd, { onData, signal, timeout }) {
      signal?.throwIfAborted();
      const sessionId = session.sessionId;
      const { terminalId } = await client.request("terminal/create", {
        sessionId,
        command: SHELL,
        args: ["-c", command],
        cwd,
        outputByteLimit: OUTPUT_LIMIT,
      });
      const ids = { sessionId, terminalId };
      let shown = 0;
      const pass = async (out: TerminalOutputResponse) => {
        // A truncated output lost its start: what is new is its end beyond what was passed on.
        if (out.output.length > shown) await onData(Buffer.from(out.output.slice(shown)));
        shown = out.output.length;
      };
      try {
        await session.attachTerminal(command, terminalId);
        const exited: Promise<WaitForTerminalExitResponse> = client.request("terminal/wait_for_exit", ids);
        exited.catch(() => {}); // read below unless the call stops first
        let ended: "aborted" | "timeout" | undefined;
        const stop = new Promise<"aborted" | "timeout">((resolve) => {
          signal?.addEventListener("abort", () => resolve("aborted"), { once: true });
          if (timeout !== undefined && timeout > 0)
            setTimeout(() => resolve("timeout"), timeout * 1000).unref();
        });
        let exit: { exitCode?: number | null } | undefined;
        while (!exit && !ended) {
          const next = await Promise.race([
            exited.then((e) => ({ exit: e })),
            stop.then((why) => ({ ended: why })),
            new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), POLL_MS)),
          ]);
          if (next && "exit" in next) exit = next.exit;
          else if (next && "ended" in next) ended = next.ended;
          await pass(await client.request("terminal/output", ids));
        }
        if (ended) {
          await client.request("terminal/kill", ids).catch(() => {});
          await pass(await client.request("terminal/output", ids)).catch(() => {});
          throw new Error(ended === "timeout" ? `timeout:${timeout}` : "aborted");
        }
        return { exitCode: exit?.exitCode ?? null };
      } finally {
        await client.request("terminal/release", ids).catch(() => {});
      }
    },
  };
}
