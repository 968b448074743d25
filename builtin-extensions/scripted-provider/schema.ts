/**
 * The script format of the scripted provider, as TypeBox schemas, and the validation that turns a script file (or a
 * step given in code) into steps or into one message naming the JSON path of the first problem.
 */
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";

const MAX_DELAY_MS = 2_147_483_647; // the largest delay setTimeout honours

const Delay = Type.Number({ minimum: 0, maximum: MAX_DELAY_MS });
const Count = Type.Integer({ minimum: 0 });

export const ScriptErrorKindSchema = Type.Union([
  Type.Literal("overloaded"),
  Type.Literal("rate_limit"),
  Type.Literal("auth"),
  Type.Literal("context_overflow"),
  Type.Literal("bad_request"),
  Type.Literal("network"),
  Type.Literal("timeout"),
  Type.Literal("unknown"),
]);

export const ScriptToolCallSchema = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    /** Defaults to `{}`. */
    arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    /** Defaults to `call_<n>`, numbered per provider instance. */
    id: Type.Optional(Type.String({ minLength: 1 })),
  },
  { additionalProperties: false },
);

export const ScriptErrorSchema = Type.Object(
  {
    kind: ScriptErrorKindSchema,
    /** Defaults to `Scripted <kind> error`. */
    message: Type.Optional(Type.String()),
    /**
     * The HTTP status given to `hooks.response` (200 otherwise). From 400 up and without `afterChunks`, the request
     * fails as an HTTP error answer does: no stream events.
     */
    status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599 })),
    retryAfterMs: Type.Optional(Count),
    /** Fail mid-stream after this many chunks (of the step's content, or of a filler text). */
    afterChunks: Type.Optional(Count),
  },
  { additionalProperties: false },
);

export const ScriptUsageSchema = Type.Object(
  {
    input: Count,
    output: Count,
    cacheRead: Type.Optional(Count),
    cacheWrite: Type.Optional(Count),
  },
  { additionalProperties: false },
);

