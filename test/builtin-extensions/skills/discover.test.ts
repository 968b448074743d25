import { join } from "node:path";
import { expect } from "chai";
import { discoverSkills } from "../../../builtin-extensions/skills/discover.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("builtin:skills discovery", () => {
  const tmp = useTempDir("kc-skill-discover-");

  it("loads a SKILL.md with the Agent Skills `metadata:` map; every frontmatter field is readable", async () => {
    const file = tmp.write(
      "pdf-forms/SKILL.md",
      [
        "---",
        "name: pdf-forms",
        "description: >",
        "  Fill PDF forms.",
        "  Use for any .pdf file.",
        "license: Apache-2.0",
        "metadata:",
        "  author: x",
        '  version: "1.0"',
        "---",
        "Body here.",
      ].join("\n"),
    );
    const { skills, warnings } = await discoverSkills([file]);
    expect(warnings).to.deep.equal([]);
    expect(skills).to.have.length(1);
    expect(skills[0]).to.deep.include({
      name: "pdf-forms",
      description: "Fill PDF forms. Use for any .pdf file.",
      filePath: file,
    });
    expect(skills[0]!.frontmatter.metadata).to.deep.equal({ author: "x", version: "1.0" });
    expect(skills[0]!.frontmatter.license).to.equal("Apache-2.0");
  });

  it("leaves out a skill without a block, with an unclosed block or with invalid YAML, naming the file and line", async () => {
    const none = tmp.write("none/SKILL.md", "name: x\n");
    const open = tmp.write("open/SKILL.md", "---\nname: x\n");
    const words = tmp.write("words/SKILL.md", "---\nname: x\njust words\n---\n");
    const colon = tmp.write("colon/SKILL.md", "---\nname: colon\ndescription: Use when: asked\n---\n");
    const { skills, warnings } = await discoverSkills([none, open, words, colon]);
    expect(skills).to.deep.equal([]);
    expect(warnings).to.deep.equal([
      `skill ${none} is left out: it does not start with a \`---\` frontmatter block`,
      `skill ${open} is left out: frontmatter line 1, column 1: the frontmatter block has no closing \`---\` line`,
      `skill ${words} is left out: frontmatter line 3, column 1: invalid YAML: Implicit map keys need to be followed by map values (each line of the block is \`key: value\`)`,
      `skill ${colon} is left out: frontmatter line 3, column 14: invalid YAML: Nested mappings are not allowed in compact mappings (a value that contains ": " must be quoted)`,
    ]);
  });

  it("checks name and description as the Agent Skills format asks, and says what a value that is not text is", async () => {
    const skill = (dir: string, frontmatter: string) =>
      tmp.write(`${dir}/SKILL.md`, `---\n${frontmatter}\n---\n`);
    const files = [
      skill("a", "description: d"),
      skill("b", "name: Bad_Name\ndescription: d"),
      skill("c", `name: ${"x".repeat(65)}\ndescription: d`),
      skill("d", "name: no-description"),
      skill("e", "name: blank\ndescription: '  '"),
      skill("f", "name: 1.5\ndescription: d"),
      skill("g", "name: listed\ndescription: [a, b]"),
      skill("h", "name: fine\ndescription: '  Kept, trimmed.  '"),
    ];
    const { skills, warnings } = await discoverSkills(files);
    expect(skills.map((s) => [s.name, s.description])).to.deep.equal([["fine", "Kept, trimmed."]]);
    expect(warnings.map((w) => w.slice(w.indexOf(": ") + 2))).to.deep.equal([
      "its frontmatter has no `name`",
      'its name "Bad_Name" must be lower-case letters, digits and single hyphens (as in "pdf-forms")',
      `its name "${"x".repeat(65)}" is longer than 64 characters`,
      "its frontmatter has no `description` (the model picks skills by it)",
      "its frontmatter has no `description` (the model picks skills by it)",
      "its `name` must be text, found a number (1.5); quote it",
      "its `description` must be text, found a list",
    ]);
  });

  it("takes a SKILL.md, a skill folder or a folder of skills, skips missing places and dot folders", async () => {
    const skill = (rel: string, name: string) =>
      tmp.write(join(rel, "SKILL.md"), `---\nname: ${name}\ndescription: d ${name}\n---\n`);
    const direct = skill("a/direct", "direct");
    const folder = skill("b/folder", "folder");
    const nested = skill("c/group/nested", "nested");
    skill("c/.hidden/secret", "secret");
    tmp.write("c/group/nested/deeper/SKILL.md", "---\nname: inner\ndescription: x\n---\n");
    const { skills, warnings } = await discoverSkills([
      direct,
      join(tmp.path, "b", "folder"),
      join(tmp.path, "c"),
      join(tmp.path, "missing"),
      direct,
    ]);
    expect(skills.map((s) => [s.name, s.filePath])).to.deep.equal([
      ["direct", direct],
      ["folder", folder],
      ["nested", nested],
    ]);
    expect(skills[0]!.baseDir).to.equal(join(tmp.path, "a", "direct"));
    expect(warnings).to.deep.equal([]);
  });

  it("warns about a skill path that is a file other than SKILL.md", async () => {
    const file = tmp.write("notes.md", "x");
    const { skills, warnings } = await discoverSkills([file]);
    expect(skills).to.deep.equal([]);
    expect(warnings).to.deep.equal([`skill path ${file} is neither a SKILL.md nor a folder`]);
  });
});
