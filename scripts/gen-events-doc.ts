/**
 * Generates docs/events.md from the event catalogue (kernel/events/catalog.ts).
 *
 *   npm run docs:events   writes the file
 *   npm run docs:check    exits 1 when the file is missing or differs from what would be written
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type EventFamily, type EventSpec, eventCatalog } from "../kernel/events/catalog.js";

const target = fileURLToPath(new URL("../docs/events.md", import.meta.url));

// Meanings follow the doc comments on EventKind and ErrorPolicy in catalog.ts.
const kinds: ReadonlyArray<readonly [string, string]> = [
  ["notify", "Handlers are told that something happened; their return value is ignored."],
  [
    "transform",
    "Handlers form a chain: each sees the previous handler's result, and returning `undefined` keeps the value.",
  ],
  ["gate", "The first handler that returns a decision wins; the handlers after it do not run."],
  ["lastWins", "Every handler runs; the last one that returns a value wins."],
  [
    "boundary",
    "Handlers accumulate `{entries, continue, end}`: each sees the entries and `continue` so far and may return new ones; once a handler sets `end` it stays set.",
  ],
];

const policies: ReadonlyArray<readonly [string, string]> = [
  [
    "report",
    "A handler that throws is reported as `extension_error`, naming the extension and the event; the other handlers still run.",
  ],
  [
    "fail-closed",
    "A handler that throws is reported and its error counts as the event's refusal (block, cancel, untrusted).",
  ],
  [
    "propagate",
    "An `ExtensionStartupError` stops the dispatch and reaches the host; any other error is reported.",
  ],
];

/** Makes text safe inside a Markdown table cell. */
function cell(text: string): string {
  return text.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");
}

function notes(spec: EventSpec): string {
  const parts = [spec.description];
  if (spec.hot) parts.push("Hot: payload skipped when nobody listens.");
  if (spec.participants) parts.push(`Only ${spec.participants.join(", ")} extensions may subscribe.`);
  if (spec.fields) {
    parts.push(
      spec.fields.length
        ? `Wire fields: ${spec.fields.map((f) => `\`${f}\``).join(", ")}.`
        : "Wire fields: none.",
    );
  }
  return parts.join(" ");
}

function render(): string {
  const lines: string[] = [
    "# Events",
    "",
    "This file is generated from `kernel/events/catalog.ts` by `npm run docs:events`; do not edit it by hand.",
    "To change an event, edit the catalogue and regenerate. `npm run docs:check` (part of `npm test`) fails",
    "when this file and the catalogue disagree.",
    "",
    "## Kinds",
    "",
    "The kind of an event decides how the results of its handlers are combined.",
    "",
    ...kinds.map(([name, meaning]) => `- \`${name}\`: ${meaning}`),
    "",
    "## Error policies",
    "",
    "The error policy of an event decides what happens when one of its handlers throws.",
    "",
    ...policies.map(([name, meaning]) => `- \`${name}\`: ${meaning}`),
    "",
    "In the tables below, Wire is `json` for events written to the JSON event stream (and so also to RPC),",
    "`rpc` for events written only to RPC, and blank for events that stay in-process.",
  ];

  // Group by family; a Map keeps the order in which families first appear in the catalogue.
  const families = new Map<EventFamily, Array<[string, EventSpec]>>();
  for (const [name, spec] of Object.entries(eventCatalog) as Array<[string, EventSpec]>) {
    const rows = families.get(spec.family) ?? [];
    rows.push([name, spec]);
    families.set(spec.family, rows);
  }

  for (const [family, rows] of families) {
    lines.push(
      "",
      `## ${family}`,
      "",
      "| Event | Kind | Error policy | Wire | Notes |",
      "| --- | --- | --- | --- | --- |",
    );
    for (const [name, spec] of rows) {
      const wire = spec.wire ?? "";
      lines.push(
        `| \`${cell(name)}\` | ${spec.kind} | ${spec.errorPolicy} | ${wire} | ${cell(notes(spec))} |`,
      );
    }
  }

  return `${lines.join("\n")}\n`;
}

function readExisting(): string | undefined {
  try {
    return readFileSync(target, "utf8");
  } catch {
    return undefined;
  }
}

const output = render();
if (process.argv.includes("--check")) {
  if (readExisting() !== output) {
    console.error("docs/events.md is stale: run npm run docs:events");
    process.exit(1);
  }
} else {
  writeFileSync(target, output);
  console.log("wrote docs/events.md");
}
