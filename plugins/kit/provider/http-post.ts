/**
 * The HTTP plumbing providers that speak a JSON-over-SSE API share: one POST whose answer's body is read as it
 * arrives, the body read whole (for an error), and the answer's headers as a plain record. `node:http` (or
 * `node:https`) loads with the first request, so a run that sends none never loads it.
 */
import type { IncomingHttpHeaders, IncomingMessage } from "node:http";

/** POSTs `body` to `url`; resolves with the answer's head, whose body the caller reads from the message. */
export async function postRequest(
  url: URL,
  body: string,
  headers: Record<string, string>,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const { request } = url.protocol === "https:" ? await import("node:https") : await import("node:http");
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method: "POST", headers, signal }, resolve);
    outgoing.on("error", reject);
    outgoing.end(body);
  });
}

/** A body read whole as UTF-8 text. */
export async function readBodyText(message: AsyncIterable<Uint8Array | string>): Promise<string> {
  let text = "";
  const decoder = new TextDecoder();
  for await (const chunk of message)
    text += typeof chunk === "string" ? chunk : decoder.decode(chunk, { stream: true });
  return text + decoder.decode();
}

/** An answer's headers as a record of strings (repeated headers joined with `, `). */
export function headerRecord(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return flat;
}
