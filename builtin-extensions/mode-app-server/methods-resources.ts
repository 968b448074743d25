/**
 * `tool/settings/*` and `resource/*`: the same files and services as `/tools` (tools.json through the kit's
 * tools-config functions) and `knightcode config` (the package manager's resolve and setEnabled), read fresh on
 * every call, so a change made by the CLI or another client shows at once.
 */
import { resolve } from "node:path";
import {
  type ExtensionContext,
  KernelError,
  PackageError,
  PackageManager,
  type ResolvedResource,
} from "@knightcodeai/cli/kit";
import { invalidParams } from "./errors.js";
import { requestSpecs as R } from "./protocol.js";
import type { AppServer } from "./server.js";
import { projectTrusted } from "./trust.js";

export interface ResourceMethodsHost {
  /** The server's own session context, for the classifier models with credentials. */
  context(): ExtensionContext | undefined;
}

export function registerResourceMethods(server: AppServer, host: ResourceMethodsHost): void {
  const m = server.methods;
  const agentDir = server.options.agentDir;

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
  ): Promise<{ manager: PackageManager; list: ResolvedResource[]; untrusted?: string }> => {
    const dir = cwd !== undefined ? resolve(cwd) : undefined;
    const manager = new PackageManager({ agentDir, cwd: dir ?? agentDir });
    const trusted = dir !== undefined && projectTrusted(agentDir, dir) === true;
    const resolved = await manager.resolve({
      scopes: dir !== undefined ? ["user", "project"] : ["user"],
      projectTrusted: trusted,
    });
    for (const warning of resolved.warnings) server.options.log(`resource/list: ${warning}`);
    return {
      manager,
      list: resolved.resources,
      ...(dir !== undefined && !trusted ? { untrusted: dir } : {}),
    };
  };

  m.register("resource/list", R["resource/list"], async (params) => {
    return { resources: (await resources(params.cwd)).list };
  });

  m.register("resource/set", R["resource/set"], async (params) => {
    const { manager, list, untrusted } = await resources(params.cwd);
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
      manager.setEnabled(resource, params.enabled);
    } catch (error) {
      if (error instanceof PackageError) throw invalidParams(error.message, { reason: "config" });
      throw error;
    }
    return { resource: { ...resource, enabled: params.enabled } };
  });
}
