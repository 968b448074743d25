/**
 * builtin:codemode — the `codemode` tool: the model writes a short JavaScript program that calls tools, and gets
 * back what the program returns and logs. Written only against the public API (`exposure`, `prepareLoadout`,
 * `reachesTools`, `ctx.executeTool`), so `-builtin:codemode` and an extension of one's own can replace it; see
 * docs/codemode.md.
 *
 * Scripts run in a QuickJS sandbox in a worker thread (sandbox.ts, sandbox-worker.ts), loaded on the first call.
 * Every call a script makes goes through `ctx.executeTool`, so validation, `tool_call` gates, `tool_result`
 * handlers, events with `parentToolCallId`, `nestedCalls` and nested usage apply exactly as for the model's calls.
 * The tool is declared only while some tool has `codemode` exposure; its description lists those tools and hides
 * their own declarations while they are active.
 */
import {
  type CallableToolInfo,
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  type ExtensionAPI,
  formatSize,
  privateTempPath,
  rankTools,
  type ToolLoadoutEntry,
  type ToolResult,
  type TSchema,
  Type,
  truncateHead,
  writePrivateFileSync,
} from "@knightcodeai/cli/kit";
import {
  catalogueOf,
  describeTools,
  isListed,
  normalizeCode,
  reachedBy,
  type SurfaceTool,
  sandboxTools,
} from "./catalogue.js";
import type { RunFailureKind } from "./protocol.js";
import type { SandboxAnswer, SandboxCall, ScriptResult } from "./sandbox.js";

export const CODEMODE = "codemode";

/** `codemode` settings: a script's wall-clock limit, its QuickJS memory, and sandboxes running at once. */
export interface CodemodeSettings {
  timeoutMs: number;
  memoryMb: number;
  maxConcurrent: number;
}

export const DEFAULT_CODEMODE_SETTINGS: Readonly<CodemodeSettings> = Object.freeze({
  timeoutMs: 30_000,
  memoryMb: 64,
  maxConcurrent: 4,
});

export interface CodemodeDetails {
  ok: boolean;
  /** Why the script failed: its own error, the deadline, the memory limit, an abort, waiting on nothing. */
  failure?: RunFailureKind;
  durationMs: number;
  /** Tool calls the script made, and how many of them failed (`nestedCalls` on the result has the record). */
  calls: number;
  failedCalls: number;
  /** Tool calls still running when the script ended; they were aborted. */
  cancelled: string[];
  logLines: number;
  /** Whether this script started a new sandbox worker (no warm one was free). */
  coldStart: boolean;
  /** Where the complete output went when the text was truncated. */
  fullOutputPath?: string;
}

export default function codemode(knightcode: ExtensionAPI): void {
  let described:
    | { key: string; result: { descriptions: Record<string, string>; hiddenDeclarations: string[] } }
    | undefined;

  knightcode.registerTool(
    {
      name: CODEMODE,
      label: "Code mode",
      description: describeTools([]),
      promptSnippet: "Run a JavaScript program that calls tools",
      parameters: Type.Object({
        code: Type.String({
          minLength: 1,
          description: "The body of an async JavaScript function; `return` the result",
        }),
      }),
      // Orchestrates other tools; a script calling codemode would only nest sandboxes.
      exposure: "model-only",
      reachesTools: (input) => reachedBy(input.code),
      prepareLoadout(loadout) {
        const listed = loadout.all.filter((t) => t.exposure === "codemode");
        if (listed.length === 0) return { hiddenDeclarations: [CODEMODE] };
        const key = loadoutKey(listed, loadout.declared);
        if (described?.key !== key) {
          const declared = new Set(loadout.declared.map((t) => t.name));
          described = {
            key,
            result: {
              descriptions: { [CODEMODE]: describeTools(listed) },
              hiddenDeclarations: listed.filter((t) => declared.has(t.name)).map((t) => t.name),
            },
          };
        }
        return described.result;
      },
      async execute(_toolCallId, params, signal, _onUpdate, ctx) {
        const settings = codemodeSettings(knightcode.getSettings());
        const exposures = new Map(knightcode.getAllTools().map((t) => [t.name, t.exposure]));
        const surface: SurfaceTool[] = ctx.tools.map((t: CallableToolInfo) => ({
          ...t,
          exposure: exposures.get(t.name) ?? "direct",
        }));
        const schemas = new Map(ctx.tools.map((t) => [t.name, t.outputSchema]));
        const listed = surface.filter(isListed);
        let calls = 0;
        let failedCalls = 0;
        const logs: string[] = [];

        const onCall = async (call: SandboxCall): Promise<SandboxAnswer> => {
          if (call.kind === "search") {
            const { query, limit } = call.args as { query?: unknown; limit?: unknown };
            const ranked = rankTools(listed, String(query ?? ""), typeof limit === "number" ? limit : 8);
            return {
              value: ranked.map(({ tool }) => ({
                name: tool.name,
                namespace: tool.namespace?.name,
                description: tool.description.split("\n")[0],
              })),
            };
          }
          const result = await ctx.executeTool(call.name, call.args, { signal: call.signal });
          calls++;
          if (result.isError) failedCalls++;
          return scriptValue(result, schemas.get(call.name));
        };

        const started = performance.now();
        const { runScript } = await import("./sandbox.js");
        let run: ScriptResult;
        try {
          run = await runScript({
            code: normalizeCode(params.code),
            tools: sandboxTools(surface),
            catalogue: JSON.stringify(catalogueOf(surface)),
            ...settings,
            ...(signal ? { signal } : {}),
            onCall,
            onLog: (level, text) => logs.push(level === "log" ? text : `[${level}] ${text}`),
          });
        } catch (error) {
          // Aborted while waiting for a free sandbox, or the sandbox worker could not start.
          throw new Error(`codemode: ${(error as Error).message}`);
        }
        const details: CodemodeDetails = {
          ok: run.outcome.ok,
          ...(run.outcome.ok ? {} : { failure: run.outcome.kind }),
          durationMs: Math.round(performance.now() - started),
          calls,
          failedCalls,
          cancelled: run.cancelled,
          logLines: logs.length,
          coldStart: run.coldStart,
        };
        const text = resultText(run, logs, calls, settings);
        const shown = truncated(text);
        if (shown.fullOutputPath) details.fullOutputPath = shown.fullOutputPath;
        return {
          content: [{ type: "text", text: shown.text }],
          details,
          ...(run.outcome.ok ? {} : { isError: true }),
        };
      },
    },
    { fallback: true },
  );
}

