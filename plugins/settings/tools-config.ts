/**
 * `<agentDir>/tools.json`: the state and settings of the tools extensions declare with `registerToolSettings`
 * (`{"<name>": {"enabled": true, "<key>": "<value>"}}`). The host face (`ctx.toolSettings`, `ModeContext.host.tools`)
 * goes through this module, so `/tools`, the classifier gate and the app-server agree on defaults, validation and
 * masking.
 *
 * A malformed file is never overwritten and never silently ignored: reading it returns a warning that names it,
 * and the classifier gate then confirms every call. Values of keys ending in `Key` are secrets (API keys): every
 * listing masks them to their last four characters, so they never reach a command's output, a client or a log.
 */
import { statSync } from "node:fs";
import { join, resolve } from "node:path";
import { KernelError } from "../../kernel/index.js";
import { writeFileAtomic } from "../kit/files/atomic-write.js";
import { isPlainObject, type JsonObject, readJsonObjectFile } from "../kit/files/json-file.js";

/** A declared tool as these functions need it: its name, default state and known settings. */
export interface ManagedTool {
  name: string;
  description: string;
  enabledByDefault: boolean;
  /** Known keys and their meaning; other keys are kept and shown, but the tool ignores them. */
  settings: Readonly<Record<string, string>>;
}

/** A value as tools.json may hold it: `enabled` is a boolean; rules may be written as a list of strings. */
export type ToolSettingValue = string | number | boolean | string[];

/** One tool's configuration as the file holds it. */
export type ToolConfig = Record<string, ToolSettingValue>;

export interface ToolsConfigRead {
  path: string;
  /** Entries of the file by tool name (unknown tools included); empty when the file is missing or malformed. */
  tools: Record<string, ToolConfig>;
  /** The file exists but cannot be used; the message names it. */
  warning?: string;
}

/** What `/tools` and `tool/settings/read` show: each managed tool's state and its settings, masked. */
export interface ToolSettingsListing {
  path: string;
  tools: { name: string; enabled: boolean; settings: Record<string, string> }[];
  warning?: string;
}

function refuse(reason: "unknown" | "key" | "value" | "config", message: string): KernelError {
  return new KernelError("KC_ERR_TOOL_SETTINGS", message, { data: { reason } });
}

const KEY = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

export function toolsConfigPath(agentDir: string): string {
  return join(resolve(agentDir), "tools.json");
}

/** `sk-abcdef1234` → `****1234`: only the last four characters of a secret are ever shown. */
export function maskSecret(value: string): string {
  return `****${value.length > 4 ? value.slice(-4) : ""}`;
}

/** A setting as text, masked when its key ends in `Key`. */
export function displaySetting(key: string, value: ToolSettingValue): string {
  const text = Array.isArray(value) ? value.join(", ") : String(value);
  return key.endsWith("Key") ? maskSecret(text) : text;
}

/**
 * Reads tools.json. Entries that are not objects, and values that are neither strings, numbers, booleans nor
 * lists of strings, make the whole file malformed: a half-read permission file is worse than none.
 */
export function readToolsConfig(agentDir: string): ToolsConfigRead {
  const path = toolsConfigPath(agentDir);
  const read = readJsonObjectFile(path);
  if (read.status === "missing") return { path, tools: {} };
  if (read.status === "invalid") return { path, tools: {}, warning: read.message };
  const problem = checkConfig(read.value);
  if (problem) return { path, tools: {}, warning: `${path}: ${problem}` };
  return { path, tools: read.value as Record<string, ToolConfig> };
}

function checkConfig(value: JsonObject): string | undefined {
  for (const [name, entry] of Object.entries(value)) {
    if (!isPlainObject(entry)) return `"${name}" must be an object of settings`;
    for (const [key, setting] of Object.entries(entry)) {
      if (key === "enabled" && typeof setting !== "boolean") return `"${name}.enabled" must be true or false`;
      const ok =
        typeof setting === "string" ||
        typeof setting === "boolean" ||
        (typeof setting === "number" && Number.isFinite(setting)) ||
        (Array.isArray(setting) && setting.every((s) => typeof s === "string"));
      if (!ok) return `"${name}.${key}" must be a string, a number, a boolean or a list of strings`;
    }
  }
  return undefined;
}

