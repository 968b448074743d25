/**
 * `tool/settings/*` and `resource/*`: the same files and services as `/tools` (tools.json through the server's own
 * session's `ctx.toolSettings`) and `knightcode config` (the host face's packages: resolve and setEnabled), read
 * fresh on every call, so a change made by the CLI or another client shows at once.
 */
import { resolve } from "node:path";
import {
  type ExtensionContext,
  errorMessage,
  KernelError,
  type PackageResource,
} from "@knightcodeai/cli/kit";
import { invalidParams } from "./errors.js";
import { requestSpecs as R } from "./protocol.js";
import type { AppServer } from "./server.js";

export interface ResourceMethodsHost {
  /** The server's own session context, for the classifier models with credentials. */
  context(): ExtensionContext | undefined;
}

export function registerResourceMethods(server: AppServer, host: ResourceMethodsHost): void {
  const m = server.methods;

  /** tools.json with the tools the server's own session declared (its extensions, replacements included). */
  const toolSettings = () => {
    const ctx = host.context();
    if (!ctx) throw new Error("The app-server's session is not open");
    return ctx.toolSettings;
  };

  m.register("tool/settings/read", R["tool/settings/read"], () => {
    const listing = toolSettings().list();
    const models = host.context()?.modelRegistry;
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
  });

  m.register("tool/settings/write", R["tool/settings/write"], (params) => {
    try {
      toolSettings().write(params.name, params.key, params.value);
    } catch (error) {
      if (!(error instanceof KernelError) || error.code !== "KC_ERR_TOOL_SETTINGS") throw error;
      // A malformed tools.json is left alone; the client shows why the write failed.
      throw invalidParams(error.message, { reason: error.data?.reason === "config" ? "config" : "setting" });
    }
    return {};
  });

  /** What a thread in cwd (or a project-less one) would find; project resources only when trusted. */
  const resources = async (
    cwd: string | undefined,
  ): Promise<{ list: PackageResource[]; untrusted?: string }> => {
    const found = await server.host.packages.resources(cwd !== undefined ? resolve(cwd) : undefined);
    for (const warning of found.warnings) server.options.log(`resource/list: ${warning}`);
    return {
      list: found.resources,
      ...(found.untrusted !== undefined ? { untrusted: found.untrusted } : {}),
    };
  };

  m.register("resource/list", R["resource/list"], async (params) => {
    return { resources: (await resources(params.cwd)).list };
  });

  m.register("resource/set", R["resource/set"], async (params) => {
    const { list, untrusted } = await resources(params.cwd);
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
      server.host.packages.setEnabled(
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
  });
}
