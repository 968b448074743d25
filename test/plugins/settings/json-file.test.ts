import { expect } from "chai";
import {
  firstErrorOffset,
  lineAndColumn,
  parseJson,
  readJsonObjectFile,
} from "../../../plugins/settings/json-file.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("plugins/settings json-file", () => {
  const tmp = useTempDir("kc-json-");

  it("finds the same error offset as V8 where V8 reports one", () => {
    const samples = [
      '{"a":1',
      '{"a" 1}',
      '{\n  "a": 1,\n}',
      '{"a":"x\ny"}',
      "{} x",
      '{"a":01}',
      '{"a":-}',
      '{"a": 1.e5}',
      '{"x":"\\q"}',
      '{"a":"\\u12g4"}',
    ];
    for (const sample of samples) {
      let v8: number | undefined;
      try {
        JSON.parse(sample);
      } catch (error) {
        const match = /at position (\d+)/.exec((error as Error).message);
        if (match) v8 = Number(match[1]);
      }
      if (v8 !== undefined) expect(firstErrorOffset(sample), sample).to.equal(v8);
    }
  });

  it("locates errors V8 reports without a position, and accepts valid JSON", () => {
    expect(firstErrorOffset('{"a": }')).to.equal(6);
    expect(firstErrorOffset("[1,]")).to.equal(3);
    expect(firstErrorOffset('{"a": tru}')).to.equal(9);
    expect(firstErrorOffset("// c\n{}")).to.equal(0);
    expect(firstErrorOffset('{"a":[1,{"b":null}],"c":-1.5e+3,"d":"\\u00e9\\n"}')).to.equal(undefined);
    const parsed = parseJson('{\n "a": }');
    expect(parsed).to.deep.equal({ ok: false, reason: "Unexpected token '}'", offset: 8 });
    expect(lineAndColumn('{\n "a": }', 8)).to.deep.equal({ line: 2, column: 7 });
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
      `${bad}:3:3: invalid JSON: Expected ',' or '}' after property value`,
    );
    const dir = readJsonObjectFile(tmp.path);
    expect(dir.status).to.equal("invalid");
    expect(dir.status === "invalid" && dir.message).to.contain("cannot be read");
  });
});
