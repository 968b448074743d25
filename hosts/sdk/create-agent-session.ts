/**
 * The SDK: `createAgentSession()` runs a KnightCode session in process. It is the composition root every host uses:
 * the kernel with the standard plugins (session-plugins.ts), and a handle (session-handle.ts) that opens sessions
 * (session-open.ts: settings, packages, project trust, the extension sources, model and tool selection), replaces
 * them (session-replace.ts) and drives them for the host.
 */
import { createKernel, type Kernel } from "../../kernel/index.js";
import { closestName } from "../../plugins/kit/closest-name.js";
import { checkReturn } from "../../plugins/kit/event-returns.js";
import { VERSION } from "../../plugins/kit/version.js";
import { extensionCacheDir, resolveAgentDir } from "../../plugins/settings/agent-dir.js";
import { packageModules } from "./package-modules.js";
import { AgentSessionHandle } from "./session-handle.js";
import type { CreateAgentSessionOptions } from "./session-options.js";
import { standardPlugins } from "./session-plugins.js";

export { AgentSessionHandle } from "./session-handle.js";
export type { CreateAgentSessionOptions, SessionChoice, SessionEvent } from "./session-options.js";

let defaultKernel: Promise<Kernel> | undefined;

function standardKernel(cacheDir: string | false): Kernel {
  return createKernel({
    plugins: standardPlugins(),
    cacheDir,
    virtualModules: packageModules,
    bus: { checkReturn, suggestName: closestName },
    apiVersion: VERSION,
    // Extension files of the pi-compatibility set: what they import from pi's names, and pi's event names.
    inspect: async (file, modules) =>
      PI_MARKER in modules
        ? (await import("./pi-compat/scan.js")).inspectPiExtension(file, modules)
        : undefined,
  });
}

/** A name only the pi-compatibility module set has. */
const PI_MARKER = "@mariozechner/pi-ai";

/** The process's kernel, shared by the sessions that do not bring their own. */
async function processKernel(agentDir: string): Promise<Kernel> {
  defaultKernel ??= Promise.resolve(standardKernel(extensionCacheDir(agentDir)));
  return defaultKernel;
}

/** A kernel with the standard plugins, for hosts and tests that want their own (e.g. to dispose it). */
export async function createStandardKernel(
  options: { agentDir?: string; cacheDir?: string | false } = {},
): Promise<Kernel> {
  return standardKernel(options.cacheDir ?? extensionCacheDir(options.agentDir ?? resolveAgentDir()));
}

export async function createAgentSession(
  options: CreateAgentSessionOptions = {},
): Promise<AgentSessionHandle> {
  const kernel = options.kernel ?? (await processKernel(options.agentDir ?? resolveAgentDir()));
  const handle = new AgentSessionHandle(options, kernel);
  try {
    await handle.start();
  } catch (error) {
    // Removes the process-level fault handlers the handle installed.
    await handle.dispose();
    throw error;
  }
  return handle;
}
