/**
 * The one HTTP GET `webfetch` makes: http and https only, redirects followed by hand (each hop checked again, at
 * most `MAX_REDIRECTS`), every connection through the address guard unless private addresses are allowed, the body
 * decompressed and read up to a byte limit, and the whole exchange bounded by one deadline.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { pipeline, type Readable, type Transform } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { guardedLookup, literalAddress, RefusedAddressError, refusedAddressKind } from "./address-guard.js";
import { FetchRefusedError, MAX_REDIRECTS } from "./fetch-refusal.js";

export { FetchRefusedError, MAX_REDIRECTS };

export interface GetOptions {
  allowPrivate: boolean;
  /** `host` or `host:port` entries reachable even at a private address (a dev server on localhost). */
  allowHosts: ReadonlySet<string>;
  /** Most bytes of (decompressed) body kept; reading stops there. */
  maxBytes: number;
  signal: AbortSignal;
}

export interface GetResult {
  url: string;
  /** Every URL that answered with a redirect, in order. */
  redirects: string[];
  status: number;
  statusText: string;
  contentType: string;
  body: Buffer;
  /** The body was longer than `maxBytes`; `body` holds its beginning. */
  cut: boolean;
}

const PRIVATE_HINT =
  "private, loopback and link-local addresses are refused; the webfetch settings allowHosts (host:port entries) " +
  "and allowPrivate (true: all of them) in tools.json allow them";

/** Whether the settings let `url` reach a private address. */
export function privateAllowed(url: URL, options: Pick<GetOptions, "allowPrivate" | "allowHosts">): boolean {
  if (options.allowPrivate) return true;
  const host = url.hostname.toLowerCase();
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  return options.allowHosts.has(host) || options.allowHosts.has(`${host}:${port}`);
}

/** Checks a URL before connecting: its scheme, and its host when that is an IP address (names go through DNS). */
export function checkUrl(url: URL, allowPrivate: boolean): void {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new FetchRefusedError(
      `webfetch reads only http and https URLs; ${url.protocol.replace(/:$/, "")}: is refused (${url.href})`,
    );
  }
  if (url.username || url.password) {
    throw new FetchRefusedError(`webfetch refuses URLs with credentials in them (${url.host})`);
  }
  const literal = literalAddress(url.hostname);
  if (literal && !allowPrivate) {
    const kind = refusedAddressKind(literal);
    if (kind)
      throw new FetchRefusedError(`webfetch refuses ${url.href}: ${literal} is ${kind} (${PRIVATE_HINT})`);
  }
}

export async function httpGet(start: URL, options: GetOptions): Promise<GetResult> {
  const redirects: string[] = [];
  let url = start;
  for (;;) {
    const allowed = privateAllowed(url, options);
    checkUrl(url, allowed);
    const response = await open(url, allowed, options.signal);
    const location = response.headers.location;
    if (response.statusCode && [301, 302, 303, 307, 308].includes(response.statusCode) && location) {
      response.resume();
      if (redirects.length >= MAX_REDIRECTS) {
        throw new FetchRefusedError(
          `webfetch stopped after ${MAX_REDIRECTS} redirects (${[...redirects, url.href].join(" → ")})`,
        );
      }
      redirects.push(url.href);
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new FetchRefusedError(`${url.href} redirects to a malformed URL: ${JSON.stringify(location)}`);
      }
      url = next;
      continue;
    }
    const { body, cut } = await readBody(response, options.maxBytes);
    return {
      url: url.href,
      redirects,
      status: response.statusCode ?? 0,
      statusText: response.statusMessage ?? "",
      contentType: String(response.headers["content-type"] ?? ""),
      body,
      cut,
    };
  }
}

function open(url: URL, allowPrivate: boolean, signal: AbortSignal): Promise<IncomingMessage> {
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: "GET",
        signal,
        headers: {
          "user-agent": "KnightCode-webfetch/1 (+https://www.npmjs.com/package/@knightcodeai/cli)",
          accept: "text/html,application/xhtml+xml,text/plain;q=0.9,text/*;q=0.8,*/*;q=0.5",
          "accept-encoding": "gzip, deflate, br",
        },
        ...(allowPrivate ? {} : { lookup: guardedLookup as never }),
      },
      resolve,
    );
    req.on("error", (error) => {
      if (error instanceof RefusedAddressError) {
        reject(new FetchRefusedError(`webfetch refuses ${url.href}: ${error.message} (${PRIVATE_HINT})`));
      } else reject(error);
    });
    req.end();
  });
}

function decoded(response: IncomingMessage): Readable {
  const encoding = String(response.headers["content-encoding"] ?? "")
    .trim()
    .toLowerCase();
  const decoder: Transform | undefined =
    encoding === "gzip" || encoding === "x-gzip"
      ? createGunzip()
      : encoding === "deflate"
        ? createInflate()
        : encoding === "br"
          ? createBrotliDecompress()
          : undefined;
  // pipeline() carries a failure of the download (an abort, a reset) into the decompressor the reader waits on.
  return decoder ? pipeline(response, decoder, () => {}) : response;
}

async function readBody(
  response: IncomingMessage,
  maxBytes: number,
): Promise<{ body: Buffer; cut: boolean }> {
  const stream = decoded(response);
  const chunks: Buffer[] = [];
  let size = 0;
  let cut = false;
  try {
    for await (const chunk of stream) {
      const buffer = chunk as Buffer;
      if (size + buffer.length > maxBytes) {
        chunks.push(buffer.subarray(0, maxBytes - size));
        size = maxBytes;
        cut = true;
        break;
      }
      chunks.push(buffer);
      size += buffer.length;
    }
  } finally {
    // Stop the download (and the decompressor) once enough is read, or on any failure.
    if (stream !== response) stream.destroy();
    response.destroy();
  }
  return { body: Buffer.concat(chunks, size), cut };
}
