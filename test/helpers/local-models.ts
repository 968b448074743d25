/** The agent dir's models.json for tests that point KnightCode at a local OpenAI-compatible server. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface LocalProvider {
  baseUrl: string;
  apiKey?: string;
  compat?: Record<string, unknown>;
  models: { id: string; contextWindow: number; maxTokens: number }[];
}

/** Writes `<agentDir>/models.json` with one `openai-completions` provider named `local`; returns the file. */
export function writeLocalModels(agentDir: string, provider: LocalProvider): string {
  mkdirSync(agentDir, { recursive: true });
  const file = join(agentDir, "models.json");
  writeFileSync(file, JSON.stringify({ providers: { local: { api: "openai-completions", ...provider } } }));
  return file;
}