/** Assertions about the request a step answers; a mismatch makes the response an error. */
export const ScriptExpectSchema = Type.Object(
  {
    /** The text of the last user message, exactly (text parts joined with "\n"). */
    lastUserText: Type.Optional(Type.String()),
    lastUserTextContains: Type.Optional(Type.String()),
    systemPromptContains: Type.Optional(Type.String()),
    /** Names that must be among the declared tools. */
    tools: Type.Optional(Type.Array(Type.String())),
    /** The last tool result in the messages. */
    lastToolResult: Type.Optional(
      Type.Object(
        {
          toolName: Type.Optional(Type.String()),
          isError: Type.Optional(Type.Boolean()),
          textContains: Type.Optional(Type.String()),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/**
 * One step answers one request. Content streams in the order thinking, text, tool calls. A step needs at least one
 * of `text`, `thinking`, `toolCalls` or `error`; with `error`, `text` is what streams before `afterChunks` cuts in.
 */
export const ScriptStepSchema = Type.Object(
  {
    thinking: Type.Optional(Type.String()),
    text: Type.Optional(Type.String()),
    toolCalls: Type.Optional(Type.Array(ScriptToolCallSchema, { minItems: 1 })),
    error: Type.Optional(ScriptErrorSchema),
    /** Wait before the response starts. */
    delayMs: Type.Optional(Delay),
    /** Wait between two chunks. */
    chunkDelayMs: Type.Optional(Delay),
    /** Reported usage; otherwise estimated at about 4 characters a token. */
    usage: Type.Optional(ScriptUsageSchema),
    /** Overrides the stop reason of a successful response. */
    stopReason: Type.Optional(Type.Union([Type.Literal("stop"), Type.Literal("length")])),
    expect: Type.Optional(ScriptExpectSchema),
  },
  { additionalProperties: false },
);

const StepListSchema = Type.Array(ScriptStepSchema);
const ScriptObjectSchema = Type.Object({ steps: StepListSchema }, { additionalProperties: false });

/** A script file: `{"steps": [...]}` or a bare array of steps. */
export const ScriptSchema = Type.Union([ScriptObjectSchema, StepListSchema]);

export type ScriptStep = Static<typeof ScriptStepSchema>;
export type ScriptErrorKind = Static<typeof ScriptErrorKindSchema>;
export type Script = Static<typeof ScriptSchema>;

/** Compiled on the first script checked: a session that never uses the scripted provider does not pay for it. */
let compiled:
  | {
      stepList: ReturnType<typeof TypeCompiler.Compile<typeof StepListSchema>>;
      scriptObject: ReturnType<typeof TypeCompiler.Compile<typeof ScriptObjectSchema>>;
      step: ReturnType<typeof TypeCompiler.Compile<typeof ScriptStepSchema>>;
    }
  | undefined;
const checkers = () =>
  (compiled ??= {
    stepList: TypeCompiler.Compile(StepListSchema),
    scriptObject: TypeCompiler.Compile(ScriptObjectSchema),
    step: TypeCompiler.Compile(ScriptStepSchema),
  });

/** The outcome of a validation: the value, or a message whose location is a JSON path such as `$.steps[1].text`. */
export type Checked<T> = { ok: true; value: T } | { ok: false; path: string; message: string };

/** Turns a JSON pointer (`/steps/1/text`) into a JSON path below `base` (`$.steps[1].text`). */
export function jsonPath(pointer: string, base = "$"): string {
  let path = base;
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (/^\d+$/.test(key)) path += `[${key}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) path += `.${key}`;
    else path += `[${JSON.stringify(key)}]`;
  }
  return path;
}

function describe(schema: TSchema, fallback: string): string {
  const options = (schema as { anyOf?: { const?: unknown }[] }).anyOf;
  if (options?.length && options.every((option) => option.const !== undefined)) {
    return `must be one of ${options.map((option) => JSON.stringify(option.const)).join(", ")}`;
  }
  return fallback;
}

function firstError<T>(
  checker: { Errors(value: unknown): Iterable<{ path: string; message: string; schema: TSchema }> },
  value: unknown,
  base: string,
): Checked<T> | undefined {
  for (const error of checker.Errors(value)) {
    return { ok: false, path: jsonPath(error.path, base), message: describe(error.schema, error.message) };
  }
  return undefined;
}

/** The checks a schema cannot say: a step must answer with something. */
function stepProblem(step: ScriptStep, path: string): Checked<never> | undefined {
  if (step.text === undefined && step.thinking === undefined && !step.toolCalls && !step.error) {
    return { ok: false, path, message: "a step needs text, thinking, toolCalls or error" };
  }
  return undefined;
}

/** Validates one step (from code, a step function or a payload's `scriptedStep`). */
export function validateStep(value: unknown, base = "$"): Checked<ScriptStep> {
  const { step } = checkers();
  if (!step.Check(value)) {
    return firstError(step, value, base) ?? { ok: false, path: base, message: "not a valid step" };
  }
  return stepProblem(value, base) ?? { ok: true, value };
}

/** Validates a parsed script: `{"steps": [...]}` or a bare array. */
export function validateScript(value: unknown): Checked<ScriptStep[]> {
  const list = Array.isArray(value);
  const checker = list ? checkers().stepList : checkers().scriptObject;
  if (!checker.Check(value)) {
    if (!list && (typeof value !== "object" || value === null)) {
      return { ok: false, path: "$", message: 'expected {"steps": [...]} or an array of steps' };
    }
    return firstError(checker, value, "$") ?? { ok: false, path: "$", message: "not a valid script" };
  }
  const steps = list ? (value as ScriptStep[]) : (value as { steps: ScriptStep[] }).steps;
  const base = list ? "$" : "$.steps";
  for (const [index, step] of steps.entries()) {
    const problem = stepProblem(step, `${base}[${index}]`);
    if (problem) return problem;
  }
  return { ok: true, value: steps };
}

/** Parses and validates the text of a script file; the message names the file and the JSON path. */
export function parseScript(
  text: string,
  file: string,
): { ok: true; steps: ScriptStep[] } | { ok: false; message: string } {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `Script file ${file} is not valid JSON: ${(error as Error).message}` };
  }
  const checked = validateScript(data);
  if (!checked.ok)
    return { ok: false, message: `Script file ${file} is invalid at ${checked.path}: ${checked.message}` };
  return { ok: true, steps: checked.value };
}
