/**
 * Generates docs/errors.md from the error-code table (kernel/api/error-codes.ts).
 *
 *   npm run docs:errors   writes the file (npm run docs:events writes both generated pages)
 *   --check               exits 1 when the file is missing or differs from what would be written
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { errorCodes } from "../kernel/api/error-codes.js";

const target = fileURLToPath(new URL("../docs/errors.md", import.meta.url));

function render(): string {
  const lines = [
    "# Error codes",
    "",
    "This file is generated from `kernel/api/error-codes.ts` by `npm run docs:events`; do not edit it by hand.",
    "",
    "Every error KnightCode raises carries one of these codes in its `code` property (for example",
    "`KernelError`, `MissingServiceError`, `ExtensionStartupError`, the session store's errors). The message says",
    "what went wrong and where (file, line, extension, setting); the code is stable, so programs can match on it.",
    "",
    "| Code | Meaning |",
    "| --- | --- |",
    ...Object.entries(errorCodes).map(
      ([code, meaning]) => `| \`${code}\` | ${meaning.replace(/\|/g, "\\|")} |`,
    ),
  ];
  return `${lines.join("\n")}\n`;
}

const output = render();
if (process.argv.includes("--check")) {
  let existing: string | undefined;
  try {
    existing = readFileSync(target, "utf8");
  } catch {
    existing = undefined;
  }
  if (existing !== output) {
    console.error("docs/errors.md is stale: run npm run docs:events");
    process.exit(1);
  }
} else {
  writeFileSync(target, output);
  console.log("wrote docs/errors.md");
}
