/**
 * `<agentDir>/models.json`: custom providers and models, in the closest peer's shape so users can bring theirs.
 * A malformed file is a warning (with line and column), and so is one that cannot be read (a directory, no
 * permission); it never stops startup, and the built-in providers keep working without it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type Static, Type } from "@sinclair/typebox";
import { Errors } from "@sinclair/typebox/errors";
import { Check } from "@sinclair/typebox/value";
import { jsonProblem, parseJson, readFailure } from "../kit/files/json-file.js";

const ModelSchema = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    name: Type.Optional(Type.String()),
    api: Type.Optional(Type.String()),
    contextWindow: Type.Optional(Type.Number({ minimum: 1 })),
    maxTokens: Type.Optional(Type.Number({ minimum: 1 })),
    reasoning: Type.Optional(Type.Boolean()),
    input: Type.Optional(Type.Array(Type.Union([Type.Literal("text"), Type.Literal("image")]))),
    cost: Type.Optional(
      Type.Object({
        input: Type.Number(),
        output: Type.Number(),
        cacheRead: Type.Optional(Type.Number()),
        cacheWrite: Type.Optional(Type.Number()),
      }),
    ),
  },
  { additionalProperties: true },
);

const ProviderSchema = Type.Object(
  {
    baseUrl: Type.Optional(Type.String()),
    api: Type.Optional(Type.String()),
    apiKey: Type.Optional(Type.String()),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    compat: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    models: Type.Optional(Type.Array(ModelSchema)),
  },
  { additionalProperties: true },
);

export const ModelsJsonSchema = Type.Object({ providers: Type.Record(Type.String(), ProviderSchema) });
export type ModelsJson = Static<typeof ModelsJsonSchema>;

export function loadModelsJson(agentDir: string): { providers: ModelsJson["providers"]; warnings: string[] } {
  const path = join(agentDir, "models.json");
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return { providers: {}, warnings: [] };
    // A directory or an unreadable file is one warning here, not a failure of every provider that asks for models.
    return {
      providers: {},
      warnings: [`${path}: cannot be read: ${readFailure(error)}; the file was ignored`],
    };
  }
  const result = parseJson(text);
  if (!result.ok) {
    return {
      providers: {},
      warnings: [`${path}:${result.line}:${result.column}: ${jsonProblem(result)}; the file was ignored`],
    };
  }
  const parsed = result.value;
  if (!Check(ModelsJsonSchema, parsed)) {
    const first = [...Errors(ModelsJsonSchema, parsed)][0];
    return {
      providers: {},
      warnings: [
        `${path}: ${first ? `${first.path || "/"} ${first.message}` : "invalid"}; the file was ignored`,
      ],
    };
  }
  return { providers: parsed.providers, warnings: [] };
}
