/** The `--script` flag's file: read and validated once, when the first request needs it. */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { ExtensionAPI } from "@knightcodeai/cli/kit";
import { SCRIPT_FLAG } from "./names.js";
import type { StepLoader } from "./provider.js";
import { parseScript } from "./schema.js";

/** Loads the script file the flag names (relative to the process's working directory), once. */
export function scriptFileSteps(knightcode: ExtensionAPI): StepLoader {
  let loading: ReturnType<StepLoader> | undefined;
  const load = async (): ReturnType<StepLoader> => {
    const value = knightcode.getFlag(SCRIPT_FLAG);
    if (typeof value !== "string" || value.trim() === "") {
      return {
        ok: false,
        message: `The scripted provider has no script: start with --${SCRIPT_FLAG} <file.json> (a JSON file of steps)`,
      };
    }
    const file = resolve(value);
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      return { ok: false, message: `Script file ${file} cannot be read: ${(error as Error).message}` };
    }
    const parsed = parseScript(text, file);
    return parsed.ok ? { ok: true, steps: parsed.steps } : parsed;
  };
  return () => {
    loading ??= load().catch((error: unknown) => ({
      ok: false as const,
      message: `The script could not be loaded: ${error instanceof Error ? error.message : String(error)}`,
    }));
    return loading;
  };
}
