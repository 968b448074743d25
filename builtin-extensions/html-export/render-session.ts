/**
 * The session as one self-contained HTML page: the active branch, root first, with every tool call next to its
 * result, nested calls, summaries and the places where the tree branches. The page holds no script and refers to
 * nothing outside itself; a Content-Security-Policy says so to the browser, so even a renderer's fragment cannot
 * load anything. Renderers that draw to HTML (`target: "html"`) are used; the rest is drawn here.
 */
import type {
  AgentMessage,
  AssistantMessage,
  EntryRenderer,
  MessageRenderer,
  NestedCalls,
  SessionEntry,
  SessionHeader,
  ToolCall,
  ToolRenderers,
  ToolResultMessage,
} from "@knightcodeai/cli/kit";
import { defaultCall, defaultResult } from "./default-tools.js";
import { escapeHtml, image, json, preview, stripAnsi, textBlock } from "./html.js";
import { STYLE } from "./style.js";

export interface SessionSnapshot {
  header: SessionHeader;
  name: string | undefined;
  /** Every entry of the session (for the branch points), in file order. */
  entries: readonly SessionEntry[];
  /** The active branch, root first. */
  branch: readonly SessionEntry[];
  label(id: string): string | undefined;
}

export interface RenderSources {
  cwd: string;
  tool(name: string): ToolRenderers | undefined;
  message(customType: string): MessageRenderer | undefined;
  entry(customType: string): EntryRenderer | undefined;
  /** A renderer failed; the export went on with the default drawing. */
  warn(message: string): void;
  now: Date;
}

/** The custom entry the agent loop records the system prompt and tool set in. */
const SYSTEM_ENTRY = "knightcode.system";

const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

export function renderSessionHtml(session: SessionSnapshot, sources: RenderSources): string {
  const title = session.name ?? `Session ${session.header.id}`;
  const body = new BranchRenderer(session, sources).render();
  return [
    "<!doctype html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${CSP}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="generator" content="KnightCode">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${STYLE}</style>`,
    "</head>",
    "<body>",
    "<main>",
    `<header class="session"><h1>${escapeHtml(title)}</h1><dl>${[
      ["Session", session.header.id],
      ["Folder", session.header.cwd],
      ["Started", session.header.timestamp],
      ["Exported", sources.now.toISOString()],
      ["Entries", `${session.branch.length} on this branch, ${session.entries.length} in the session`],
    ]
      .map(([k, v]) => `<dt>${escapeHtml(k!)}</dt><dd>${escapeHtml(v!)}</dd>`)
      .join("")}</dl></header>`,
    body,
    "</main>",
    "</body>",
    "</html>",
    "",
  ].join("\n");
}

class BranchRenderer {
  /** Children of each entry (`null`: the roots), for the branch points. */
  private readonly children = new Map<string | null, SessionEntry[]>();
  /** Results on the branch by call id, so each call is drawn with its result. */
  private readonly results = new Map<string, ToolResultMessage>();
  /** Call ids drawn already: their result entries are not drawn again. */
  private readonly drawn = new Set<string>();
  private readonly onBranch: Set<string>;
  private readonly failed = new Set<string>();
  private readonly resolved = new Map<string, ToolRenderers | undefined>();

  constructor(
    private readonly session: SessionSnapshot,
    private readonly sources: RenderSources,
  ) {
    for (const entry of session.entries) {
      const siblings = this.children.get(entry.parentId);
      if (siblings) siblings.push(entry);
      else this.children.set(entry.parentId, [entry]);
    }
    for (const entry of session.branch) {
      if (entry.type === "message" && entry.message.role === "toolResult") {
        this.results.set(entry.message.toolCallId, entry.message);
      }
    }
    this.onBranch = new Set(session.branch.map((e) => e.id));
  }

  render(): string {
    if (this.session.branch.length === 0) return `<p class="note">This session has no entries yet.</p>`;
    const out: string[] = [this.branchPoint(null)];
    for (const entry of this.session.branch) {
      const html = this.entry(entry);
      if (html) {
        const label = this.session.label(entry.id);
        out.push(
          `<section class="entry entry-${escapeHtml(entry.type)}" id="entry-${escapeHtml(entry.id)}">` +
            (label ? `<p class="label">${escapeHtml(label)}</p>` : "") +
            html +
            "</section>",
        );
      }
      // A label entry is not a step of the conversation: its parent reports what continues through it.
      if (entry.type !== "label") out.push(this.branchPoint(entry.id));
    }
    return out.filter((html) => html !== "").join("\n");
  }

