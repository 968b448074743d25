import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import {
  lineAndColumn,
  MAX_JSON_DEPTH,
  parseJson,
  readFailure,
  readJsonObjectFile,
} from "../../../../plugins/kit/files/json-file.js";
import { loadModelsJson } from "../../../../plugins/model-registry/models-json.js";
import { globalSettingsPath, trustFilePath } from "../../../../plugins/settings/agent-dir.js";
import { mcpFilePaths, readMcpFiles } from "../../../../plugins/settings/mcp-config.js";
import { addMcpServer } from "../../../../plugins/settings/mcp-files.js";
import { loadSettings } from "../../../../plugins/settings/settings.js";
import {
  readToolsConfig,
  toolsConfigPath,
  writeToolSetting,
} from "../../../../plugins/settings/tools-config.js";
import { readTrustDecisions } from "../../../../plugins/settings/trust.js";
import { useTempDir } from "../../../helpers/temp-dir.js";

const root = fileURLToPath(new URL("../../../..", import.meta.url));

describe("plugins/kit/files json-file", () => {
  const tmp = useTempDir("kc-json-");

  it("names the line, column and a short reason of the first error, comments and trailing commas included", () => {
    const cases: [string, number, number, string][] = [
      ['{\n  "a": 1,\n}', 3, 1, "a comma before `}` is not allowed in JSON"],
      ['{"a": [1, 2,]}', 1, 13, "a comma before `]` is not allowed in JSON"],
      ['{\n  // the model\n  "a": 1\n}', 2, 3, "comments are not allowed in JSON"],
      ['{"a": 1 /* why */}', 1, 9, "comments are not allowed in JSON"],
      ['{"a":\n  1\n  "b": 2}', 3, 3, "expected `,` or `}` after a property value"],
      ['{"a": [1\n 2]}', 2, 2, "expected `,` or `]` after an array element"],
      ['{"a" 1}', 1, 6, "expected `:` after the property name"],
      ['{"a": }', 1, 7, "expected a value"],
      ["{'a': 1}", 1, 2, "unexpected `'a'`"],
      ['{"a": NaN}', 1, 7, "unexpected `NaN`"],
      ['{"a": 1}\u00a0', 1, 9, "unexpected character U+00A0"],
      ['{"a": 1} {}', 1, 10, "unexpected text after the end of the JSON value"],
      ['{\n  "a": {"b": 1}', 2, 16, "the text ends before `}` closes the object"],
      ['{"a": "one\ntwo"}', 1, 7, "unterminated string (a line break in a string is written \\n)"],
      ['{"a": "C:\\dir"}', 1, 7, "invalid escape in a string (a backslash is written \\\\)"],
      ['{"a": 01}', 1, 8, "expected `,` or `}` after a property value"],
      ['{"a": 1.}', 1, 7, "invalid number"],
    ];
    for (const [text, line, column, reason] of cases) {
      expect(parseJson(text), text).to.deep.equal({ ok: false, line, column, reason });
    }
    expect(parseJson('\uFEFF{"a":[1,{"b":null}],"c":-1.5e+3,"d":"\\u00e9\\n"}')).to.deep.equal({
      ok: true,
      value: { a: [1, { b: null }], c: -1500, d: "é\n" },
    });
    expect(lineAndColumn('{\n "a": }', 8)).to.deep.equal({ line: 2, column: 7 });
  });

  it("refuses nesting deeper than 1000 levels before parsing, counting brackets outside strings only", () => {
    // So deep that jsonc-parser (and every recursive step after a parse) would overflow the stack.
    expect(parseJson("[".repeat(100_000))).to.deep.equal({
      ok: false,
      line: 1,
      column: 1001,
      reason: "nested deeper than 1000 levels",
      tooDeep: true,
    });
    const at = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
    expect(parseJson(at(MAX_JSON_DEPTH)).ok).to.equal(true);
    expect(parseJson(`{\n "a": ${at(MAX_JSON_DEPTH)}}`)).to.deep.include({
      ok: false,
      line: 2,
      column: 1006,
    });
    // Brackets inside strings (escaped quotes included) are text, not nesting.
    const quoted = JSON.stringify({ s: `"${"[".repeat(5000)}` });
    expect(parseJson(quoted).ok).to.equal(true);
  });

  it("says why a file could not be read in words", () => {
    const failure = (code: string) => readFailure(Object.assign(new Error(`${code}: raw`), { code }));
    expect(failure("EISDIR")).to.equal("it is a directory");
    expect(failure("EACCES")).to.equal("permission denied");
    expect(failure("EPERM")).to.equal("permission denied");
    expect(failure("ELOOP")).to.equal("it is a symbolic link loop");
    expect(failure("EIO")).to.equal("EIO: raw");
  });

  it("loads jsonc-parser only once a text fails JSON.parse", () => {
    const good = tmp.write("good.json", '{"a": 1}');
    const bad = tmp.write("bad.json", '{"a": 1,}');
    const script = `
      import { createRequire } from "node:module";
      import { readJsonObjectFile } from "./plugins/kit/files/json-file.ts";
      const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((f) => f.includes("jsonc-parser"));
      const first = readJsonObjectFile(${JSON.stringify(good)}).status;
      const before = loaded();
      const second = readJsonObjectFile(${JSON.stringify(bad)}).status;
      console.log(JSON.stringify([first, before, second, loaded()]));
    `;
    const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      cwd: root,
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(JSON.parse(out)).to.deep.equal(["ok", false, "invalid", true]);
  });

  it("reads files: missing, ok with a version, invalid with line and column, BOM tolerated", () => {
    expect(readJsonObjectFile(`${tmp.path}/none.json`)).to.deep.equal({ status: "missing" });
    const ok = readJsonObjectFile(tmp.write("ok.json", '\uFEFF{"a": 1}'));
    expect(ok).to.include({ status: "ok" });
    expect(ok.status === "ok" && ok.value).to.deep.equal({ a: 1 });
    expect(ok.status === "ok" && ok.version).to.match(/^[0-9a-f]{64}$/);
    const bad = tmp.write("bad.json", '{"a":\n  1\n  "b": 2}');
    const read = readJsonObjectFile(bad);
    expect(read.status).to.equal("invalid");
    expect(read.status === "invalid" && read.message).to.equal(
      `${bad}:3:3: invalid JSON: expected \`,\` or \`}\` after a property value`,
    );
    const list = readJsonObjectFile(tmp.write("list.json", "\n  [1]"));
    expect(list.status === "invalid" && list.message).to.match(
      /list\.json:2:3: the top level must be a JSON object, found an array$/,
    );
    const dir = readJsonObjectFile(tmp.path);
    expect(dir.status).to.equal("invalid");
    expect(dir.status === "invalid" && dir.message).to.contain("cannot be read");
  });

  describe("each configuration file names file, line and column, and a malformed file is not overwritten", () => {
    const agentDir = () => join(tmp.path, "agent");
    const cwd = () => join(tmp.path, "project");
    const broken = '{\n  "a": 1,\n}\n';
    const where = (file: string) => `${file}:3:1: invalid JSON: a comma before \`}\` is not allowed in JSON`;

    it("settings.json", () => {
      const file = tmp.write("agent/settings.json", broken);
      const settings = loadSettings({ agentDir: agentDir(), cwd: cwd(), projectTrusted: false });
      expect(globalSettingsPath(agentDir())).to.equal(file);
      expect(settings.warnings).to.deep.equal([`${where(file)} (the global settings were not loaded)`]);
      expect(() => settings.saveGlobal({ theme: "light" })).to.throw(`Cannot update ${where(file)}.`);
      expect(readFileSync(file, "utf8")).to.equal(broken);
    });

    it("tools.json", () => {
      const file = tmp.write("agent/tools.json", broken);
      expect(toolsConfigPath(agentDir())).to.equal(file);
      expect(readToolsConfig(agentDir()).warning).to.equal(where(file));
      expect(() => writeToolSetting(agentDir(), "ask-user", "enabled", false)).to.throw(where(file));
      expect(readFileSync(file, "utf8")).to.equal(broken);
    });

    it("mcp.json", () => {
      const file = tmp.write("agent/mcp.json", broken);
      expect(mcpFilePaths(agentDir(), cwd()).global).to.equal(file);
      expect(readMcpFiles(agentDir(), cwd(), false).warnings).to.deep.equal([where(file)]);
      expect(() => addMcpServer(file, "global", "docs", { command: "docs-server" })).to.throw(where(file));
      expect(readFileSync(file, "utf8")).to.equal(broken);
    });

    it("trust.json", () => {
      const file = tmp.write("agent/trust.json", broken);
      expect(trustFilePath(agentDir())).to.equal(file);
      const warnings: string[] = [];
      expect(readTrustDecisions(agentDir(), (w) => warnings.push(w)).size).to.equal(0);
      expect(warnings).to.deep.equal([`${where(file)}; saved trust decisions are ignored.`]);
    });

    it("models.json", () => {
      const file = tmp.write("agent/models.json", broken);
      expect(loadModelsJson(agentDir()).warnings).to.deep.equal([`${where(file)}; the file was ignored`]);
    });
  });
});
