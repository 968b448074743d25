/**
 * Settings, project trust and commands: the same files and services the CLI uses (settings.json, trust.json),
 * read fresh on every call.
 *
 * `config/read` reads each scope once and answers settings, origins, versions and parse errors from that one read.
 * `config/write` sets one dotted key with optimistic concurrency: `expectedVersion` is the SHA-256 of the file as
 * the client last read it (`"none"` for an absent file), and a file changed since answers `versionConflict`.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import {
  DEFAULT_SETTINGS,
  type ExtensionAPI,
  findProtectedInputs,
  globalSettingsPath,
  loadSettings,
  projectSettingsPath,
  type SessionController,
  SettingsFileSchema,
  saveTrustDecision,
  writeFileAtomic,
} from "@knightcodeai/cli/kit";
import { Value } from "@sinclair/typebox/value";
import { AppServerError, invalidParams } from "./errors.js";
import { requestSpecs as R } from "./protocol.js";
import { type AppServer, warningOf } from "./server.js";
import { projectTrusted } from "./trust.js";

const FORBIDDEN_SEGMENTS = new Set(["__proto__", "constructor", "prototype"]);
const SEGMENT = /^[A-Za-z0-9_-]+$/;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function fileVersion(path: string): { text: string | undefined; version: string } {
  try {
    const text = readFileSync(path, "utf8");
    return { text, version: createHash("sha256").update(text).digest("hex") };
  } catch {
    return { text: undefined, version: "none" };
  }
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

export function registerConfigMethods(server: AppServer, host: { session: SessionController }): void {
  const m = server.methods;
  const agentDir = server.options.agentDir;

  m.register("config/read", R["config/read"], (params) => {
    const cwd = params.cwd !== undefined ? resolve(params.cwd) : undefined;
    const trusted = cwd !== undefined && projectTrusted(agentDir, cwd) === true;
    const settings = loadSettings({ agentDir, cwd: cwd ?? agentDir, projectTrusted: trusted });
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
      defaults: DEFAULT_SETTINGS as unknown as Json,
      origins,
      versions: {
        global: settings.versions.global ?? "none",
        ...(cwd !== undefined ? { project: trusted ? (settings.versions.project ?? "none") : "none" } : {}),
      },
      paths: {
        global: settings.paths.global,
        ...(cwd !== undefined ? { project: settings.paths.project } : {}),
      },
      errors: settings.warnings.map((w) => ({ ...warningOf(w), source: "settings" })) as never,
    };
  });

  m.register("config/write", R["config/write"], (params) => {
    const segments = params.key.split(".");
    if (segments.some((s) => !SEGMENT.test(s)))
      throw invalidParams(`"${params.key}" is not a dotted settings key`, { reason: "key" });
    if (segments.some((s) => FORBIDDEN_SEGMENTS.has(s)))
      throw invalidParams(`"${params.key}" names a forbidden segment`, { reason: "key" });
    let path: string;
    if (params.scope === "project") {
      if (params.cwd === undefined) throw invalidParams("A project write needs cwd", { reason: "cwd" });
      const cwd = resolve(params.cwd);
      if (projectTrusted(agentDir, cwd) !== true)
        throw invalidParams(`${cwd} is not a trusted project`, { reason: "untrusted" });
      path = projectSettingsPath(cwd);
    } else path = globalSettingsPath(agentDir);
    const current = fileVersion(path);
    if (params.expectedVersion !== undefined && params.expectedVersion !== current.version)
      throw new AppServerError("versionConflict", `${path} changed since it was read; read it again`, {
        expected: params.expectedVersion,
        actual: current.version,
        path,
      });
    let content: Json = {};
    if (current.text !== undefined && current.text.trim() !== "") {
      try {
        const parsed = JSON.parse(current.text) as unknown;
        if (!isObject(parsed)) throw new Error("not a JSON object");
        content = parsed;
      } catch (error) {
        throw invalidParams(`${path} is not valid JSON (${(error as Error).message}); fix it by hand first`, {
          reason: "parse",
          path,
        });
      }
    }
    setPath(content, segments, params.value === undefined ? null : params.value);
    if (!Value.Check(SettingsFileSchema, content)) {
      const first = Value.Errors(SettingsFileSchema, content).First();
      throw invalidParams(
        `Invalid value for ${params.key}: ${first?.path ?? ""} ${first?.message ?? ""}`.trim(),
        {
          reason: "value",
        },
      );
    }
    const text = `${JSON.stringify(content, null, 2)}\n`;
    writeFileAtomic(path, text);
    return { version: createHash("sha256").update(text).digest("hex"), path };
  });

  m.register("project/trust/read", R["project/trust/read"], async (params) => {
    const cwd = resolve(params.cwd);
    const protectedInputs = await findProtectedInputs(cwd);
    return { trusted: projectTrusted(agentDir, cwd), needsTrust: protectedInputs.length > 0 };
  });

  m.register("project/trust/write", R["project/trust/write"], (params) => {
    saveTrustDecision({ agentDir, path: resolve(params.cwd), trusted: params.trusted });
    return {};
  });

  m.register("tool/list", R["tool/list"], async (params) => {
    // An in-memory session (in cwd, or in the agent dir for a project-less one) with one more extension that
    // reads what the others registered.
    let api: ExtensionAPI | undefined;
    const session = await server.options.openSession({
      cwd: params.cwd !== undefined ? resolve(params.cwd) : agentDir,
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
      const global = loadSettings({ agentDir, cwd: agentDir, projectTrusted: false });
      return { tools, defaultTools: resolveDefaultTools(global.get("defaultTools") as string[]) };
    } finally {
      await session.dispose();
    }
  });

  m.register("command/list", R["command/list"], async (params) => {
    // Without cwd, the server's own session answers; with one, an in-memory session there (nothing is written).
    if (params.cwd === undefined) return { commands: describeCommands(host.session) };
    const session = await server.options.openSession({
      cwd: resolve(params.cwd),
      inMemory: true,
      warn: () => {},
    });
    try {
      return { commands: describeCommands(session) };
    } finally {
      await session.dispose();
    }
  });
}

/** The built-in default set of active tools, before the `defaultTools` setting's `+name`/`-name`. */
const BUILTIN_DEFAULT_TOOLS = ["read", "bash", "edit", "write"];

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
