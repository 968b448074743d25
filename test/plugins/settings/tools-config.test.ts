/** tools.json: reading (with a warning naming a malformed file), atomic writes, and masking of `...Key` values. */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { KernelError } from "../../../kernel/index.js";
import {
  checkToolSetting,
  isToolEnabled,
  listToolSettings,
  type ManagedTool,
  maskSecret,
  readToolsConfig,
  writeToolSetting,
} from "../../../plugins/settings/tools-config.js";
import { useTempDir } from "../../helpers/temp-dir.js";

/** What the gate and ask_user declare (registerToolSettings), as these functions take it. */
const DECLARED: ManagedTool[] = [
  { name: "classifier-gate", description: "gate", enabledByDefault: false, settings: {} },
  { name: "ask-user", description: "ask", enabledByDefault: true, settings: {} },
];

describe("tools.json (plugins/settings/tools-config)", () => {
  const tmp = useTempDir("kc-tools-json-");

  it("gives each managed tool its default state when the file is missing", () => {
    const listing = listToolSettings(tmp.path, DECLARED);
    expect(listing.warning).to.equal(undefined);
    expect(listing.tools).to.deep.equal([
      { name: "classifier-gate", enabled: false, settings: {} },
      { name: "ask-user", enabled: true, settings: {} },
    ]);
  });

  it("masks values of keys ending in Key to their last four characters, and nothing else", () => {
    tmp.write(
      "tools.json",
      JSON.stringify({
        "classifier-gate": {
          enabled: true,
          model: "local/cls",
          openaiKey: "sk-secret-abcd1234",
          keyboard: "x",
        },
      }),
    );
    const gate = listToolSettings(tmp.path, DECLARED).tools[0]!;
    expect(gate).to.deep.equal({
      name: "classifier-gate",
      enabled: true,
      settings: { model: "local/cls", openaiKey: "****1234", keyboard: "x" },
    });
    expect(JSON.stringify(listToolSettings(tmp.path, DECLARED))).not.to.contain("secret");
    expect(maskSecret("abc")).to.equal("****");
  });

  it("reports a malformed file as a warning that names it, and reads no entry from it", () => {
    const file = tmp.write("tools.json", '{"classifier-gate": {"enabled": true,}}');
    const read = readToolsConfig(tmp.path);
    expect(read.tools).to.deep.equal({});
    expect(read.warning).to.contain(file).and.contain("invalid JSON");
    tmp.write("tools.json", JSON.stringify({ "classifier-gate": { enabled: "yes" } }));
    expect(readToolsConfig(tmp.path).warning).to.contain(file).and.contain('"classifier-gate.enabled"');
    expect(listToolSettings(tmp.path, DECLARED).warning).to.contain(file);
  });

  it("writes one setting atomically, keeps the others, and deletes a key given null", () => {
    tmp.write("tools.json", JSON.stringify({ "classifier-gate": { model: "a/b" }, other: { x: "1" } }));
    writeToolSetting(tmp.path, "classifier-gate", "enabled", true);
    writeToolSetting(tmp.path, "classifier-gate", "allow", "bash(git status*)");
    writeToolSetting(tmp.path, "classifier-gate", "model", null);
    expect(JSON.parse(readFileSync(join(tmp.path, "tools.json"), "utf8"))).to.deep.equal({
      "classifier-gate": { enabled: true, allow: "bash(git status*)" },
      other: { x: "1" },
    });
    expect(isToolEnabled(readToolsConfig(tmp.path), "classifier-gate", false)).to.equal(true);
    // No temp file is left beside it.
    expect(readdirSync(tmp.path)).to.deep.equal(["tools.json"]);
  });

  it("refuses an undeclared tool, a malformed key and a value of the wrong type, naming the reason", () => {
    const attempt = (name: string, key: string, value: string | boolean | null) => {
      try {
        checkToolSetting(DECLARED, name, key, value);
      } catch (error) {
        return error as KernelError;
      }
      return undefined;
    };
    expect(attempt("websearch", "provider", "brave")).to.be.instanceOf(KernelError);
    expect(attempt("websearch", "provider", "brave")?.code).to.equal("KC_ERR_TOOL_SETTINGS");
    expect(attempt("websearch", "provider", "brave")?.data?.reason).to.equal("unknown");
    expect(attempt("websearch", "provider", "brave")?.message).to.contain("classifier-gate, ask-user");
    expect(attempt("classifier-gate", "bad key", "x")?.data?.reason).to.equal("key");
    expect(attempt("classifier-gate", "enabled", "true")?.data?.reason).to.equal("value");
    expect(attempt("classifier-gate", "model", "a/b")).to.equal(undefined);
    expect(attempt("classifier-gate", "bad key", "x")?.message).to.contain("Malformed setting key");
    expect(attempt("classifier-gate", "enabled", "true")?.message).to.contain("true or false");
    expect(attempt("classifier-gate", "model", true)?.message).to.contain("takes a string");
    expect(readdirSync(tmp.path)).to.deep.equal([]);
  });

  it("never overwrites a malformed file", () => {
    const file = tmp.write("tools.json", "{oops");
    expect(() => writeToolSetting(tmp.path, "ask-user", "enabled", false)).to.throw(file);
    expect(readFileSync(file, "utf8")).to.equal("{oops");
    writeFileSync(file, JSON.stringify({ "ask-user": [] }));
    expect(() => writeToolSetting(tmp.path, "ask-user", "enabled", false)).to.throw(
      '"ask-user" must be an object',
    );
  });
});
