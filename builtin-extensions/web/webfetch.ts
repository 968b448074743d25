/**
 * The `webfetch` tool: GET one http(s) URL and hand the model the page as readable text (Markdown for HTML). Bounded
 * twice: at most `maxBytes` of body are downloaded (default 2 MB), and at most the kit's 50 KB / 2,000 lines of text
 * reach the model; the whole text then goes to a private temp file named in the notice, as `bash` does with long
 * output. Private, loopback and link-local addresses are refused unless `allowPrivate` is set (address-guard.ts).
 */
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_LINES,
  type ExtensionContext,
  formatSize,
  privateTempPath,
  type Static,
  type ToolDefinition,
  Type,
  truncateHead,
  writePrivateFile,
} from "@knightcodeai/cli/kit";
import { FetchRefusedError, MAX_REDIRECTS } from "./fetch-refusal.js";
import type { GetResult } from "./http-get.js";
import { decodeBody, htmlTitle, htmlToMarkdown, pageKind } from "./page-text.js";
import { booleanSetting, deadline, numberSetting, readValues, stringSetting, timedOut } from "./settings.js";

export const FETCH_SETTINGS = "webfetch";
/** HTML converts at about a second per megabyte on a slow machine, and the conversion holds the event loop. */
export const DEFAULT_FETCH_MAX_BYTES = 2 * 1024 * 1024;
export const DEFAULT_FETCH_TIMEOUT_SECONDS = 30;

export const FETCH_SETTINGS_KEYS: Record<string, string> = {
  allowPrivate:
    "true lets webfetch reach private, loopback and link-local addresses (localhost, 10.x, 192.168.x, ...); default false",
  allowHosts:
    "Hosts webfetch may reach even at a private address, as host or host:port, separated by commas (localhost:3000)",
  maxBytes: `Most bytes of a page downloaded (default ${DEFAULT_FETCH_MAX_BYTES})`,
  timeoutSeconds: `How long one fetch may take, redirects included (default ${DEFAULT_FETCH_TIMEOUT_SECONDS})`,
};

const schema = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 4096, description: "The http or https URL to read" }),
});

export interface WebFetchDetails {
  url: string;
  finalUrl: string;
  status: number;
  contentType: string;
  /** Bytes of body read (after decompression). */
  bytes: number;
  /** The download stopped at `maxBytes`. */
  downloadCut: boolean;
  title?: string;
  /** The text was over the output limit; the model got its beginning. */
  truncated: boolean;
  fullTextPath?: string;
}

