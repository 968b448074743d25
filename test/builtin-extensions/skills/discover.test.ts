import { join } from "node:path";
import { expect } from "chai";
import { discoverSkills, parseFrontmatter } from "../../../builtin-extensions/skills/discover.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("builtin:skills discovery", () => {
  const tmp = useTempDir("kc-skill-discover-");

  it("reads key: value frontmatter with quotes, comments and block scalars, and returns the body", () => {
    const parsed = parseFrontmatter(
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
        "---",
        "Body here.",
      ].join("\n"),
    );
    expect(parsed).to.deep.equal({
      fields: {
        name: "pdf-forms",
        description: "Fill PDF forms. Use for any .pdf file.",
        notes: "line one\nline two",
        license: "it's MIT",
      },
      body: "Body here.",
    });
  });

  it("reports a missing block, an unclosed block and a line that is not key: value", () => {
    expect(parseFrontmatter("name: x\n")).to.deep.equal({
      error: "it does not start with a `---` frontmatter block",
    });
    expect(parseFrontmatter("---\nname: x\n")).to.deep.equal({
      error: "its frontmatter has no closing `---` line",
    });
    expect(parseFrontmatter("---\nname: x\njust words\n---\n")).to.deep.equal({
      error: 'frontmatter line 3 is not `key: value`: "just words"',
    });
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
