/**
 * The loader's factory cache (spec extensions.md, State): the factories a session uses are pinned, up to 256
 * inactive ones remain, the oldest inactive one beyond that is dropped so a later load evaluates its file again,
 * and dropping never touches a live session's factory. Real files through the real loader (jiti).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { ExtensionLoader, INACTIVE_FACTORIES_KEPT } from "../../../kernel/extensions/loader.js";

type Counts = Record<string, number>;
const evaluations = () => ((globalThis as { __kcFactoryCache?: Counts }).__kcFactoryCache ??= {});

describe("kernel/extensions factory cache", function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "kc-factory-cache-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    delete (globalThis as { __kcFactoryCache?: Counts }).__kcFactoryCache;
  });

  /** An extension file that counts its module evaluations. */
  const extension = (name: string) => {
    const file = join(dir, `${name}.js`);
    writeFileSync(
      file,
      `const c = (globalThis.__kcFactoryCache ??= {}); c[${JSON.stringify(name)}] = (c[${JSON.stringify(name)}] ?? 0) + 1;\nexport default function (kc) { kc.name = ${JSON.stringify(name)}; }\n`,
    );
    return file;
  };

  it("pins what a session uses, keeps 256 inactive, and evaluates a dropped file again on its next load", async () => {
    const loader = new ExtensionLoader({ cacheDir: false });
    const live = await loader.load([{ origin: "cli", path: extension("live") }]);
    const liveFactory = live.extensions[0]!.factory;
    const count = INACTIVE_FACTORIES_KEPT + 20;
    for (let i = 0; i < count; i++) {
      const loaded = await loader.load([{ origin: "cli", path: extension(`e${i}`) }]);
      expect(loaded.failures).to.deep.equal([]);
      loaded.release();
    }
    expect(loader.cachedFactories()).to.deep.equal({ total: INACTIVE_FACTORIES_KEPT + 1, pinned: 1 });

    // The pinned factory is the oldest entry, yet it stayed: the same function, its module evaluated once.
    const again = await loader.load([{ origin: "cli", path: join(dir, "live.js") }]);
    expect(again.extensions[0]!.factory).to.equal(liveFactory);
    expect(evaluations().live).to.equal(1);
    // The live session's factory still works after the evictions around it.
    const probe: { name?: string } = {};
    (liveFactory as (kc: unknown) => void)(probe);
    expect(probe.name).to.equal("live");

    // The oldest inactive ones were dropped: their files are evaluated again; a recent one is not.
    const dropped = await loader.load([{ origin: "cli", path: join(dir, "e0.js") }]);
    expect(evaluations().e0).to.equal(2);
    const kept = await loader.load([{ origin: "cli", path: join(dir, `e${count - 1}.js`) }]);
    expect(evaluations()[`e${count - 1}`]).to.equal(1);
    for (const result of [live, again, dropped, kept]) result.release();
    // Releasing twice changes nothing.
    live.release();
    expect(loader.cachedFactories()).to.deep.equal({ total: INACTIVE_FACTORIES_KEPT, pinned: 0 });
  });
});