/** Whether a tool is on: the file's `enabled`, else its default. */
export function isToolEnabled(config: ToolsConfigRead, name: string, enabledByDefault: boolean): boolean {
  const enabled = config.tools[name]?.enabled;
  return typeof enabled === "boolean" ? enabled : enabledByDefault;
}

/** Every declared tool with its state and masked settings (`enabled` is not repeated among the settings). */
export function listToolSettings(agentDir: string, declared: readonly ManagedTool[]): ToolSettingsListing {
  const config = readToolsConfig(agentDir);
  return {
    path: config.path,
    tools: declared.map((tool) => ({
      name: tool.name,
      enabled: isToolEnabled(config, tool.name, tool.enabledByDefault),
      settings: Object.fromEntries(
        Object.entries(config.tools[tool.name] ?? {})
          .filter(([key]) => key !== "enabled")
          .map(([key, value]) => [key, displaySetting(key, value)]),
      ),
    })),
    ...(config.warning ? { warning: config.warning } : {}),
  };
}

/**
 * Checks a change of a declared tool's setting (`KC_ERR_TOOL_SETTINGS` naming the reason): the tool must be
 * declared, the key well formed, `enabled` a boolean and other keys a string (`null` removes the key).
 */
export function checkToolSetting(
  declared: readonly Pick<ManagedTool, "name">[],
  name: string,
  key: string,
  value: unknown,
): void {
  if (!declared.some((t) => t.name === name)) {
    throw refuse(
      "unknown",
      `Unknown tool "${name}"; tools.json manages: ${declared.map((t) => t.name).join(", ") || "nothing in this session"}`,
    );
  }
  if (!KEY.test(key)) {
    throw refuse(
      "key",
      `Malformed setting key ${JSON.stringify(key)}: use a letter, then letters, digits, "_", "." or "-"`,
    );
  }
  if (key === "enabled" && value !== null && typeof value !== "boolean") {
    throw refuse("value", `"enabled" takes true or false`);
  }
  if (key !== "enabled" && value !== null && typeof value !== "string") {
    throw refuse("value", `"${key}" takes a string`);
  }
}

/**
 * Sets one setting and writes the file atomically; `null` deletes the key. The file is read again first, so a
 * change made meanwhile to another key is kept; a malformed file is left alone and the change fails with its error
 * (`KC_ERR_TOOL_SETTINGS`, reason `config`). Which tools may be set is the caller's check (`checkToolSetting`).
 */
export function writeToolSetting(
  agentDir: string,
  name: string,
  key: string,
  value: ToolSettingValue | null,
): void {
  const path = toolsConfigPath(agentDir);
  const read = readJsonObjectFile(path);
  if (read.status === "invalid") throw refuse("config", read.message);
  const data: JsonObject = read.status === "ok" ? read.value : {};
  const problem = checkConfig(data);
  if (problem) throw refuse("config", `${path}: ${problem}`);
  const entry = { ...((data[name] as JsonObject | undefined) ?? {}) };
  if (value === null) delete entry[key];
  else entry[key] = value;
  if (Object.keys(entry).length === 0) delete data[name];
  else data[name] = entry;
  writeFileAtomic(path, `${JSON.stringify(data, null, 2)}\n`);
}

/**
 * The standard `tools.json` store: `read` parses the file again only when its size or modification time changed,
 * so a feature may read its settings on every tool call (the permission gate does).
 */
export class ToolsConfigFile {
  private cache = new Map<string, { stamp: string; read: ToolsConfigRead }>();

  read(agentDir: string): ToolsConfigRead {
    const path = toolsConfigPath(agentDir);
    const stamp = fileStamp(path);
    const known = this.cache.get(path);
    if (known && known.stamp === stamp) return known.read;
    const read = readToolsConfig(agentDir);
    this.cache.set(path, { stamp, read });
    return read;
  }

  write(agentDir: string, name: string, key: string, value: ToolSettingValue | null): void {
    writeToolSetting(agentDir, name, key, value);
    this.cache.delete(toolsConfigPath(agentDir));
  }
}

function fileStamp(path: string): string {
  try {
    const stat = statSync(path, { bigint: true });
    return `${stat.ino}:${stat.size}:${stat.mtimeNs}`;
  } catch {
    return "missing";
  }
}
