/**
 * Reading the `websearch` and `webfetch` entries of tools.json. `/tools` and `tool/settings/write` store every value
 * but `enabled` as a string, and a hand-written file may hold numbers and booleans, so both are read; a value that is
 * neither is an error naming the file, the tool and the key rather than a silent default.
 */
import type { ExtensionContext, ToolSettingValue } from "@knightcodeai/cli/kit";

export interface ToolValues {
  path: string;
  values: Readonly<Record<string, ToolSettingValue>>;
}

/** The tool's entry; a malformed tools.json is an error (a silent fallback would drop the user's choices). */
export function readValues(ctx: ExtensionContext, name: string): ToolValues {
  const read = ctx.toolSettings.read(name);
  if (read.warning) throw new Error(`${name}: tools.json cannot be used: ${read.warning}`);
  return { path: read.path, values: read.values };
}

function invalid(tool: string, key: string, path: string, want: string, value: ToolSettingValue): Error {
  return new Error(
    `${tool}: the setting "${key}" in ${path} must be ${want}; it is ${JSON.stringify(value)}`,
  );
}

export function stringSetting(tool: string, settings: ToolValues, key: string): string | undefined {
  const value = settings.values[key];
  if (value === undefined || value === "") return undefined;
  if (typeof value !== "string") throw invalid(tool, key, settings.path, "a string", value);
  return value;
}

/** A positive number (seconds, bytes), within `max`. */
export function numberSetting(
  tool: string,
  settings: ToolValues,
  key: string,
  fallback: number,
  max: number,
): number {
  const value = settings.values[key];
  if (value === undefined || value === "") return fallback;
  const number =
    typeof value === "number" ? value : typeof value === "string" ? Number(value.trim()) : Number.NaN;
  if (!Number.isFinite(number) || number <= 0 || number > max)
    throw invalid(tool, key, settings.path, `a number above 0 and at most ${max}`, value);
  return number;
}

export function booleanSetting(tool: string, settings: ToolValues, key: string): boolean {
  const value = settings.values[key];
  if (value === undefined || value === "" || value === false || value === "false") return false;
  if (value === true || value === "true") return true;
  throw invalid(tool, key, settings.path, "true or false", value);
}

/** One deadline for the whole call: the run's abort signal, or the timeout, whichever comes first. */
export function deadline(signal: AbortSignal | undefined, seconds: number): AbortSignal {
  const timeout = AbortSignal.timeout(Math.ceil(seconds * 1000));
  return signal ? AbortSignal.any([signal, timeout]) : timeout;
}

/** Whether `error` is the deadline's timeout (not the run's abort). */
export function timedOut(signal: AbortSignal, runSignal: AbortSignal | undefined): boolean {
  return signal.aborted && !runSignal?.aborted;
}
