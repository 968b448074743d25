/**
 * What an editor extension needs beside threads and turns: the models (`model/list`, `thread/settings/update`),
 * file search for `@` mentions (`fuzzyFileSearch`) and the MCP servers' status (`mcpServerStatus/list`), each as
 * Codex's app-server names it.
 */
import { resolve } from "node:path";
import { mcpClientService } from "@knightcodeai/cli/kit";
import { installMethods, type MethodRow, method, type ServerContext } from "./context.js";
import { invalidParams } from "./errors.js";
import { FileLists } from "./file-search.js";
import { listModels, modelRef } from "./models.js";
import type { AppServer } from "./server.js";

/** The model a new thread gets: the server's own session's, from the settings. */
function fallbackModel(ctx: ServerContext) {
  return ctx.hostContext()?.model;
}

const fileLists = new FileLists();
/** The latest search of each cancellation token: an older one still listing files answers with none. */
const latestSearch = new Map<string, object>();

/** The editor methods, one row each. */
export const editorMethods: MethodRow[] = [
  method("model/list", async (ctx, params) => {
    const thread = params.threadId !== undefined ? ctx.threads.requireLoaded(params.threadId) : undefined;
    const runtime = thread ? thread.modelRuntime() : ctx.hostContext()?.modelRegistry;
    const inUse = thread ? thread.session.getState().model : fallbackModel(ctx);
    if (!runtime) return { data: [] };
    const models = await listModels(runtime, inUse, fallbackModel(ctx));
    return {
      data: params.includeUnusable ? models : models.filter((m) => m.usable),
      ...(inUse ? { current: modelRef(inUse) } : {}),
    };
  }),

  method("thread/settings/update", async (ctx, params) => {
    const thread = ctx.threads.requireLoaded(params.threadId);
    return thread.updateSettings(
      {
        ...(params.model !== undefined ? { model: params.model } : {}),
        ...(params.effort !== undefined ? { effort: params.effort } : {}),
      },
      fallbackModel(ctx),
    );
  }),

  method("fuzzyFileSearch", async (ctx, params) => {
    if (params.threadId === undefined && (params.roots === undefined || params.roots.length === 0))
      throw invalidParams("fuzzyFileSearch needs threadId or roots", { reason: "roots" });
    const roots = params.roots?.map((r) => resolve(r)) ?? [];
    if (params.threadId !== undefined) roots.unshift(ctx.threads.threadInfo(params.threadId).cwd);
    const token = params.cancellationToken;
    const mine = {};
    if (token !== undefined) latestSearch.set(token, mine);
    try {
      const found = await fileLists.search([...new Set(roots)], params.query, params.limit ?? 50);
      if (token !== undefined && latestSearch.get(token) !== mine) return { files: [] };
      return found;
    } finally {
      if (token !== undefined && latestSearch.get(token) === mine) latestSearch.delete(token);
    }
  }),

  method("mcpServerStatus/list", (ctx, params) => {
    const client =
      params.threadId !== undefined
        ? ctx.threads.requireLoaded(params.threadId).extensionApi()?.services.get(mcpClientService)
        : ctx.mcpClient();
    const data = (client?.servers() ?? []).map((s) => ({
      name: s.name,
      state: s.state,
      ...(s.transport !== undefined ? { transport: s.transport } : {}),
      tools: s.tools,
      source: s.source,
      ...(s.error !== undefined ? { error: s.error } : {}),
    }));
    return { data };
  }),
];

export function registerEditorMethods(server: AppServer): void {
  installMethods(server, editorMethods);
}
