/**
 * What this repository's tests and benchmarks reach below the host seam: the runtime, the agent loop and the raw
 * registries of a handle's current session. Kept in a module the package does not export, and off the handle's
 * type, so the published declarations have no way in: hosts use the handle's methods.
 */
import type { SessionRuntime } from "../../kernel/index.js";
import type { AgentSession } from "../../plugins/agent-loop/agent-session.js";
import type { ModelService } from "../../plugins/model-registry/model-service.js";
import type { SessionManager } from "../../plugins/session-store/session-manager.js";
import type { Settings } from "../../plugins/settings/settings.js";
import type { ToolRegistry } from "../../plugins/tool-registry/tool-registry.js";

/** @internal */
export interface SessionInternals {
  runtime: SessionRuntime;
  log: SessionManager;
  agent: AgentSession;
  models: ModelService;
  tools: ToolRegistry;
  settings: Settings;
}

const internals = new WeakMap<object, () => SessionInternals>();

/** @internal Called by the handle's constructor. */
export function registerInternals(handle: object, read: () => SessionInternals): void {
  internals.set(handle, read);
}

/** @internal The current session's internals of a handle made by `createAgentSession()`. */
export function sessionInternals(handle: object): SessionInternals {
  const read = internals.get(handle);
  if (!read) throw new TypeError("sessionInternals() takes a handle made by createAgentSession()");
  return read();
}