/** The settings in force, each value checked, so a bad one falls back to its default instead of failing calls. */
export function codemodeSettings(all: Record<string, unknown>): CodemodeSettings {
  const own = (all.codemode ?? {}) as Partial<Record<keyof CodemodeSettings, unknown>>;
  const pick = (key: keyof CodemodeSettings, min: number) => {
    const value = own[key];
    return typeof value === "number" && Number.isInteger(value) && value >= min
      ? value
      : DEFAULT_CODEMODE_SETTINGS[key];
  };
  return {
    timeoutMs: pick("timeoutMs", 1),
    memoryMb: pick("memoryMb", 1),
    maxConcurrent: pick("maxConcurrent", 1),
  };
}

/**
 * A tool result as a script sees it: the structured result of a tool that declares `outputSchema`, else the text.
 * An error result with structured data still resolves to the data; any other error throws in the script.
 */
export function scriptValue(result: ToolResult, outputSchema: TSchema | undefined): SandboxAnswer {
  const text = result.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");
  if (outputSchema && result.structuredContent !== undefined) return { value: result.structuredContent };
  if (result.isError) return { error: text };
  return { value: text };
}

function resultText(
  run: ScriptResult,
  logs: string[],
  callCount: number,
  settings: CodemodeSettings,
): string {
  const { outcome } = run;
  const parts: string[] = [];
  const calls = `${callCount} tool call${callCount === 1 ? "" : "s"}`;
  if (outcome.ok) {
    parts.push(
      outcome.json === undefined
        ? `The script finished (${calls}) and returned nothing.`
        : pretty(outcome.json),
    );
  } else {
    parts.push(`The script failed (${failureLabel(outcome.kind, settings)}, ${calls}):\n${outcome.message}`);
  }
  if (logs.length > 0) parts.push(`Console:\n${logs.join("\n")}`);
  if (run.cancelled.length > 0) {
    parts.push(
      `Cancelled ${run.cancelled.length} tool call(s) still running when the script ended: ${run.cancelled.join(", ")}`,
    );
  }
  return parts.join("\n\n");
}

function failureLabel(kind: RunFailureKind, settings: CodemodeSettings): string {
  switch (kind) {
    case "timeout":
      return `over its ${settings.timeoutMs} ms limit (setting codemode.timeoutMs)`;
    case "memory":
      return `out of its ${settings.memoryMb} MB of memory (setting codemode.memoryMb)`;
    case "stalled":
      return "waiting on nothing";
    case "aborted":
      return "aborted";
    case "sandbox":
      return "sandbox failure";
    default:
      return "error";
  }
}

/** A returned string reads as text; anything else as indented JSON. */
function pretty(json: string): string {
  const value = JSON.parse(json) as unknown;
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

/**
 * The text cut to the usual tool limits, with the complete output in a temp file the model can read: private (0600)
 * like every file that holds tool output, since the temp folder is shared.
 */
function truncated(text: string): { text: string; fullOutputPath?: string } {
  const cut = truncateHead(text);
  if (!cut.truncated) return { text };
  const path = privateTempPath("codemode", "log");
  let where = "";
  try {
    writePrivateFileSync(path, text);
    where = ` Full output: ${path}`;
  } catch {
    // Without the file the note still says how much was cut.
  }
  // A first line over the byte limit leaves nothing whole to keep; its start is better than nothing.
  const kept = cut.content || text.slice(0, DEFAULT_MAX_BYTES / 2);
  const note = `[Output truncated: ${cut.totalLines} lines, ${formatSize(cut.totalBytes)}; showing the first ${DEFAULT_MAX_LINES} lines or ${formatSize(DEFAULT_MAX_BYTES)}.${where}]`;
  return { text: `${kept}\n\n${note}`, ...(where ? { fullOutputPath: path } : {}) };
}

/** Schemas get ids by identity, so the key changes when a tool registers again with a new schema. */
const schemaIds = new WeakMap<object, number>();
let nextSchemaId = 1;
function schemaId(schema: unknown): number {
  if (typeof schema !== "object" || schema === null) return 0;
  let id = schemaIds.get(schema);
  if (id === undefined) {
    id = nextSchemaId++;
    schemaIds.set(schema, id);
  }
  return id;
}

function loadoutKey(listed: ToolLoadoutEntry[], declared: ToolLoadoutEntry[]): string {
  const tools = listed.map((t) =>
    [
      t.name,
      t.description,
      schemaId(t.parameters),
      schemaId(t.outputSchema),
      t.namespace?.name,
      t.namespace?.description,
      t.namespace?.aliases?.join(","),
    ].join("\0"),
  );
  return `${tools.join("\u0001")}\u0002${declared.map((t) => t.name).join(",")}`;
}
