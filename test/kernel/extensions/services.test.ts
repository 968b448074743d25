/**
 * `knightcode.services`: a typed reference one extension provides and others use, defaults a replacement takes the
 * place of, watchers told of every change of provider, reload and shutdown removing providers, and `process`
 * services shared by the sessions whose provider is the same extension.
 */
import { expect } from "chai";
import type { ExtensionAPI, ExtensionFactory } from "../../../kernel/api/index.js";
import { KernelError } from "../../../kernel/errors.js";
import { defineService } from "../../../kernel/extensions/services.js";
import { createKernel, type Kernel } from "../../../kernel/kernel.js";
import type { ExtensionErrorReport, SessionRuntime } from "../../../kernel/lifecycle/session-runtime.js";
import { ensureNoDisposablesLeaked } from "../../helpers/leak-check.js";

interface Greeter {
  greet(name: string): string;
}

const greeter = defineService<Greeter>("test.greeter", {
  description: "says hello",
  providedBy: "sdk:default-greeter",
});

interface Counter {
  next(): number;
}

const counter = defineService<Counter>("test.counter", { description: "counts", scope: "process" });

describe("extension services (knightcode.services)", () => {
  let kernel: Kernel;
  let runtimes: SessionRuntime[] = [];
  let errors: ExtensionErrorReport[] = [];

  beforeEach(() => {
    errors = [];
    kernel = createKernel({ cacheDir: false });
  });
  afterEach(async () => {
    for (const runtime of runtimes) await runtime.shutdown();
    runtimes = [];
    await kernel.dispose();
  });
  ensureNoDisposablesLeaked();

  async function open(factories: Record<string, ExtensionFactory>): Promise<SessionRuntime> {
    const { runtime } = await kernel.createSession({
      sources: Object.entries(factories).map(([name, factory]) => ({
        origin: "sdk" as const,
        name,
        factory,
      })),
      cwd: process.cwd(),
      mode: "sdk",
      onExtensionError: (report) => errors.push(report),
    });
    runtimes.push(runtime);
    return runtime;
  }

  it("gives another extension the provider's service, made on first use and once", async () => {
    let made = 0;
    let user: ExtensionAPI | undefined;
    await open({
      provider: (kc) =>
        kc.services.provide(greeter, () => {
          made++;
          return { greet: (name) => `hello ${name}` };
        }),
      user: (kc) => {
        user = kc;
      },
    });
    expect(made, "nothing is made before someone asks").to.equal(0);
    expect(user!.services.require(greeter).greet("ada")).to.equal("hello ada");
    expect(user!.services.get(greeter)).to.equal(user!.services.get(greeter));
    expect(made).to.equal(1);
  });

  it("names the reference and its default provider when nothing provides it", async () => {
    let user: ExtensionAPI | undefined;
    await open({
      user: (kc) => {
        user = kc;
      },
    });
    expect(user!.services.get(greeter)).to.equal(undefined);
    expect(() => user!.services.require(greeter)).to.throw(
      /sdk:user needs the service test\.greeter \(says hello\).*sdk:default-greeter provides it/,
    );
  });

  it("lets a replacement take a default's place, tells watchers, and gives the default back when it goes", async () => {
    const seen: (string | undefined)[] = [];
    let replacement: (() => void) | undefined;
    await open({
      builtin: (kc) => kc.services.provide(greeter, () => ({ greet: () => "default" }), { fallback: true }),
      watcher: (kc) => kc.services.watch(greeter, (g) => seen.push(g?.greet("x"))),
      replacement: (kc) => {
        replacement = kc.services.provide(greeter, () => ({ greet: () => "replacement" }));
      },
    });
    expect(seen).to.deep.equal(["default", "replacement"]);
    replacement!();
    expect(seen).to.deep.equal(["default", "replacement", "default"]);
  });

  it("refuses a second provider of the same kind, naming both extensions", async () => {
    await open({
      first: (kc) => kc.services.provide(greeter, () => ({ greet: () => "1" })),
      second: (kc) => kc.services.provide(greeter, () => ({ greet: () => "2" })),
    });
    expect(errors).to.have.length(1);
    expect(errors[0]!.extension).to.equal("sdk:second");
    expect(errors[0]!.message).to.contain(
      "sdk:second provides test.greeter, which sdk:first already provides",
    );
    const cause = (errors[0]!.error as { cause?: unknown }).cause;
    expect(cause).to.be.instanceOf(KernelError);
    expect((cause as KernelError).code).to.equal("KC_ERR_SERVICE_CONFLICT");
  });

  it("removes providers on reload and calls the fresh factories' providers", async () => {
    let generation = 0;
    let user: ExtensionAPI | undefined;
    const runtime = await open({
      provider: (kc) => {
        const mine = ++generation;
        kc.services.provide(greeter, () => ({ greet: () => `generation ${mine}` }));
      },
      user: (kc) => {
        user = kc;
      },
    });
    expect(user!.services.require(greeter).greet("")).to.equal("generation 1");
    await runtime.reload();
    expect(user!.services.require(greeter).greet("")).to.equal("generation 2");
    await runtime.shutdown();
    expect(runtime.services.providerOf(greeter)).to.equal(undefined);
  });

  it("shares a process service between sessions whose provider is the same extension, not with another", async () => {
    const provide = (kc: ExtensionAPI) => {
      kc.services.provide(counter, () => {
        let n = 0;
        return { next: () => ++n };
      });
    };
    const apis: ExtensionAPI[] = [];
    const grab = (kc: ExtensionAPI) => {
      apis.push(kc);
    };
    await open({ counter: provide, user: grab });
    await open({ counter: provide, user: grab });
    await open({ "other-counter": provide, user: grab });
    const [a, b, other] = apis.map((kc) => kc.services.require(counter));
    expect(a!.next()).to.equal(1);
    expect(b!.next(), "the second session shares the first one's instance").to.equal(2);
    expect(other!.next(), "another provider has an instance of its own").to.equal(1);
    expect(a).to.equal(b);
  });

  it("refuses a service id that is not dotted lower camel case", () => {
    expect(() => defineService<unknown>("Bad Id", { description: "x" })).to.throw(/dotted lower camel case/);
  });
});
