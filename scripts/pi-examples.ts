/**
 * How many of pi's own example extensions load and run on KnightCode unchanged (`npm run compat:pi -- <dir>`).
 *
 * <dir> is the `examples/extensions` folder of pi's published package, which this script does not download:
 *
 *   cd /tmp && npm pack @mariozechner/pi-coding-agent@0.73.1 && tar xzf mariozechner-pi-coding-agent-0.73.1.tgz
 *   npm run build && npm run compat:pi -- /tmp/package/examples/extensions
 *
 * Each extension (a .ts file, or a folder with index.ts) is tried in a fresh `knightcode` process from dist/:
 * - loads: `--list-extensions -e <it>` exits 0 (no load failure);
 * - runs: a JSON-mode prompt answered by the scripted provider exits 0 with no `extension_error` record and no
 *   error on stderr. An extension folder with npm dependencies loads only once they are installed (`npm install`
 *   in that folder, as its author's README says); the script names the folders that have none installed.
 * It prints one line per extension and the totals.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const dir = process.argv[2];
if (!dir || !existsSync(dir)) {
  console.error(
    "usage: npm run compat:pi -- <pi's examples/extensions folder> (see the comment in scripts/pi-examples.ts)",
  );
  process.exit(2);
}
const bin = fileURLToPath(new URL("../dist/hosts/cli/main.js", import.meta.url));
if (!existsSync(bin)) {
  console.error("dist/ is missing: run `npm run build` first");
  process.exit(2);
}

const work = mkdtempSync(join(tmpdir(), "kc-pi-examples-"));
const agentDir = join(work, "agent");
const script = join(work, "script.json");
writeFileSync(script, JSON.stringify({ steps: [{ text: "ok" }, { text: "ok" }] }));
const env = { ...process.env, KNIGHTCODE_AGENT_DIR: agentDir, NO_COLOR: "1" };

const entries = readdirSync(dir)
  .filter((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? existsSync(join(path, "index.ts")) : name.endsWith(".ts");
  })
  .sort();

function run(args: string[]) {
  return spawnSync(process.execPath, [bin, ...args], { cwd: work, env, encoding: "utf8", timeout: 30_000 });
}

let loaded = 0;
let clean = 0;
const needDeps: string[] = [];
try {
  for (const name of entries) {
    const path = join(dir, name);
    const manifest = join(path, "package.json");
    const deps = existsSync(manifest) ? JSON.parse(readFileSync(manifest, "utf8")).dependencies : undefined;
    if (deps && Object.keys(deps).length > 0 && !existsSync(join(path, "node_modules"))) needDeps.push(name);
    const list = run(["--list-extensions", "-e", path]);
    const loads = list.status === 0;
    let runs = false;
    let why = loads ? "" : firstLine(list.stderr);
    if (loads) {
      loaded++;
      const json = run([
        "--mode",
        "json",
        "--no-session",
        "-e",
        path,
        "--provider",
        "scripted",
        "--script",
        script,
        "hello",
      ]);
      const records = json.stdout.split("\n").filter(Boolean);
      const errors = records.filter((line) => line.includes('"type":"extension_error"'));
      runs = json.status === 0 && errors.length === 0 && !/error/i.test(json.stderr);
      if (runs) clean++;
      else why = errors[0]?.slice(0, 160) ?? firstLine(json.stderr) ?? `exit ${json.status}`;
    }
    console.log(`${loads ? "load" : "FAIL"} ${runs ? "run " : "----"} ${name}${why ? `  ${why}` : ""}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(`\n${entries.length} extensions: ${loaded} load, ${clean} run cleanly (a prompt in JSON mode)`);
if (needDeps.length) console.log(`need npm dependencies not installed here: ${needDeps.join(", ")}`);

function firstLine(text: string): string {
  return (
    text
      .split("\n")
      .find((line) => line.trim())
      ?.slice(0, 200) ?? ""
  );
}
