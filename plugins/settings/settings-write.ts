/**
 * Changing one key of a settings file: what `/settings`, `ctx.settings.write()` and the app-server's `config/write`
 * share. The file is read again, the dotted key is set (or removed), the result is checked against the settings
 * schema and the file is replaced atomically with its mode kept. Optimistic concurrency: `expectedVersion` is the
 * SHA-256 of the file as the caller last read it (`"none"` for a file that did not exist); a file changed since is
 * not overwritten. A file that is not valid JSON is left alone.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { Value } from "@sinclair/typebox/value";
import { KernelError } from "../../kernel/index.js";
import { writeFileAtomic } from "../kit/files/atomic-write.js";
import { isPlainObject, type JsonObject, jsonProblem, parseJson } from "../kit/files/json-file.js";
import { sha256Hex } from "../kit/util/random.js";
import { globalSettingsPath, projectSettingsPath } from "./agent-dir.js";
import { SettingsFileSchema } from "./settings.js";

const FORBIDDEN_SEGMENTS = new Set(["__proto__", "constructor", "prototype"]);
const SEGMENT = /^[A-Za-z0-9_-]+$/;

/** SHA-256 hex of a settings file's text, as `Settings.versions` and `config/read` report it. */
export function settingsVersion(text: string): string {
  return sha256Hex(text);
}

export interface SettingsWrite {
  agentDir: string;
  scope: "global" | "project";
  /** Needed for a `project` change. */
  cwd?: string;
  /** Whether the folder is trusted; a project change in one that is not is refused. */
  projectTrusted?: boolean;
  key: string;
  /** `undefined` or `null` removes the key. */
  value: unknown;
  expectedVersion?: string;
}

function refuse(reason: string, message: string, data: Record<string, unknown> = {}): KernelError {
  return new KernelError("KC_ERR_SETTINGS_WRITE", message, { data: { reason, ...data } });
}

/** Sets one dotted key of the personal or project settings file; returns the file and its new version. */
export function writeSettingsKey(change: SettingsWrite): { path: string; version: string } {
  const segments = change.key.split(".");
  if (segments.some((s) => !SEGMENT.test(s)))
    throw refuse("key", `"${change.key}" is not a dotted settings key`);
  if (segments.some((s) => FORBIDDEN_SEGMENTS.has(s)))
    throw refuse("key", `"${change.key}" names a forbidden segment`);
  let path: string;
  if (change.scope === "project") {
    if (change.cwd === undefined) throw refuse("cwd", "A project settings change needs the project's folder");
    const cwd = resolve(change.cwd);
    if (change.projectTrusted !== true) throw refuse("untrusted", `${cwd} is not a trusted project`);
    path = projectSettingsPath(cwd);
  } else path = globalSettingsPath(change.agentDir);
  let text: string | undefined;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    text = undefined;
  }
  const version = text === undefined ? "none" : settingsVersion(text);
  if (change.expectedVersion !== undefined && change.expectedVersion !== version)
    throw refuse("version", `${path} changed since it was read; read it again`, {
      expected: change.expectedVersion,
      actual: version,
      path,
    });
  let content: JsonObject = {};
  if (text !== undefined && text.trim() !== "") {
    // The shared parser: a byte-order mark is fine, and nesting too deep is refused before anything recurses.
    const parsed = parseJson(text);
    if (!parsed.ok) {
      throw refuse(
        "parse",
        `${path}:${parsed.line}:${parsed.column}: ${jsonProblem(parsed)}; fix it by hand first`,
        { path },
      );
    }
    if (!isPlainObject(parsed.value)) {
      throw refuse("parse", `${path} is not valid JSON (not a JSON object); fix it by hand first`, { path });
    }
    content = parsed.value;
  }
  setPath(content, segments, change.value ?? null);
  if (!Value.Check(SettingsFileSchema, content)) {
    const first = Value.Errors(SettingsFileSchema, content).First();
    throw refuse(
      "value",
      `Invalid value for ${change.key}: ${first?.path ?? ""} ${first?.message ?? ""}`.trim(),
      {
        path,
      },
    );
  }
  const next = `${JSON.stringify(content, null, 2)}\n`;
  writeFileAtomic(path, next);
  return { path, version: settingsVersion(next) };
}

function setPath(target: JsonObject, path: readonly string[], value: unknown): void {
  let node = target;
  for (const segment of path.slice(0, -1)) {
    const next = node[segment];
    if (!isPlainObject(next)) node[segment] = {};
    node = node[segment] as JsonObject;
  }
  const last = path.at(-1)!;
  if (value === null) delete node[last];
  else node[last] = value;
}