export async function fetchPage(
  ctx: ExtensionContext,
  params: Static<typeof schema>,
  signal: AbortSignal | undefined,
): Promise<{ text: string; details: WebFetchDetails }> {
  const settings = readValues(ctx, FETCH_SETTINGS);
  const allowPrivate = booleanSetting(FETCH_SETTINGS, settings, "allowPrivate");
  const hosts = settings.values.allowHosts;
  const allowHosts = new Set(
    (Array.isArray(hosts) ? hosts.join(",") : (stringSetting(FETCH_SETTINGS, settings, "allowHosts") ?? ""))
      .split(/[\s,]+/)
      .map((entry) => entry.trim().toLowerCase())
      .filter(Boolean),
  );
  const maxBytes = numberSetting(
    FETCH_SETTINGS,
    settings,
    "maxBytes",
    DEFAULT_FETCH_MAX_BYTES,
    100 * 1024 * 1024,
  );
  const seconds = numberSetting(
    FETCH_SETTINGS,
    settings,
    "timeoutSeconds",
    DEFAULT_FETCH_TIMEOUT_SECONDS,
    600,
  );
  let url: URL;
  try {
    url = new URL(params.url.trim());
  } catch {
    throw new Error(
      `webfetch: not a URL: ${JSON.stringify(params.url)} (give a full http:// or https:// URL)`,
    );
  }
  const limit = deadline(signal, seconds);
  let page: GetResult;
  try {
    // Node's http, https and zlib modules and the address guard load with the first fetch, not with every session.
    const { httpGet } = await import("./http-get.js");
    page = await httpGet(url, { allowPrivate, allowHosts, maxBytes: Math.floor(maxBytes), signal: limit });
  } catch (error) {
    if (error instanceof FetchRefusedError) throw error;
    if (timedOut(limit, signal)) {
      throw new Error(
        `webfetch: ${url.href} did not finish within ${seconds} s (the webfetch "timeoutSeconds" setting)`,
      );
    }
    if (signal?.aborted) throw new Error("webfetch: aborted");
    const code = (error as NodeJS.ErrnoException).code;
    throw new Error(
      `webfetch: could not fetch ${url.href}: ${(error as Error).message}${code ? ` (${code})` : ""}`,
    );
  }
  const kind = pageKind(page.contentType, page.body);
  if (!kind) {
    throw new Error(
      `webfetch: ${page.url} is ${page.contentType || "of no stated type"} (HTTP ${page.status}), not a text or ` +
        "HTML page; webfetch reads text only",
    );
  }
  const source = decodeBody(page.contentType, page.body);
  const title = kind === "html" ? htmlTitle(source) : undefined;
  const body = kind === "html" ? await htmlToMarkdown(source, page.url) : source.trim();
  if (page.status < 200 || page.status >= 300) {
    const excerpt = body.replace(/\s+/g, " ").slice(0, 300);
    throw new Error(
      `webfetch: ${page.url} answered HTTP ${page.status} ${page.statusText}`.trim() +
        (excerpt ? `: ${excerpt}` : ""),
    );
  }
  const header = [`URL: ${page.url}`];
  if (page.redirects.length > 0) header.push(`Redirected from: ${page.redirects[0]}`);
  if (title) header.push(`Title: ${title}`);
  const full = `${header.join("\n")}\n\n${body || "(the page has no text)"}`;
  const kept = truncateHead(full, { maxBytes: DEFAULT_MAX_BYTES, maxLines: DEFAULT_MAX_LINES });
  const notices: string[] = [];
  let fullTextPath: string | undefined;
  if (kept.truncated) {
    let where: string;
    try {
      fullTextPath = privateTempPath("webfetch", "md");
      await writePrivateFile(fullTextPath, full);
      where = `The full text is in ${fullTextPath}`;
    } catch (error) {
      fullTextPath = undefined;
      where = `The full text could not be kept (${(error as Error).message})`;
    }
    notices.push(
      `[Page text truncated: the first ${kept.outputLines} of ${kept.totalLines} lines ` +
        `(${formatSize(kept.outputBytes)} of ${formatSize(kept.totalBytes)}) are shown. ${where}; read it with offsets.]`,
    );
  }
  if (page.cut)
    notices.push(`[Download stopped at ${formatSize(maxBytes)}: the rest of the page was not read.]`);
  // A line longer than the limit (minified JSON, a one-line page) would leave little or nothing as whole lines:
  // then the text's first bytes are shown instead.
  const shown =
    kept.truncated && kept.outputBytes < DEFAULT_MAX_BYTES / 2
      ? firstBytes(full, DEFAULT_MAX_BYTES)
      : kept.content;
  return {
    text: [shown, ...notices].filter(Boolean).join("\n\n"),
    details: {
      url: url.href,
      finalUrl: page.url,
      status: page.status,
      contentType: page.contentType,
      bytes: page.body.length,
      downloadCut: page.cut,
      ...(title ? { title } : {}),
      truncated: kept.truncated,
      ...(fullTextPath ? { fullTextPath } : {}),
    },
  };
}

export const webfetchTool: ToolDefinition<typeof schema, WebFetchDetails> = {
  name: "webfetch",
  label: "web fetch",
  description: [
    "Fetch a web page by its http(s) URL and get its text as Markdown (scripts, styles and navigation removed).",
    `Follows up to ${MAX_REDIRECTS} redirects. Long pages are cut; the notice names a file with the whole text.`,
    "Local and private network addresses are refused.",
  ].join(" "),
  promptSnippet: "webfetch: read a web page as Markdown",
  parameters: schema,
  annotations: {
    title: "Fetch a web page",
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: true,
  },
  async execute(_id, params, signal, _onUpdate, ctx) {
    const { text, details } = await fetchPage(ctx, params, signal);
    return { content: [{ type: "text", text }], details };
  },
};

/** The first `maxBytes` bytes of `text`, ending on a character boundary. */
function firstBytes(text: string, maxBytes: number): string {
  const buffer = Buffer.from(text.slice(0, maxBytes), "utf8");
  let end = Math.min(maxBytes, buffer.length);
  while (end > 0 && end < buffer.length && (buffer[end]! & 0xc0) === 0x80) end--;
  return buffer.subarray(0, end).toString("utf8");
}
