/**
 * The built `knightcode` runs from its single-file bundle with a V8 code cache in `<agentDir>/cache/v8`
 * (hosts/cli/bundle-loader.ts). `KNIGHTCODE_DEBUG_CODE_CACHE=1` makes the loader say on stderr whether V8 took the
 * cache, so these tests see a miss, a hit and a rejection as they happen.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { cliAgentDir, cliCodeCacheDir } from "../../../hosts/cli/agent-dir.js";
import { codeCacheDir, resolveAgentDir } from "../../../plugins/settings/agent-dir.js";
import { runCli } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("the CLI's code cache", () => {
  const tmp = useTempDir("kc-code-cache-");
  const agentDir = () => join(tmp.path, "agent");
  const cacheDir = () => join(agentDir(), "cache", "v8");
  const caches = () => (existsSync(cacheDir()) ? readdirSync(cacheDir()).sort() : []);
  /** The agent folder, with its own caches (the suite shares one folder of caches: test/setup.ts). */
  const own = () => ({ KNIGHTCODE_AGENT_DIR: agentDir(), KNIGHTCODE_CODE_CACHE_DIR: "" });

  /** A one-turn print run that opens a session (no session file). */
  const run = async (extra: Record<string, string> = {}) => {
    const script = tmp.write("s.json", JSON.stringify({ steps: [{ text: "cached hello" }] }));
    const result = await runCli(["-p", "--no-session", "--provider", "scripted", "--script", script, "hi"], {
      cwd: tmp.path,
      env: { ...own(), KNIGHTCODE_DEBUG_CODE_CACHE: "1", ...extra },
    });
    expect(result.code, result.stderr).to.equal(0);
    expect(result.stdout).to.equal("cached hello\n");
    return /code cache (\w+)/.exec(result.stderr)?.[1];
  };

  it("compiles without a cache on the first run, writes one at exit, and starts from it on the next", async () => {
    expect(await run()).to.equal("miss");
    const files = caches();
    expect(files).to.have.length(1);
    expect(files[0]).to.match(
      new RegExp(`^knightcode-cli-[0-9a-f]{16}-${process.version}-${process.arch}\\.bin$`),
    );
    expect(await run()).to.equal("hit");
    expect(caches()).to.deep.equal(files);
  });

  it("takes a damaged cache as a miss, still runs, and writes a good one", async () => {
    await run();
    const file = join(cacheDir(), caches()[0]!);
    const good = readFileSync(file);
    writeFileSync(file, Buffer.concat([good.subarray(0, 64), Buffer.alloc(good.length - 64, 7)]));
    expect(await run()).to.equal("rejected");
    expect(await run()).to.equal("hit");
  });

  it("replaces the cache of a run without a session (--list-extensions) with a session run's", async () => {
    const listed = await runCli(["--list-extensions"], {
      cwd: tmp.path,
      env: own(),
    });
    expect(listed.code, listed.stderr).to.equal(0);
    expect(caches().map((f) => f.endsWith(".partial.bin"))).to.deep.equal([true]);
    expect(await run()).to.equal("hit");
    expect(caches().map((f) => f.endsWith(".partial.bin"))).to.deep.equal([false]);
    expect(await run()).to.equal("hit");
  });

  it("drops the caches of other builds for this Node and keeps other Node versions' caches", async () => {
    const old = `knightcode-cli-0000000000000000-${process.version}-${process.arch}.bin`;
    const otherNode = `knightcode-cli-0000000000000000-v99.0.0-${process.arch}.bin`;
    await run();
    writeFileSync(join(cacheDir(), old), "stale");
    writeFileSync(join(cacheDir(), otherNode), "other");
    writeFileSync(join(cacheDir(), caches().find((f) => f !== old && f !== otherNode)!), "damaged");
    expect(await run()).to.equal("rejected");
    expect(caches()).not.to.include(old);
    expect(caches()).to.include(otherNode);
  });

  it("compiles a part only some runs use (the app-server) from a bundle of its own, with its own cache", async () => {
    const serve = async () => {
      const result = await runCli(["app-server"], {
        cwd: tmp.path,
        env: { ...own(), KNIGHTCODE_DEBUG_CODE_CACHE: "1" },
        stdin: `${JSON.stringify({ id: 1, method: "initialize", params: { clientInfo: { name: "t", version: "1" } } })}\n`,
      });
      expect(result.code, result.stderr).to.equal(0);
      expect(JSON.parse(result.stdout.split("\n")[0]!).result.serverInfo.name).to.equal("knightcode");
      return /code cache (\w+) \(app-server\)/.exec(result.stderr)?.[1];
    };
    await run();
    const printOnly = caches();
    expect(printOnly.filter((f) => f.startsWith("knightcode-side-"))).to.deep.equal([]);
    expect(await serve()).to.equal("miss");
    const side = caches().filter((f) => !printOnly.includes(f));
    expect(side).to.have.length(1);
    expect(side[0]).to.match(/^knightcode-side-app-server-[0-9a-f]{16}-/);
    expect(await serve()).to.equal("hit");
    // Writing one bundle's cache leaves the other bundles' caches alone.
    expect(await run()).to.equal("hit");
    expect(caches()).to.deep.equal([...printOnly, ...side].sort());
  });

  it("reads and writes nothing with KNIGHTCODE_CODE_CACHE=0", async () => {
    expect(await run({ KNIGHTCODE_CODE_CACHE: "0" })).to.equal("off");
    expect(caches()).to.deep.equal([]);
  });

  it("runs from the module chunks, with no cache, with KNIGHTCODE_CLI_BUNDLE=0", async () => {
    expect(await run({ KNIGHTCODE_CLI_BUNDLE: "0" })).to.equal(undefined);
    expect(caches()).to.deep.equal([]);
  });

  it("keeps the caches in $KNIGHTCODE_CODE_CACHE_DIR when it is set", async () => {
    const elsewhere = join(tmp.path, "caches");
    expect(await run({ KNIGHTCODE_CODE_CACHE_DIR: elsewhere })).to.equal("miss");
    expect(await run({ KNIGHTCODE_CODE_CACHE_DIR: elsewhere })).to.equal("hit");
    expect(readdirSync(join(elsewhere, "v8"))).to.have.length(1);
    expect(caches()).to.deep.equal([]);
  });

  it("finds the agent folder and the cache folder by the same rules as the settings service", () => {
    for (const env of [
      {},
      { KNIGHTCODE_AGENT_DIR: "rel/agent" },
      { KNIGHTCODE_AGENT_DIR: "/abs/agent" },
      { KNIGHTCODE_AGENT_DIR: "/abs/agent", KNIGHTCODE_CODE_CACHE_DIR: "" },
      { KNIGHTCODE_CODE_CACHE_DIR: "rel/caches" },
    ]) {
      expect(cliAgentDir(env)).to.equal(resolveAgentDir(env));
      expect(cliCodeCacheDir(env)).to.equal(codeCacheDir(resolveAgentDir(env), env));
    }
  });
});
