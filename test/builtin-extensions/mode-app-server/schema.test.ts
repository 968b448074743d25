/**
 * The protocol's generated JSON Schema and TypeScript types in the repository match protocol.ts, and `knightcode
 * app-server schema --out DIR` writes the same files. After a protocol change, regenerate with
 * `node dist/hosts/cli/main.js app-server schema --out schema/app-server`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { compile, type JSONSchema } from "json-schema-to-typescript";
import { transpileModule } from "typescript";
import { ERROR_CODES } from "../../../builtin-extensions/mode-app-server/errors.js";
import { appServerSchemaFiles } from "../../../builtin-extensions/mode-app-server/schema-gen.js";
import { runCli } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const committed = fileURLToPath(new URL("../../../schema/app-server/", import.meta.url));

describe("app-server schema", () => {
  const tmp = useTempDir("kc-appserver-schema-");

  it("the committed schema files match the protocol table", () => {
    for (const [name, text] of Object.entries(appServerSchemaFiles())) {
      expect(readFileSync(join(committed, name), "utf8"), `${name} drifted; regenerate it`).to.equal(text);
    }
  });

  it("defines every method once, with params and result schemas", () => {
    const schema = JSON.parse(appServerSchemaFiles()["app-server.schema.json"]!) as {
      definitions: Record<string, unknown>;
      requests: Record<string, { params: unknown; result: unknown }>;
      notifications: Record<string, { params: { $ref: string } }>;
      serverRequests: Record<string, { params: unknown; result: unknown }>;
    };
    const resolve = (pointer: { $ref: string }) =>
      schema.definitions[pointer.$ref.replace("#/definitions/", "")];
    expect(Object.keys(schema.requests)).to.include.members([
      "initialize",
      "thread/start",
      "turn/start",
      "config/read",
    ]);
    for (const [name, spec] of Object.entries(schema.requests)) {
      expect(spec.params, name).to.be.an("object");
      expect(spec.result, name).to.be.an("object");
    }
    expect(resolve(schema.notifications["turn/completed"]!.params)).to.deep.include({ type: "object" });
    expect(schema.serverRequests["ui/dialog"]!.result).to.be.an("object");
  });

  it("gives a generic generator (json-schema-to-typescript) every message type and the error codes", async function () {
    this.timeout(60_000);
    const schema = JSON.parse(readFileSync(join(committed, "app-server.schema.json"), "utf8")) as JSONSchema;
    const ts = await compile(schema, "AppServerProtocol", { bannerComment: "", additionalProperties: false });
    for (const name of [
      "ThreadStartRequest",
      "ThreadStartParams",
      "ThreadStartResponse",
      "ThreadStartResult",
      "ThreadDiffReadResponse",
      "TurnCompletedNotification",
      "UiDialogRequest",
      "UiDialogResponse",
      "ErrorResponse",
      "Thread",
      "DiffFile",
    ])
      expect(ts, name).to.match(new RegExp(`export (interface|type) ${name}\\b`));
    expect(ts).to.match(/export type KnightCodeAppServerProtocol =\s*\|?\s*Request/);
    for (const union of ["Request", "Response", "Notification", "ServerRequest", "ServerRequestResponse"])
      expect(ts, union).to.match(new RegExp(`export type ${union} =`));
    const codes = /export const enum ErrorCode \{([^}]*)\}/.exec(ts)?.[1] ?? "";
    for (const code of Object.keys(ERROR_CODES)) expect(codes, code).to.contain(`${code} = "${code}"`);
    // The output is valid TypeScript.
    const { diagnostics } = transpileModule(ts, {
      reportDiagnostics: true,
      compilerOptions: { strict: true },
    });
    expect(diagnostics ?? []).to.deep.equal([]);
  });

  it("knightcode app-server schema --out DIR writes the same files", async () => {
    const out = join(tmp.path, "out");
    const result = await runCli(["app-server", "schema", "--out", out], { cwd: tmp.path, env: {} });
    expect(result.code, result.stderr).to.equal(0);
    for (const [name, text] of Object.entries(appServerSchemaFiles())) {
      expect(readFileSync(join(out, name), "utf8")).to.equal(text);
      expect(result.stdout).to.contain(join(out, name));
    }
    const bad = await runCli(["app-server", "schema"], { cwd: tmp.path, env: {} });
    expect(bad.code).to.equal(2);
    expect(bad.stderr).to.contain("schema needs --out DIR");
  });
});
