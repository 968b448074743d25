import { parseFrontmatter } from "@knightcodeai/cli/kit";
import { expect } from "chai";

describe("kit parseFrontmatter", () => {
  it("reads YAML: quotes with escapes, comments, block scalars, nested maps and lists; the body stays as it is", async () => {
    const parsed = await parseFrontmatter(
      [
        "---",
        "# a comment",
        'name: "pdf-forms"',
        "description: >",
        "  Fill PDF forms.",
        "  Use for any .pdf file.",
        "notes: |",
        "  line one",
        "  line two",
        "license: 'it''s MIT'",
        'escaped: "tab\\there, quote \\" and backslash \\\\ \\u00e9"',
        "metadata:",
        "  author: x",
        '  version: "1.0"',
        "allowed-tools: [read, bash]",
        "---",
        "Body here.",
        "",
      ].join("\n"),
    );
    expect(parsed).to.deep.equal({
      found: true,
      data: {
        name: "pdf-forms",
        description: "Fill PDF forms. Use for any .pdf file.\n",
        notes: "line one\nline two\n",
        license: "it's MIT",
        escaped: 'tab\there, quote " and backslash \\ é',
        metadata: { author: "x", version: "1.0" },
        "allowed-tools": ["read", "bash"],
      },
      body: "Body here.\n",
      errors: [],
      warnings: [],
    });
  });

  it("takes CRLF line ends, a byte-order mark and blank lines before the block; the body has \\n line ends", async () => {
    const parsed = await parseFrontmatter("\uFEFF\r\n\r\n---\r\nname: x\r\n---\r\nA\r\nB");
    expect(parsed).to.deep.equal({
      found: true,
      data: { name: "x" },
      body: "A\nB",
      errors: [],
      warnings: [],
    });
  });

  it("gives an empty block and a text without a block no data and no problems", async () => {
    expect(await parseFrontmatter("---\n---\nText")).to.deep.equal({
      found: true,
      data: {},
      body: "Text",
      errors: [],
      warnings: [],
    });
    expect(await parseFrontmatter("---\n# only a comment\n---\n")).to.include({ found: true, body: "" });
    expect(await parseFrontmatter("No block\n---\nx: 1\n---\n")).to.deep.equal({
      found: false,
      data: {},
      body: "No block\n---\nx: 1\n---\n",
      errors: [],
      warnings: [],
    });
  });

  it("ends the block only at a `---` line that starts at the left edge", async () => {
    const parsed = await parseFrontmatter("---\nnotes: |\n  above\n  ---\n  below\n---\nBody");
    expect(parsed.data).to.deep.equal({ notes: "above\n---\nbelow\n" });
    expect(parsed.body).to.equal("Body");
  });

  it("reports invalid YAML with its line and column in the file, and no data", async () => {
    const parsed = await parseFrontmatter("\n---\nname: x\njust words\n---\nBody");
    expect(parsed.found).to.equal(true);
    expect(parsed.data).to.deep.equal({});
    expect(parsed.body).to.equal("Body");
    expect(parsed.errors[0]).to.deep.equal({
      line: 4,
      column: 1,
      message:
        "invalid YAML: Implicit map keys need to be followed by map values (each line of the block is `key: value`)",
    });
    const colon = await parseFrontmatter("---\nname: x\ndescription: Use when: asked\n---\n");
    expect(colon.errors[0]).to.include({ line: 3, column: 14 });
    expect(colon.errors[0]!.message).to.contain('a value that contains ": " must be quoted');
    const quote = await parseFrontmatter("---\na: 1\ntitle: 'open\n---\nText");
    expect(quote.errors[0]).to.deep.include({ line: 3, message: "invalid YAML: Missing closing 'quote" });
    const duplicate = await parseFrontmatter("---\na: 1\na: 2\n---\n");
    expect(duplicate.errors[0]).to.deep.equal({
      line: 3,
      column: 1,
      message: "invalid YAML: Map keys must be unique",
    });
  });

  it("reports a block that is not a mapping, and one that is never closed (the whole text is then the body)", async () => {
    const list = await parseFrontmatter("---\n\n- a\n- b\n---\n");
    expect(list.data).to.deep.equal({});
    expect(list.errors).to.deep.equal([
      {
        line: 3,
        column: 1,
        message: "the frontmatter must be `key: value` lines (a YAML mapping), found a list",
      },
    ]);
    expect((await parseFrontmatter("---\njust text\n---\n")).errors[0]!.message).to.contain(
      "found plain text",
    );
    const open = await parseFrontmatter("\n---\nname: x\nText");
    expect(open).to.deep.equal({
      found: true,
      data: {},
      body: "\n---\nname: x\nText",
      errors: [{ line: 2, column: 1, message: "the frontmatter block has no closing `---` line" }],
      warnings: [],
    });
    expect((await parseFrontmatter("---")).errors).to.have.length(1);
  });

  it("passes on what YAML flags without failing, with its position", async () => {
    const parsed = await parseFrontmatter("---\nname: x\nkind: !custom thing\n---\n");
    expect(parsed.data).to.deep.equal({ name: "x", kind: "thing" });
    expect(parsed.errors).to.deep.equal([]);
    expect(parsed.warnings).to.deep.equal([{ line: 3, column: 7, message: "Unresolved tag: !custom" }]);
  });
});
