/**
 * Gemini API streams in the real wire format: `streamGenerateContent?alt=sse` answers with `data:` lines only, each a
 * whole `GenerateContentResponse` JSON (candidates[0].content.parts, finishReason on the last one, cumulative
 * usageMetadata, modelVersion, responseId), events separated by CRLF CRLF as Google's servers send them
 * (ai.google.dev/api/generate-content#method:-models.streamgeneratecontent).
 */
import type { ServerResponse } from "node:http";
import { writeJsonError } from "../../../helpers/sse-server.js";

export interface GeminiUsage {
  prompt?: number;
  candidates?: number;
  thoughts?: number;
  cached?: number;
}

export type Part = Record<string, unknown>;

/** One streamed chunk with these parts (and the finish reason and usage, when given). */
export function chunk(
  parts: Part[],
  options: { finishReason?: string; usage?: GeminiUsage; model?: string } = {},
): Record<string, unknown> {
  const usage = options.usage;
  return {
    candidates: [
      {
        content: { parts, role: "model" },
        ...(options.finishReason ? { finishReason: options.finishReason } : {}),
        index: 0,
      },
    ],
    ...(usage
      ? {
          usageMetadata: {
            promptTokenCount: usage.prompt ?? 0,
            ...(usage.candidates !== undefined ? { candidatesTokenCount: usage.candidates } : {}),
            totalTokenCount: (usage.prompt ?? 0) + (usage.candidates ?? 0) + (usage.thoughts ?? 0),
            ...(usage.thoughts !== undefined ? { thoughtsTokenCount: usage.thoughts } : {}),
            ...(usage.cached !== undefined ? { cachedContentTokenCount: usage.cached } : {}),
            promptTokensDetails: [{ modality: "TEXT", tokenCount: usage.prompt ?? 0 }],
          },
        }
      : {}),
    modelVersion: options.model ?? "gemini-2.5-flash",
    responseId: "resp-test-0001",
  };
}

/** A text answer in pieces; the last chunk carries STOP and the usage. */
export function textChunks(pieces: string[], usage: GeminiUsage = { prompt: 10, candidates: 5 }) {
  return pieces.map((text, i) =>
    chunk(
      [{ text }],
      i === pieces.length - 1 ? { finishReason: "STOP", usage } : { usage: { prompt: usage.prompt ?? 0 } },
    ),
  );
}

/** Writes chunks as Gemini's SSE: `data: <json>\r\n\r\n`. `dropAfter` destroys the connection after that many. */
export async function writeGemini(
  res: ServerResponse,
  chunks: unknown[],
  options: { delayMs?: number; dropAfter?: number; hold?: boolean } = {},
): Promise<void> {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "x-content-type-options": "nosniff",
    "server-timing": "gfet4t7; dur=412",
  });
  for (const [i, data] of chunks.entries()) {
    if (options.dropAfter !== undefined && i >= options.dropAfter) {
      res.socket?.destroy();
      return;
    }
    res.write(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\r\n\r\n`);
    if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
    if (res.destroyed) return;
  }
  if (!options.hold) res.end();
}

/** An HTTP error answer in Google's shape: `{"error": {"code", "message", "status", "details"}}`. */
export function writeGoogleError(
  res: ServerResponse,
  code: number,
  status: string,
  message: string,
  details: unknown[] = [],
  headers: Record<string, string> = {},
): void {
  writeJsonError(
    res,
    code,
    { error: { code, message, status, ...(details.length ? { details } : {}) } },
    headers,
  );
}

/** The ErrorInfo detail Gemini sends with a wrong key (HTTP 400). */
export const API_KEY_INVALID = {
  "@type": "type.googleapis.com/google.rpc.ErrorInfo",
  reason: "API_KEY_INVALID",
  domain: "googleapis.com",
  metadata: { service: "generativelanguage.googleapis.com" },
};

/** The RetryInfo detail of a 429. */
export function retryInfo(delay: string) {
  return { "@type": "type.googleapis.com/google.rpc.RetryInfo", retryDelay: delay };
}
