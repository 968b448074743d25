/**
 * End-to-end cases of the built `knightcode`: each folder test/hosts/<mode>/<case>/ has a case.json (arguments,
 * stdin, expected exit code and output) and, for JSON mode, expected.jsonl. Ids, times, durations and the cwd are
 * normalised before comparing. UPDATE_FIXTURES=1 rewrites expected.jsonl from the actual output.
 */

import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import { wireEvents } from "../../plugins/kit/wire/json-event.js";
import { runCli } from "../helpers/cli.js";
import { useTempDir } from "../helpers/temp-dir.js";

const casesRoot = fileURLToPath(new URL(".", import.meta.url));

interface Case {
  description: string;
  args: string[];
  stdin?: string;
  exitCode: number;
  stdout?: string;
  stderrContains?: string;
}

const VOLATILE = new Set(["id", "timestamp", "durationMs", "cwd"]);

function normalise(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalise);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [
        k,
        VOLATILE.has(k) && v !== undefined ? `<${k}>` : normalise(v),
      ]),
    );
  }
  return value;
}

/** The rules json.md sets for every record of the stream. */
function checkJsonStream(stdout: string): unknown[] {
  expect(stdout.endsWith("\n"), "the stream ends with LF").to.equal(true);
  const lines = stdout.slice(0, -1).split("\n");
  const records = lines.map((line, i) => {
    expect(line, `line ${i + 1} is one record`).to.not.contain("\r");
    return JSON.parse(line) as { type: string; [k: string]: unknown };
  });
  expect(records[0]!.type, "the session header comes first").to.equal("session");
  expect(records[0]).to.include.keys("version", "id", "timestamp", "cwd");
  for (const record of records.slice(1)) {
    const spec = wireEvents[record.type as keyof typeof wireEvents];
    expect(spec?.stream, `${record.type} is a JSON stream event`).to.equal("json");
    if (record.type === "message_update") {
      expect(Object.keys(record).sort()).to.deep.equal(["assistantMessageEvent", "type", "usage"]);
      const event = record.assistantMessageEvent as Record<string, unknown>;
      expect(event).to.not.have.property("partial");
      if (event.type === "toolcall_start") expect(event).to.include.keys("contentIndex", "id", "toolName");
    }
  }
  return records;
}

describe("knightcode end to end (fixture cases)", () => {
  const tmp = useTempDir("kc-e2e-");
  for (const mode of readdirSync(casesRoot, { withFileTypes: true }).filter((d) => d.isDirectory())) {
    const modeDir = join(casesRoot, mode.name);
    for (const name of readdirSync(modeDir).filter((n) => existsSync(join(modeDir, n, "case.json")))) {
      const dir = join(modeDir, name);
      const spec = JSON.parse(readFileSync(join(dir, "case.json"), "utf8")) as Case;
      it(`${mode.name}/${name}: ${spec.description}`, async () => {
        const args = spec.args.map((a) => a.replaceAll("{case}", dir));
        const result = await runCli(args, {
          cwd: tmp.path,
          env: { KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") },
          ...(spec.stdin !== undefined ? { stdin: spec.stdin } : {}),
        });
        expect(result.code, result.stderr).to.equal(spec.exitCode);
        if (spec.stdout !== undefined) expect(result.stdout).to.equal(spec.stdout);
        if (spec.stderrContains) expect(result.stderr).to.contain(spec.stderrContains);
        const expectedFile = join(dir, "expected.jsonl");
        if (mode.name === "json") {
          const records = checkJsonStream(result.stdout).map(normalise);
          if (process.env.UPDATE_FIXTURES) {
            writeFileSync(expectedFile, `${records.map((r) => JSON.stringify(r)).join("\n")}\n`);
          }
          const expected = readFileSync(expectedFile, "utf8")
            .trimEnd()
            .split("\n")
            .map((line) => JSON.parse(line));
          expect(records).to.deep.equal(expected);
        }
      });
    }
  }
});
