/**
 * The app-server test harness: a temp agent dir whose models.json points a `local` provider at a scripted
 * OpenAI-compatible server on 127.0.0.1, personal extensions written into the agent dir, and `knightcode
 * app-server` spawned from the build and driven with the typed AppServerClient over its stdio.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type SpawnedAppServer, spawnAppServer } from "../../../hosts/sdk/app-server-client.js";
import { cliBin } from "../../helpers/cli.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { startTestServer, type TestServer } from "../../helpers/sse-server.js";
import { protocolCheck } from "./protocol-check.js";

export const MODEL = "local/m";

export interface Harness {
  agentDir: string;
  project: string;
  model: TestServer;
  servers: SpawnedAppServer[];
  start(env?: Record<string, string>, args?: string[]): Promise<SpawnedAppServer>;
  close(): Promise<void>;
}

/** Sets up the agent dir (with `extensions`: file name → source) and the model server. */
export async function harness(
  root: string,
  extensions: Record<string, string> = {},
  settings: Record<string, unknown> = {},
): Promise<Harness> {
  const agentDir = join(root, "agent");
  const project = join(root, "project");
  mkdirSync(project, { recursive: true });
  const model = await startTestServer();
  writeLocalModels(agentDir, {
    baseUrl: `${model.url}/v1`,
    apiKey: "LOCAL_KEY",
    models: [{ id: "m", contextWindow: 32000, maxTokens: 1024 }],
  });
  writeFileSync(
    join(agentDir, "settings.json"),
    JSON.stringify({ retry: { enabled: false }, defaultProvider: "local", defaultModel: "m", ...settings }),
  );
  if (Object.keys(extensions).length > 0) {
    mkdirSync(join(agentDir, "extensions"), { recursive: true });
    for (const [name, source] of Object.entries(extensions))
      writeFileSync(join(agentDir, "extensions", name), source);
  }
  const servers: SpawnedAppServer[] = [];
  return {
    agentDir,
    project,
    model,
    servers,
    async start(env = {}, args = ["app-server"]) {
      const server = spawnAppServer({
        command: process.execPath,
        args: [cliBin, ...args],
        cwd: root,
        env: { ...process.env, KNIGHTCODE_AGENT_DIR: agentDir, LOCAL_KEY: "sk-local", NO_COLOR: "1", ...env },
        timeoutMs: 20_000,
        // Every result, notification and server request of every test is checked against the protocol.
        check: protocolCheck,
      });
      servers.push(server);
      return server;
    },
    async close() {
      await Promise.all(servers.map((s) => s.stop(5_000)));
      await model.close();
      const problems = servers.flatMap((s) => s.client.problems);
      if (problems.length > 0)
        throw new Error(`messages that do not match the protocol:\n${problems.slice(0, 20).join("\n")}`);
    },
  };
}

/** Every notification `method` a client received so far, as params. */
export function notifications(server: SpawnedAppServer, method?: string): Record<string, any>[] {
  return server.client.received
    .filter(
      (m) =>
        typeof m.method === "string" && m.id === undefined && (method === undefined || m.method === method),
    )
    .map((m) => ({ method: m.method, ...(m.params as object) }));
}
