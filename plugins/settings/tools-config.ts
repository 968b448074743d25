/**
 * `<agentDir>/tools.json`: the state and settings of the tools `/tools` manages (`{"<name>": {"enabled": true,
 * "<key>": "<value>"}}`). `/tools`, the classifier gate and the app-server's `tool/settings/read|write` share this
 * module, so they agree on defaults, validation and masking.
 *
 * A malformed file is never overwritten and never silently ignored: reading it returns a warning that names it,
 * and the classifier gate then confirms every call. Values of keys ending in `Key` are secrets (API keys): every
 * listing masks them to their last four characters, so they never reach a command's output, a client or a log.
 */
import { join, resolve } from "node:path";
import { writeFileAtomic } from "./atomic-write.js";
import { isPlainObject, type JsonObject, readJsonObjectFile } from "./json-file.js";

/** A tool `/tools` manages: its default state and the settings it reads, with what each means. */
export interface ManagedTool {
  name: string;
  description: string;
  enabledByDefault: boolean;
  /** Known keys and their meaning; other keys are kept and shown, but the tool ignores them. */
  settings: Readonly<Record<string, string>>;
}

/**
 * The tools `tools.json` may configure. A tool not listed here is an unknown tool to `/tools` and
 * `tool/settings/write`; a built-in that wants a row adds one.
 */
export const MANAGED_TOOLS: readonly ManagedTool[] = Object.freeze<ManagedTool[]>([
  {
    name: "classifier-gate",
    description:
      "Lets safe tool calls through, asks a classifier model about the rest, and confirms risky ones",
    enabledByDefault: false,
    settings: {
      model: "classifier model as provider/id (default: the first of getAvailableClassifiers())",
      timeoutMs: "time the classifier has to answer, in milliseconds (default 15000)",
      allow: "rules that let matching calls through, e.g. bash(git status*), edit(src/**)",
      ask: "rules whose matching calls a person confirms",
      deny: "rules that block matching calls",
      protectedPaths: "more paths no call may change without a person's confirmation",
    },
  },
  {
    name: "ask-user",
    description: "The ask_user tool: the model asks you questions with fixed options",
    enabledByDefault: true,
    settings: {},
  },
]);

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

/** A bad `writeToolSetting` request (unknown tool, malformed key, wrong value type); the app-server's `invalidParams`. */
export class ToolSettingsError extends Error {
  override readonly name = "ToolSettingsError";
}

const KEY = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

export function toolsConfigPath(agentDir: string): string {
  return join(resolve(agentDir), "tools.json");
}

export function managedTool(name: string): ManagedTool | undefined {
  return MANAGED_TOOLS.find((t) => t.name === name);
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

/** Whether a managed tool is on: the file's `enabled`, else its default. */
export function isToolEnabled(config: ToolsConfigRead, name: string): boolean {
  const enabled = config.tools[name]?.enabled;
  return typeof enabled === "boolean" ? enabled : (managedTool(name)?.enabledByDefault ?? false);
}

/** Every managed tool with its state and masked settings (`enabled` is not repeated among the settings). */
export function listToolSettings(agentDir: string): ToolSettingsListing {
  const config = readToolsConfig(agentDir);
  return {
    path: config.path,
    tools: MANAGED_TOOLS.map((tool) => ({
      name: tool.name,
      enabled: isToolEnabled(config, tool.name),
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
 * Sets one setting of a managed tool and writes the file atomically; `null` deletes the key. `enabled` takes a
 * boolean, other keys a string. The file is read again first, so a change made meanwhile to another key is kept;
 * a malformed file is left alone and the change fails with its error.
 */
export function writeToolSetting(
  agentDir: string,
  name: string,
  key: string,
  value: string | boolean | null,
): void {
  if (!managedTool(name)) {
    throw new ToolSettingsError(
      `Unknown tool "${name}"; tools.json manages: ${MANAGED_TOOLS.map((t) => t.name).join(", ")}`,
    );
  }
  if (!KEY.test(key)) {
    throw new ToolSettingsError(
      `Malformed setting key ${JSON.stringify(key)}: use a letter, then letters, digits, "_", "." or "-"`,
    );
  }
  if (key === "enabled" && value !== null && typeof value !== "boolean") {
    throw new ToolSettingsError(`"enabled" takes true or false`);
  }
  if (key !== "enabled" && value !== null && typeof value !== "string") {
    throw new ToolSettingsError(`"${key}" takes a string`);
  }
  const path = toolsConfigPath(agentDir);
  const read = readJsonObjectFile(path);
  if (read.status === "invalid") throw new Error(read.message);
  const data: JsonObject = read.status === "ok" ? read.value : {};
  const problem = checkConfig(data);
  if (problem) throw new Error(`${path}: ${problem}`);
  const entry = { ...((data[name] as JsonObject | undefined) ?? {}) };
  if (value === null) delete entry[key];
  else entry[key] = value;
  if (Object.keys(entry).length === 0) delete data[name];
  else data[name] = entry;
  writeFileAtomic(path, `${JSON.stringify(data, null, 2)}\n`);
}
