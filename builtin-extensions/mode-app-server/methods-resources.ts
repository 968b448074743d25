/**
 * `tool/settings/*` and `resource/*`: the same files and services as `/tools` (tools.json through the server's own
 * session's `ctx.toolSettings`) and `knightcode config` (the host face's packages: resolve and setEnabled), read
 * fresh on every call, so a change made by the CLI or another client shows at once.
 */
import { resolve } from "node:path";
import { errorMessage, KernelError, type PackageResource } from "@knightcodeai/cli/kit";
import { installMethods, type MethodRow, method, type ServerContext } from "./context.js";
import { invalidParams } from "./errors.js";
import type { AppServer } from "./server.js";

/** tools.json with the tools the server's own session declared (its extensions, replacements included). */
function toolSettings(ctx: ServerContext) {
  const host = ctx.hostContext();
  if (!host) throw new Error("The app-server's session is not open");
  return host.toolSettings;
}

/** What a thread in cwd (or a project-less one) would find; project resources only when trusted. */
async function resources(
  ctx: ServerContext,
  cwd: string | undefined,
): Promise<{ list: PackageResource[]; untrusted?: string }> {
  const found = await ctx.host.packages.resources(cwd !== undefined ? resolve(cwd) : undefined);
  for (const warning of found.warnings) ctx.log(`resource/list: ${warning}`);
  return { list: found.resources, ...(found.untrusted !== undefined ? { untrusted: found.untrusted } : {}) };
}

/** The `tool/settings/*` and `resource/*` methods, one row each. */
export const resourceMethods: MethodRow[] = [
  method("tool/settings/read", (ctx) => {
    const listing = toolSettings(ctx).list();
    const models = ctx.hostContext()?.modelRegistry;
    const classifiers = (models?.getAvailableClassifiers() ?? []).map((c) => ({
      provider: c.provider,
      id: c.model,
      name: models?.find(c.provider, c.model)?.name ?? c.model,
    }));
    return {
      tools: listing.tools.map((t) => ({ name: t.name, enabled: t.enabled, settings: t.settings })),
      classifiers,
      ...(listing.warning ? { warning: listing.warning } : {}),
    };
  }),

  method("tool/settings/write", (ctx, params) => {
    try {
      toolSettings(ctx).write(params.name, params.key, params.value);
    } catch (error) {
      if (!(error instanceof KernelError) || error.code !== "KC_ERR_TOOL_SETTINGS") throw error;
      // A malformed tools.json is left alone; the client shows why the write failed.
      throw invalidParams(error.message, { reason: error.data?.reason === "config" ? "config" : "setting" });
    }
    return {};
  }),

  method("resource/list", async (ctx, params) => {
    return { resources: (await resources(ctx, params.cwd)).list };
  }),

  method("resource/set", async (ctx, params) => {
    const { list, untrusted } = await resources(ctx, params.cwd);
    const wanted = resolve(params.path);
    const resource = list.find(
      (r) => r.type === params.type && (r.path === params.path || r.path === wanted),
    );
    if (!resource && untrusted !== undefined && wanted.startsWith(`${untrusted}/`))
      throw invalidParams(`${untrusted} is not a trusted project`, { reason: "untrusted" });
    if (!resource)
      throw invalidParams(
        `No ${params.type} resource at ${params.path}${params.cwd === undefined ? " (give cwd for a project's)" : ""}`,
        { reason: "path" },
      );
    try {
      ctx.host.packages.setEnabled(
        resource,
        params.enabled,
        params.cwd !== undefined ? resolve(params.cwd) : undefined,
      );
    } catch (error) {
      if ((error as { code?: unknown }).code === "KC_ERR_PACKAGE")
        throw invalidParams(errorMessage(error), { reason: "config" });
      throw error;
    }
    return { resource: { ...resource, enabled: params.enabled } };
  }),
];

export function registerResourceMethods(server: AppServer): void {
  installMethods(server, resourceMethods);
}
