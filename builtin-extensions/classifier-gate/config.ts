/**
 * The gate's settings, the `classifier-gate` entry of tools.json. The file is read again when it changes (its
 * size and modification time), so `/tools` and the app-server's `tool/settings/write` apply from the next call.
 * Anything wrong with it (the file, a rule, the timeout) turns the gate on with every call needing a person:
 * a permission file that cannot be read must not open the door.
 */
import { statSync } from "node:fs";
import { isToolEnabled, readToolsConfig, toolsConfigPath } from "@knightcodeai/cli/kit";
import { parseRules, type Rule } from "./rules.js";

export const GATE = "classifier-gate";
export const DEFAULT_TIMEOUT_MS = 15_000;

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

export function gateSettings(agentDir: string): GateSettings {
  const config = readToolsConfig(agentDir);
  const off: GateSettings = { enabled: false, timeoutMs: DEFAULT_TIMEOUT_MS, rules: [], protectedPaths: [] };
  if (config.warning) return { ...off, enabled: true, malformed: config.warning };
  const entry = config.tools[GATE] ?? {};
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
    enabled: isToolEnabled(config, GATE),
    ...(typeof model === "string" && model !== "" ? { model } : {}),
    timeoutMs,
    rules,
    protectedPaths: protectedPaths!,
  };
}

/** `gateSettings`, read again only when tools.json changed. */
export class GateSettingsCache {
  private stamp = "";
  private settings: GateSettings | undefined;

  constructor(private readonly onWarning: (message: string) => void) {}

  get(agentDir: string): GateSettings {
    const stamp = `${agentDir}\0${fileStamp(toolsConfigPath(agentDir))}`;
    if (this.settings && stamp === this.stamp) return this.settings;
    const settings = gateSettings(agentDir);
    if (settings.malformed && settings.malformed !== this.settings?.malformed) {
      this.onWarning(
        `${settings.malformed}; every tool call needs a person's confirmation until it is fixed`,
      );
    }
    this.settings = settings;
    this.stamp = stamp;
    return settings;
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