  /** Where more than one entry continues from `parentId`: how many, and which one this page follows. */
  private branchPoint(parentId: string | null): string {
    const next = this.continuations(parentId);
    if (next.length < 2) return "";
    const where = parentId === null ? "at the start of the session" : `after entry ${parentId}`;
    const others = next.length - 1;
    // Moving back to an earlier entry makes it the leaf: then the page ends before every continuation.
    const followedOne = next.some((child) => this.onBranch.has(child.id));
    const items = next.map((child) => {
      const followed = this.onBranch.has(child.id);
      const label = this.session.label(child.id);
      return (
        `<li${followed ? ' class="followed"' : ""}><code>${escapeHtml(child.id)}</code> ` +
        `${escapeHtml(describe(child))}` +
        (label ? ` <span class="label">${escapeHtml(label)}</span>` : "") +
        (followed ? " <em>(shown here)</em>" : "") +
        "</li>"
      );
    });
    return (
      `<aside class="branch-point"><p>The session branches ${escapeHtml(where)}: ` +
      `${next.length} continuations; ${
        followedOne
          ? `this page follows one of them, ${others} other${others === 1 ? " is" : "s are"} in the session file`
          : "this page ends here, the continuations are in the session file"
      }.</p><ul>${items.join("")}</ul></aside>`
    );
  }

  /** The entries that continue from `parentId`, looking through label entries (`navigateTree` may add one). */
  private continuations(parentId: string | null): SessionEntry[] {
    return (this.children.get(parentId) ?? []).flatMap((child) =>
      child.type === "label" ? this.continuations(child.id) : [child],
    );
  }

  private entry(entry: SessionEntry): string {
    switch (entry.type) {
      case "message":
        return this.message(entry.message);
      case "compaction":
        return (
          `<h2>Compaction summary</h2>${textBlock(entry.summary, "summary")}` +
          `<p class="note">Replaced ${entry.tokensBefore} tokens of earlier context; the model kept the entries from ` +
          `<a href="#entry-${escapeHtml(entry.firstKeptEntryId)}">${escapeHtml(entry.firstKeptEntryId)}</a> on` +
          `${entry.fromHook ? " (summary supplied by an extension)" : ""}.</p>`
        );
      case "branch_summary":
        return (
          `<h2>Branch summary</h2>${textBlock(entry.summary, "summary")}` +
          `<p class="note">Summary of the branch left at entry ${escapeHtml(entry.fromId)}` +
          `${entry.fromHook ? " (supplied by an extension)" : ""}.</p>`
        );
      case "custom_message":
        return entry.display ? this.custom(entry.customType, entry.content, entry.details) : "";
      case "custom":
        if (entry.customType === SYSTEM_ENTRY) return this.system(entry.data);
        return this.customEntry(entry);
      case "model_change":
        return `<p class="meta">Model: ${escapeHtml(`${entry.provider}/${entry.modelId}`)}</p>`;
      case "thinking_level_change":
        return `<p class="meta">Thinking level: ${escapeHtml(entry.thinkingLevel)}</p>`;
      case "session_info":
        return entry.name ? `<p class="meta">Session named “${escapeHtml(entry.name)}”</p>` : "";
      case "context_edit":
        return `<p class="meta">Later requests ${
          entry.replacement === null ? "leave out" : "replace"
        } the message of entry ${escapeHtml(entry.targetId)}.</p>`;
      case "label":
        // Shown on the entry it labels.
        return "";
      default:
        return `<pre class="args">${escapeHtml(json(entry))}</pre>`;
    }
  }

  private message(message: AgentMessage): string {
    switch (message.role) {
      case "user":
        return `<h2 class="user">User</h2>${content(message.content)}`;
      case "assistant":
        return this.assistant(message);
      case "toolResult":
        if (this.drawn.has(message.toolCallId)) return "";
        // A result whose call is not on this branch (a damaged file, say) is still shown.
        return `<h2 class="tool">Tool result</h2>${this.tool(undefined, message)}`;
      case "custom":
        return message.display ? this.custom(message.customType, message.content, message.details) : "";
      default:
        return `<pre class="args">${escapeHtml(json(message))}</pre>`;
    }
  }

