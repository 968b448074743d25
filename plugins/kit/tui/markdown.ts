/**
 * Markdown: renders markdown to styled, wrapped lines. A small renderer of our own rather than a parser package:
 * headings, paragraphs, bullet and numbered lists (nested by indentation), fenced code blocks, block quotes,
 * horizontal rules, and inline bold, italic, strikethrough, code and links. Tables and HTML are shown as text.
 */
import type { Component } from "./component.js";
import { padLine } from "./text.js";
import { wrapTextWithAnsi } from "./width.js";

export interface MarkdownTheme {
  heading: (text: string) => string;
  link: (text: string) => string;
  linkUrl: (text: string) => string;
  code: (text: string) => string;
  codeBlock: (text: string) => string;
  codeBlockBorder: (text: string) => string;
  quote: (text: string) => string;
  quoteBorder: (text: string) => string;
  hr: (text: string) => string;
  listBullet: (text: string) => string;
  bold: (text: string) => string;
  italic: (text: string) => string;
  strikethrough: (text: string) => string;
  underline: (text: string) => string;
  highlightCode?: (code: string, lang?: string) => string[];
  codeBlockIndent?: string;
}

export interface DefaultTextStyle {
  color?: (text: string) => string;
  bgColor?: (text: string) => string;
  bold?: boolean;
  italic?: boolean;
  strikethrough?: boolean;
  underline?: boolean;
}

export class Markdown implements Component {
  private cache: { width: number; lines: string[] } | undefined;

  constructor(
    private text: string,
    private readonly paddingX: number,
    private readonly paddingY: number,
    private readonly theme: MarkdownTheme,
    private readonly defaultTextStyle?: DefaultTextStyle,
  ) {}

  setText(text: string): void {
    this.text = text;
    this.cache = undefined;
  }

  invalidate(): void {
    this.cache = undefined;
  }

  render(width: number): string[] {
    if (this.cache?.width === width) return this.cache.lines;
    const inner = Math.max(1, width - this.paddingX * 2);
    const margin = " ".repeat(this.paddingX);
    const body = this.text.trim() ? this.blocks(inner) : [];
    const blank = Array.from({ length: body.length ? this.paddingY : 0 }, () => "");
    const bg = this.defaultTextStyle?.bgColor;
    const lines = [...blank, ...body.map((l) => margin + l), ...blank].map((l) =>
      bg ? bg(padLine(l, width)) : l,
    );
    this.cache = { width, lines };
    return lines;
  }

  private blocks(width: number): string[] {
    const t = this.theme;
    const out: string[] = [];
    const source = this.text.replace(/\r\n?/g, "\n").split("\n");
    let paragraph: string[] = [];
    const flush = () => {
      if (paragraph.length) out.push(...wrapTextWithAnsi(this.inline(paragraph.join(" "), true), width));
      paragraph = [];
    };
    const gap = () => {
      if (out.length && out[out.length - 1] !== "") out.push("");
    };
    for (let i = 0; i < source.length; i++) {
      const line = source[i]!;
      const fence = /^(\s*)(```|~~~)\s*([\w+-]*)/.exec(line);
      if (fence) {
        flush();
        gap();
        const code: string[] = [];
        for (i++; i < source.length && !source[i]!.trimStart().startsWith(fence[2]!); i++)
          code.push(source[i]!);
        const lang = fence[3] || undefined;
        const indent = t.codeBlockIndent ?? "  ";
        const highlighted = t.highlightCode ? t.highlightCode(code.join("\n"), lang) : code.map(t.codeBlock);
        out.push(
          t.codeBlockBorder(`\`\`\`${lang ?? ""}`),
          ...highlighted.map((l) => indent + l),
          t.codeBlockBorder("```"),
        );
        gap();
        continue;
      }
      const heading = /^(#{1,6})\s+(.*)$/.exec(line);
      if (heading) {
        flush();
        gap();
        const level = heading[1]!.length;
        const text = this.inline(heading[2]!.replace(/\s+#+\s*$/, ""), false);
        const styled = level === 1 ? t.heading(t.bold(t.underline(text))) : t.heading(t.bold(text));
        out.push(...wrapTextWithAnsi(level > 2 ? `${"#".repeat(level)} ${styled}` : styled, width));
        gap();
        continue;
      }
      if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) {
        flush();
        out.push(t.hr("─".repeat(Math.min(width, 80))));
        continue;
      }
      const item = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/.exec(line);
      if (item) {
        flush();
        const depth = Math.floor(item[1]!.replace(/\t/g, "  ").length / 2);
        const bullet = /\d/.test(item[2]!) ? item[2]! : "•";
        const lead = `${"  ".repeat(depth)}${bullet} `;
        const wrapped = wrapTextWithAnsi(this.inline(item[3]!, true), Math.max(1, width - lead.length));
        wrapped.forEach((l, n) => {
          out.push(
            n === 0 ? `${"  ".repeat(depth)}${t.listBullet(bullet)} ${l}` : " ".repeat(lead.length) + l,
          );
        });
        continue;
      }
      const quote = /^\s*>\s?(.*)$/.exec(line);
      if (quote) {
        flush();
        for (const l of wrapTextWithAnsi(this.inline(quote[1]!, false), Math.max(1, width - 2)))
          out.push(`${t.quoteBorder("│")} ${t.quote(t.italic(l))}`);
        continue;
      }
      if (!line.trim()) {
        flush();
        gap();
        continue;
      }
      paragraph.push(line.trim());
    }
    flush();
    while (out[out.length - 1] === "") out.pop();
    return out;
  }

  /** Inline styles; code spans are set aside first so their contents stay literal. */
  private inline(text: string, defaultStyle: boolean): string {
    const t = this.theme;
    const spans: string[] = [];
    let s = text.replace(/`([^`]+)`/g, (_m, code: string) => {
      spans.push(t.code(code));
      return `\u0000${spans.length - 1}\u0000`;
    });
    s = s
      .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_m, label: string, url: string) =>
        label === url ? t.link(url) : `${t.link(t.underline(label))} ${t.linkUrl(`(${url})`)}`,
      )
      .replace(/\*\*([^*]+)\*\*|__([^_]+)__/g, (_m, a?: string, b?: string) => t.bold(a ?? b ?? ""))
      .replace(
        /(^|[^\w*])\*([^*\s][^*]*)\*|(^|\W)_([^_\s][^_]*)_(?=\W|$)/g,
        (_m, p1, a, p3, b) => `${p1 ?? p3 ?? ""}${t.italic(a ?? b ?? "")}`,
      )
      .replace(/~~([^~]+)~~/g, (_m, a: string) => t.strikethrough(a));
    // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal input and escape sequences are control characters
    s = s.replace(/\u0000(\d+)\u0000/g, (_m, n: string) => spans[Number(n)]!);
    return defaultStyle ? this.applyDefault(s) : s;
  }

  private applyDefault(text: string): string {
    const style = this.defaultTextStyle;
    if (!style) return text;
    let s = style.color ? style.color(text) : text;
    if (style.bold) s = this.theme.bold(s);
    if (style.italic) s = this.theme.italic(s);
    if (style.strikethrough) s = this.theme.strikethrough(s);
    if (style.underline) s = this.theme.underline(s);
    return s;
  }
}
