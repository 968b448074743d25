/**
 * Every complete extension shown in the docs (a ```typescript or ```ts block with `export default function`) is
 * written to a temp folder and loaded by the real loader through a real session: it must load without a failure
 * and register something.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { sessionInternals } from "../../hosts/sdk/session-internals.js";
import { createTestSession } from "../../testing.js";

const docsDir = resolve(dirname(fileURLToPath(import.meta.url)), "../../docs");

interface DocBlock {
  doc: string;
  index: number;
  code: string;
}

/** The fenced typescript blocks of a Markdown file that are whole extension modules, numbered from 1. */
function extensionBlocks(doc: string, markdown: string): DocBlock[] {
  const blocks: DocBlock[] = [];
  const fence = /^```(?:typescript|ts)[ \t]*\r?\n([\s\S]*?)^```[ \t]*$/gm;
  let index = 0;
  for (const match of markdown.matchAll(fence)) {
    const code = match[1] ?? "";
    if (!code.includes("export default function")) continue;
    index += 1;
    blocks.push({ doc, index, code });
  }
  return blocks;
}

const blocks = readdirSync(docsDir)
  .filter((name) => name.endsWith(".md"))
  .sort()
  .flatMap((name) => extensionBlocks(basename(name, ".md"), readFileSync(join(docsDir, name), "utf8")));

describe("docs: complete extension code blocks", () => {
  let dir: string;
  let baseline: number;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "kc-doc-blocks-"));
    const t = await createTestSession();
    try {
      baseline = sessionInternals(t.session).runtime.liveRegistrations();
    } finally {
      await t.dispose();
    }
  });

  after(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it("finds extension blocks in the docs", () => {
    expect(blocks.length).to.be.greaterThan(0);
  });

  for (const block of blocks) {
    it(`${block.doc}.md block ${block.index} loads and registers something`, async () => {
      const file = join(dir, `${block.doc}-${block.index}.ts`);
      writeFileSync(file, block.code);
      const t = await createTestSession({ extensions: [file] });
      try {
        const failures = sessionInternals(t.session).runtime.loadFailures.map((f) => f.message);
        expect(failures, `load failures of ${file}`).to.deep.equal([]);
        expect(sessionInternals(t.session).runtime.liveRegistrations()).to.be.greaterThan(baseline);
      } finally {
        await t.dispose();
      }
    });
  }
});