  private assistant(message: AssistantMessage): string {
    const parts = [
      `<h2 class="assistant">Assistant <span class="model">${escapeHtml(`${message.provider}/${message.model}`)}</span></h2>`,
    ];
    for (const block of message.content) {
      if (block.type === "text") parts.push(textBlock(block.text));
      else if (block.type === "thinking") {
        parts.push(
          `<details class="thinking"><summary>Thinking</summary>${
            block.redacted
              ? `<p class="note">(redacted by the provider)</p>`
              : textBlock(block.thinking, "thinking")
          }</details>`,
        );
      } else if (block.type === "toolCall") {
        this.drawn.add(block.id);
        parts.push(this.tool(block, this.results.get(block.id)));
      }
    }
    if (message.stopReason === "error" || message.stopReason === "aborted") {
      parts.push(
        `<p class="error">${message.stopReason === "aborted" ? "Stopped" : "Failed"}${
          message.errorMessage ? `: ${escapeHtml(message.errorMessage)}` : ""
        }</p>`,
      );
    }
    return parts.join("");
  }

  /** A call with its result (either may be missing). */
  private tool(call: ToolCall | undefined, result: ToolResultMessage | undefined): string {
    const name = call?.name ?? result?.toolName ?? "tool";
    const renderers = this.renderers(name);
    const isError = result?.isError === true;
    const options = {
      expanded: true,
      isPartial: false,
      isError,
      cwd: this.sources.cwd,
      target: "html" as const,
    };
    const parts: string[] = [];
    if (call) {
      const drawn = renderers?.renderCall
        ? this.draw(`renderCall of tool "${name}"`, () => renderers.renderCall!(call.arguments, options))
        : undefined;
      parts.push(`<div class="tool-call">${drawn ?? defaultCall(name, call.arguments ?? {})}</div>`);
    }
    if (result) {
      const drawn = renderers?.renderResult
        ? this.draw(`renderResult of tool "${name}"`, () =>
            renderers.renderResult!(
              {
                content: result.content,
                details: result.details,
                isError,
                ...(result.structuredContent !== undefined
                  ? { structuredContent: result.structuredContent }
                  : {}),
                ...(result.nestedCalls ? { nestedCalls: result.nestedCalls } : {}),
              },
              options,
            ),
          )
        : undefined;
      parts.push(`<div class="tool-result">${drawn ?? defaultResult(result)}</div>`);
      if (result.nestedCalls) parts.push(nested(result.nestedCalls));
    } else if (call) {
      parts.push(`<p class="note">No result on this branch.</p>`);
    }
    return `<div class="tool-block${isError ? " tool-error" : ""}">${parts.join("")}</div>`;
  }

  private custom(customType: string, body: unknown, details: unknown): string {
    const renderer = this.sources.message(customType);
    const drawn = renderer
      ? this.draw(`message renderer of "${customType}"`, () =>
          renderer({ customType, content: body, details }, { expanded: true, target: "html" }),
        )
      : undefined;
    return `<h2 class="custom">${escapeHtml(customType)}</h2>${
      drawn ?? (isContent(body) ? content(body) : textBlock(json(body)))
    }`;
  }

  /** Extension data is shown only when its extension registered a renderer for it. */
  private customEntry(entry: Extract<SessionEntry, { type: "custom" }>): string {
    const renderer = this.sources.entry(entry.customType);
    if (!renderer) return "";
    const drawn = this.draw(`entry renderer of "${entry.customType}"`, () =>
      renderer(entry, { expanded: true, target: "html" }),
    );
    return drawn === undefined ? "" : `<h2 class="custom">${escapeHtml(entry.customType)}</h2>${drawn}`;
  }

