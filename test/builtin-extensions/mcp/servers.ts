/** Real MCP servers for the tests: paths of the pinned reference servers and an HTTP launcher bound to loopback. */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../..", import.meta.url));
export const everythingServer = `${root}node_modules/@modelcontextprotocol/server-everything/dist/index.js`;
export const filesystemServer = `${root}node_modules/@modelcontextprotocol/server-filesystem/dist/index.js`;
export const faultServer = fileURLToPath(new URL("fixtures/fault-server.mjs", import.meta.url));
const bindLoopback = fileURLToPath(new URL("fixtures/bind-loopback.mjs", import.meta.url));

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface HttpServer {
  url: string;
  close(): Promise<void>;
}

/** server-everything in `streamableHttp` or `sse` mode on 127.0.0.1, ready when it says it is listening. */
export async function startEverythingHttp(mode: "streamableHttp" | "sse"): Promise<HttpServer> {
  const port = await freePort();
  const child = spawn(process.execPath, ["--import", bindLoopback, everythingServer, mode], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  await startedWith(child, /listening on port|running on port/i, `server-everything ${mode}`);
  const path = mode === "sse" ? "/sse" : "/mcp";
  return { url: `http://127.0.0.1:${port}${path}`, close: () => stop(child) };
}

/** Resolves once the child's output (stdout and stderr together) matches `ready`; bounded at 15 s. */
function startedWith(child: ChildProcess, ready: RegExp, what: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let output = "";
    const timer = setTimeout(() => reject(new Error(`${what} did not start: ${output}`)), 15_000);
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (ready.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited (${code}): ${output}`));
    });
  });
}

export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const timer = setTimeout(() => child.kill("SIGKILL"), 3_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

export const sdkExampleServer = `${root}node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js`;

/**
 * The SDK's example streamable-HTTP server with `--oauth`: an MCP server and an authorization server (dynamic
 * registration, PKCE, a demo approval that redirects straight back with a code), both on 127.0.0.1.
 */
export async function startOAuthServer(): Promise<HttpServer> {
  const port = await freePort();
  const authPort = await freePort();
  const child = spawn(process.execPath, ["--import", bindLoopback, sdkExampleServer, "--oauth"], {
    env: { ...process.env, MCP_PORT: String(port), MCP_AUTH_PORT: String(authPort) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  await startedWith(
    child,
    /(?=[\s\S]*MCP Streamable HTTP Server listening)(?=[\s\S]*Authorization Server listening)/,
    "the OAuth example server",
  );
  return { url: `http://localhost:${port}/mcp`, close: () => stop(child) };
}
