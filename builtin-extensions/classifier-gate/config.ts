/**
 * The gate's settings, the `classifier-gate` entry of tools.json, read through `ctx.toolSettings` (which reads
 * the file again when it changes), so `/tools` and the app-server's `tool/settings/write` apply from the next call.
 * Anything wrong with it (the file, a rule, the timeout) turns the gate on with every call needing a person:
 * a permission file that cannot be read must not open the door.
 */
import type { ToolSettingsAccess, ToolSettingsDefinition, ToolSettingsRead } from "@knightcodeai/cli/kit";
import { parseRules, type Rule } from "./rules.js";

export const GATE = "classifier-gate";
export const DEFAULT_TIMEOUT_MS = 15_000;

/** What the gate declares in tools.json (`registerToolSettings`), for `/tools` and the app-server. */
export const GATE_SETTINGS: ToolSettingsDefinition = Object.freeze({
  description:
    "Lets safe tool calls through, asks a classifier model about the rest, and confirms risky ones",
  enabledByDefault: false,
  settings: Object.freeze({
    model: "classifier model as provider/id (default: the first of getAvailableClassifiers())",
    timeoutMs: "time the classifier has to answer, in milliseconds (default 15000)",
    allow: "rules that let matching calls through, e.g. bash(git status*), edit(src/**)",
    ask: "rules whose matching calls a person confirms",
    deny: "rules that block matching calls",
    protectedPaths: "more paths no call may change without a person's confirmation",
  }),
});

export interface GateSettings {
  enabled: boolean;
  /** Why the settings cannot be used; set, the gate confirms every call. */
  malformed?: string;
  /** `provider/id` */
  model?: string;
  timeoutMs: number;
  rules: Rule[];
  protectedPaths: string[];
}

export function gateSettings(config: ToolSettingsRead): GateSettings {
  const off: GateSettings = { enabled: false, timeoutMs: DEFAULT_TIMEOUT_MS, rules: [], protectedPaths: [] };
  if (config.warning) return { ...off, enabled: true, malformed: config.warning };
  const entry = config.values;
  const problems: string[] = [];
  const rules: Rule[] = [];
  for (const action of ["deny", "ask", "allow"] as const) {
    const parsed = parseRules(entry[action], action, `${GATE}.${action}`);
    rules.push(...parsed.rules);
    problems.push(...parsed.errors);
  }
  const timeoutMs = entry.timeoutMs === undefined ? DEFAULT_TIMEOUT_MS : Number(entry.timeoutMs);
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0)
    problems.push(`"${GATE}.timeoutMs" must be a whole number of milliseconds above 0`);
  const model = entry.model;
  if (model !== undefined && typeof model !== "string") problems.push(`"${GATE}.model" must be a string`);
  const extra = entry.protectedPaths;
  const protectedPaths =
    extra === undefined
      ? []
      : typeof extra === "string"
        ? extra
            .split(/[,\n]/)
            .map((p) => p.trim())
            .filter((p) => p !== "")
        : Array.isArray(extra)
          ? extra
          : undefined;
  if (!protectedPaths) problems.push(`"${GATE}.protectedPaths" must be a string or a list of strings`);
  if (problems.length > 0) {
    return { ...off, enabled: true, malformed: `${config.path}: ${problems.join("; ")}` };
  }
  return {
    enabled: config.enabled,
    ...(typeof model === "string" && model !== "" ? { model } : {}),
    timeoutMs,
    rules,
    protectedPaths: protectedPaths!,
  };
}

/** `gateSettings`, worked out again only when tools.json changed (the store hands back the same read until then). */
export class GateSettingsCache {
  private read: ToolSettingsRead | undefined;
  private settings: GateSettings | undefined;

  constructor(private readonly onWarning: (message: string) => void) {}

  get(tools: ToolSettingsAccess): GateSettings {
    const read = tools.read(GATE);
    if (this.settings && read === this.read) return this.settings;
    const settings = gateSettings(read);
    if (settings.malformed && settings.malformed !== this.settings?.malformed) {
      this.onWarning(
        `${settings.malformed}; every tool call needs a person's confirmation until it is fixed`,
      );
    }
    this.settings = settings;
    this.read = read;
    return settings;
  }
}