  private system(data: unknown): string {
    const state = (data ?? {}) as { systemPrompt?: unknown; tools?: unknown };
    const tools = Array.isArray(state.tools)
      ? (state.tools as { name?: unknown; description?: unknown }[])
      : [];
    return (
      `<details class="system"><summary>System prompt and ${tools.length} tool${tools.length === 1 ? "" : "s"}</summary>` +
      (typeof state.systemPrompt === "string" ? textBlock(state.systemPrompt, "summary") : "") +
      `<ul>${tools
        .map(
          (t) =>
            `<li><code>${escapeHtml(String(t.name))}</code> ${escapeHtml(preview(String(t.description ?? ""), 160))}</li>`,
        )
        .join("")}</ul></details>`
    );
  }

  /** Resolvers run once per tool name; one that throws is reported once and the default drawing is used. */
  private renderers(name: string): ToolRenderers | undefined {
    if (!this.resolved.has(name)) {
      let found: ToolRenderers | undefined;
      try {
        found = this.sources.tool(name);
      } catch (error) {
        this.report(`tool renderer resolver for "${name}"`, error);
      }
      this.resolved.set(name, found);
    }
    return this.resolved.get(name);
  }

  /** What a renderer drew: an `{html}` fragment as it is, a string as escaped text, else undefined. */
  private draw(what: string, render: () => unknown): string | undefined {
    let drawn: unknown;
    try {
      drawn = render();
    } catch (error) {
      this.report(what, error);
      return undefined;
    }
    if (typeof drawn === "string") return textBlock(stripAnsi(drawn), "rendered");
    if (
      typeof drawn === "object" &&
      drawn !== null &&
      typeof (drawn as { html?: unknown }).html === "string"
    ) {
      return (drawn as { html: string }).html;
    }
    return undefined;
  }

  private report(what: string, error: unknown): void {
    if (this.failed.has(what)) return;
    this.failed.add(what);
    this.sources.warn(
      `${what} failed (${error instanceof Error ? error.message : String(error)}); drawn the default way`,
    );
  }
}

type Content = string | readonly { type: string; text?: string; data?: string; mimeType?: string }[];

/** Message content as the session stores it: a string or an array of parts (an extension may store anything). */
function isContent(body: unknown): body is Content {
  return (
    typeof body === "string" ||
    (Array.isArray(body) && body.every((part) => typeof part === "object" && part !== null && "type" in part))
  );
}

function content(body: Content): string {
  if (typeof body === "string") return textBlock(body);
  return body
    .map((c) =>
      c.type === "text" ? textBlock(c.text ?? "") : c.type === "image" ? image(c.mimeType, c.data) : "",
    )
    .join("");
}

function nested(record: NestedCalls): string {
  const items = record.calls.map((call) => {
    const status = `<span class="status status-${escapeHtml(call.status)}">${escapeHtml(call.status)}</span>`;
    const duration =
      typeof call.durationMs === "number" ? ` <span class="note">${call.durationMs} ms</span>` : "";
    const args =
      call.arguments !== undefined
        ? `<pre class="args">${escapeHtml(json(call.arguments))}</pre>`
        : `<p class="note">(arguments left out: over the size limit)</p>`;
    const error = call.error ? `<p class="error">${escapeHtml(call.error)}</p>` : "";
    return `<li><code>${escapeHtml(call.toolName)}</code> ${status}${duration}${args}${error}</li>`;
  });
  const count = `${record.calls.length} nested call${record.calls.length === 1 ? "" : "s"}`;
  return `<details class="nested" open><summary>${count}${
    record.complete ? "" : " (some were left out to stay within the limits)"
  }</summary><ol>${items.join("")}</ol></details>`;
}

/** A short description of an entry for the branch-point list. */
function describe(entry: SessionEntry): string {
  if (entry.type === "message") {
    const m = entry.message;
    if (m.role === "user") return `user: ${preview(textOf(m.content))}`;
    if (m.role === "assistant") {
      return `assistant: ${preview(m.content.map((c) => (c.type === "text" ? c.text : "")).join(" "))}`;
    }
    if (m.role === "toolResult") return `result of ${m.toolName}`;
    return m.role === "custom" ? `${m.customType} message` : "message";
  }
  if (entry.type === "branch_summary") return `branch summary: ${preview(entry.summary)}`;
  if (entry.type === "compaction") return `compaction summary: ${preview(entry.summary)}`;
  return entry.type.replace(/_/g, " ");
}

function textOf(body: string | readonly { type: string; text?: string }[]): string {
  return typeof body === "string" ? body : body.map((c) => c.text ?? "").join(" ");
}
