/**
 * A downloaded page as text the model reads well. HTML becomes Markdown with turndown (headings, paragraphs, lists,
 * links, code blocks and tables' text survive; scripts, styles, navigation, forms and embedded media are dropped);
 * other text types are passed through. turndown (and the DOM it parses with) loads on the first page, not at start.
 */
import type TurndownService from "turndown";

/** Elements whose content is never the page's text. */
const DROPPED = [
  "head",
  "title",
  "script",
  "style",
  "noscript",
  "template",
  "nav",
  "iframe",
  "object",
  "embed",
  "svg",
  "canvas",
  "form",
  "button",
  "select",
  "input",
  "textarea",
  "dialog",
] as const;

let service: Promise<TurndownService> | undefined;
/** The page being converted, for links relative to it (a conversion is synchronous, so one at a time). */
let base: URL | undefined;

function absolute(href: string): string {
  try {
    return base ? new URL(href, base).href : href;
  } catch {
    return href;
  }
}

function turndown(): Promise<TurndownService> {
  service ??= import("turndown").then(({ default: Turndown }) => {
    const converter = new Turndown({
      headingStyle: "atx",
      codeBlockStyle: "fenced",
      bulletListMarker: "-",
      emDelimiter: "_",
    });
    converter.remove([...DROPPED]);
    // Images carry no text but their description; a data: URL would be kilobytes of noise.
    converter.addRule("image", {
      filter: "img",
      replacement: (_content, node) => {
        const alt = (node as { getAttribute(name: string): string | null }).getAttribute("alt")?.trim();
        return alt ? `[image: ${alt}]` : "";
      },
    });
    converter.addRule("link", {
      filter: (node) => node.nodeName === "A" && Boolean(node.getAttribute("href")),
      replacement: (content, node) => {
        const href = (node as { getAttribute(name: string): string | null }).getAttribute("href")!.trim();
        const text = content.replace(/\s+/g, " ").trim();
        if (href.startsWith("#") || /^javascript:/i.test(href)) return text;
        const target = absolute(href);
        return text ? `[${text}](${target})` : `<${target}>`;
      },
    });
    return converter;
  });
  return service;
}

export type PageKind = "html" | "text";

/** How a content type is read, or undefined for one that is not text. */
export function pageKind(contentType: string, body: Buffer): PageKind | undefined {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  if (type === "text/html" || type === "application/xhtml+xml") return "html";
  if (
    type.startsWith("text/") ||
    /^application\/([\w.+-]+\+)?(json|xml|javascript|ecmascript|x-sh|x-yaml|yaml|toml)$/.test(type)
  )
    return "text";
  if (type === "" || type === "application/octet-stream") {
    // No usable type: look at the bytes.
    const head = body.subarray(0, 1024).toString("utf8").trimStart().toLowerCase();
    if (head.startsWith("<!doctype html") || head.startsWith("<html")) return "html";
    if (!body.subarray(0, 4096).includes(0)) return "text";
  }
  return undefined;
}

/** The body as a string in the charset the content type names (UTF-8 when it names none or an unknown one). */
export function decodeBody(contentType: string, body: Buffer): string {
  const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  if (charset) {
    try {
      return new TextDecoder(charset).decode(body);
    } catch {
      // An unknown label: UTF-8 below.
    }
  }
  return new TextDecoder("utf-8").decode(body);
}

export function htmlTitle(html: string): string | undefined {
  const match = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html);
  const title = match?.[1]
    ?.replace(/\s+/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .trim();
  return title || undefined;
}

/** Markdown of `html`; links are made absolute against `pageUrl`. */
export async function htmlToMarkdown(html: string, pageUrl: string): Promise<string> {
  const converter = await turndown();
  base = new URL(pageUrl);
  try {
    return converter
      .turndown(html)
      .replace(/\n{3,}/g, "\n\n")
      .trim();
  } finally {
    base = undefined;
  }
}
