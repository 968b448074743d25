/**
 * Settings, project trust and commands, through the host face (`ModeContext.host`): the same settings and trust
 * services the CLI's sessions use (settings.json, trust.json), read fresh on every call.
 *
 * `config/read` reads each scope once and answers settings, origins, versions and parse errors from that one read.
 * `config/write` sets one dotted key with optimistic concurrency (`host.settings.write`): `expectedVersion` is the
 * SHA-256 of the file as the client last read it (`"none"` for an absent file), and a file changed since answers
 * `versionConflict`; the service's other refusals (`data.reason`) are `invalidParams` with the same reason.
 */
import { resolve } from "node:path";
import { type ExtensionAPI, KernelError, type SessionController } from "@knightcodeai/cli/kit";
import { installMethods, type MethodRow, method } from "./context.js";
import { AppServerError, invalidParams } from "./errors.js";
import { type AppServer, warningOf } from "./server.js";

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The leaves of an object as dotted keys (arrays are leaves). */
function leaves(value: Json, prefix = ""): string[] {
  return Object.entries(value).flatMap(([key, v]) =>
    isObject(v) && Object.keys(v).length > 0 ? leaves(v, `${prefix}${key}.`) : [`${prefix}${key}`],
  );
}

function setPath(target: Json, path: readonly string[], value: unknown): void {
  let node = target;
  for (const segment of path.slice(0, -1)) {
    const next = node[segment];
    if (!isObject(next)) node[segment] = {};
    node = node[segment] as Json;
  }
  const last = path.at(-1)!;
  if (value === null) delete node[last];
  else node[last] = value;
}

/** The settings, trust, tool and command methods, one row each. */
export const configMethods: MethodRow[] = [
  method("config/read", (ctx, params) => {
    const cwd = params.cwd !== undefined ? resolve(params.cwd) : undefined;
    // The host's settings read the project's file only when the folder is trusted.
    const settings = ctx.host.settings.read(cwd);
    const merged: Json = {};
    const origins: Record<string, "global" | "project"> = {};
    for (const key of leaves(settings.all() as Json)) {
      const origin = settings.origin(key);
      if (origin !== "global" && origin !== "project") continue;
      origins[key] = origin;
      setPath(merged, key.split("."), settings.get(key));
    }
    return {
      settings: merged,
      defaults: { ...ctx.host.settings.defaults() },
      origins,
      versions: {
        global: settings.versions.global ?? "none",
        ...(cwd !== undefined
          ? { project: settings.projectTrusted ? (settings.versions.project ?? "none") : "none" }
          : {}),
      },
      paths: {
        global: settings.paths.global,
        ...(cwd !== undefined ? { project: settings.paths.project } : {}),
      },
      errors: settings.warnings.map((w) => ({ ...warningOf(w), source: "settings" as const })),
    };
  }),

  method("config/write", (ctx, params) => {
    try {
      return ctx.host.settings.write({
        scope: params.scope,
        ...(params.cwd !== undefined ? { cwd: resolve(params.cwd) } : {}),
        key: params.key,
        value: params.value ?? null,
        ...(params.expectedVersion !== undefined ? { expectedVersion: params.expectedVersion } : {}),
      });
    } catch (error) {
      if (!(error instanceof KernelError) || error.code !== "KC_ERR_SETTINGS_WRITE") throw error;
      const { reason, ...data } = error.data ?? {};
      // A stale expectedVersion is the protocol's versionConflict (with `actual`); the rest are the client's params.
      if (reason === "version") throw new AppServerError("versionConflict", error.message, data);
      throw invalidParams(error.message, { ...data, reason: typeof reason === "string" ? reason : "value" });
    }
  }),

  method("project/trust/read", async (ctx, params) => {
    const cwd = resolve(params.cwd);
    const protectedInputs = await ctx.host.trust.protectedInputs(cwd);
    return { trusted: ctx.host.trust.trusted(cwd), needsTrust: protectedInputs.length > 0 };
  }),

  method("project/trust/write", (ctx, params) => {
    ctx.host.trust.save(resolve(params.cwd), params.trusted);
    return {};
  }),

  method("tool/list", async (ctx, params) => {
    // An in-memory session (in cwd, or in the agent dir for a project-less one) with one more extension that
    // reads what the others registered.
    let api: ExtensionAPI | undefined;
    const session = await ctx.openSession({
      cwd: params.cwd !== undefined ? resolve(params.cwd) : ctx.host.agentDir,
      inMemory: true,
      warn: () => {},
      extensions: [
        (knightcode) => {
          api = knightcode;
        },
      ],
    });
    try {
      const tools = (api?.getAllTools() ?? [])
        .filter((t) => t.exposure !== "hidden")
        .map((t) => ({ name: t.name, description: t.description, source: t.owner }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const defaults = ctx.host.settings.read().get("defaultTools");
      return { tools, defaultTools: resolveDefaultTools(stringsOf(defaults)) };
    } finally {
      await session.dispose();
    }
  }),

  method("command/list", async (ctx, params) => {
    // Without cwd, the server's own session answers; with one, an in-memory session there (nothing is written).
    if (params.cwd === undefined) return { commands: ctx.session ? describeCommands(ctx.session) : [] };
    const session = await ctx.openSession({
      cwd: resolve(params.cwd),
      inMemory: true,
      warn: () => {},
    });
    try {
      return { commands: describeCommands(session) };
    } finally {
      await session.dispose();
    }
  }),
];

export function registerConfigMethods(server: AppServer): void {
  installMethods(server, configMethods);
}

/** The built-in default set of active tools, before the `defaultTools` setting's `+name`/`-name`. */
const BUILTIN_DEFAULT_TOOLS = ["read", "bash", "edit", "write"];

function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/** `defaultTools` resolved as sessions apply it: plain names set the list, `+name` adds, `-name` removes. */
export function resolveDefaultTools(spec: readonly string[]): string[] {
  const plain = spec.filter((s) => !s.startsWith("+") && !s.startsWith("-"));
  const active = new Set(plain.length > 0 ? plain : BUILTIN_DEFAULT_TOOLS);
  for (const item of spec) {
    if (item.startsWith("+")) active.add(item.slice(1));
    else if (item.startsWith("-")) active.delete(item.slice(1));
  }
  return [...active];
}

function describeCommands(
  session: SessionController,
): { name: string; description?: string; source: string }[] {
  return session
    .getCommands()
    .map((c) => ({
      name: c.name,
      ...(c.description ? { description: c.description } : {}),
      source: c.source,
    }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
