import { expect } from "chai";
import { Container, definePlugin } from "../../../kernel/container/container.js";
import { createToken, type Token } from "../../../kernel/container/tokens.js";
import { KernelError, MissingServiceError } from "../../../kernel/errors.js";

interface Named {
  name: string;
}

function catchError(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected the call to throw");
}

describe("kernel/container tokens", () => {
  it("createToken rejects ids that are not dotted lower camel case", () => {
    for (const id of [
      "core",
      "Core.x",
      "core.X",
      "core..x",
      "core.x.",
      ".core",
      "core-x.y",
      "core.x y",
      "",
    ]) {
      const error = catchError(() => createToken(id, { scope: "root" }));
      expect(error, id).to.be.instanceOf(KernelError);
      expect((error as KernelError).code, id).to.equal("KC_ERR_INVALID_TOKEN");
      expect((error as KernelError).message, id).to.include(`"${id}"`);
    }
  });

  it("createToken accepts dotted lower camel case ids and keeps scope and description", () => {
    const token = createToken<number>("core.sessionStore.v2", { scope: "session", description: "the store" });
    expect(token.id).to.equal("core.sessionStore.v2");
    expect(token.scope).to.equal("session");
    expect(token.description).to.equal("the store");
    expect(Object.isFrozen(token)).to.equal(true);
  });

  it("token toString gives token{<id>}", () => {
    const token = createToken("core.x", { scope: "root" });
    expect(token.toString()).to.equal("token{core.x}");
    expect(`${token}`).to.equal("token{core.x}");
  });
});

describe("kernel/container Container", () => {
  it("creates a root plugin once per container and shares it with every scope", () => {
    const token = createToken<Named>("test.root", { scope: "root" });
    let created = 0;
    const container = new Container().provide(
      definePlugin({
        id: "plugin:root",
        provides: token,
        create: () => {
          created += 1;
          return { name: `root#${created}` };
        },
      }),
    );
    const first = container.resolve(token);
    expect(container.resolve(token)).to.equal(first);
    expect(container.createScope().resolve(token)).to.equal(first);
    expect(container.createScope().resolve(token)).to.equal(first);
    expect(created).to.equal(1);
    expect(first.name).to.equal("root#1");
  });

  it("each container has its own root plugin instance", () => {
    const token = createToken<Named>("test.root", { scope: "root" });
    const plugin = definePlugin({ id: "plugin:root", provides: token, create: () => ({ name: "root" }) });
    const a = new Container().provide(plugin).resolve(token);
    const b = new Container().provide(plugin).resolve(token);
    expect(a).to.not.equal(b);
  });

  it("passes a plugin its declared deps under the names used in `deps`", () => {
    const config = createToken<{ level: number }>("test.config", { scope: "root" });
    const logger = createToken<Named>("test.logger", { scope: "root" });
    const service = createToken<{ got: Record<string, unknown> }>("test.service", { scope: "root" });
    const configValue = { level: 3 };
    const container = new Container()
      .provideValue(config, configValue)
      .provide(definePlugin({ id: "plugin:logger", provides: logger, create: () => ({ name: "log" }) }))
      .provide(
        definePlugin({
          id: "plugin:service",
          provides: service,
          deps: { settings: config, log: logger },
          create: (deps) => ({ got: { ...deps } }),
        }),
      );
    const { got } = container.resolve(service);
    expect(Object.keys(got).sort()).to.deep.equal(["log", "settings"]);
    expect(got.settings).to.equal(configValue);
    expect(got.log).to.equal(container.resolve(logger));
  });

  it("creates a session plugin once per scope and gives two scopes different instances", () => {
    const token = createToken<Named>("test.session", { scope: "session" });
    let created = 0;
    const container = new Container().provide(
      definePlugin({
        id: "plugin:session",
        provides: token,
        create: () => {
          created += 1;
          return { name: `session#${created}` };
        },
      }),
    );
    const one = container.createScope();
    const two = container.createScope();
    const a = one.resolve(token);
    expect(one.resolve(token)).to.equal(a);
    const b = two.resolve(token);
    expect(two.resolve(token)).to.equal(b);
    expect(a).to.not.equal(b);
    expect(created).to.equal(2);
  });

  it("gives a session plugin the session values of its own scope and the shared root services", () => {
    const root = createToken<Named>("test.root", { scope: "root" });
    const bus = createToken<Named>("test.bus", { scope: "session" });
    const session = createToken<{ root: Named; bus: Named }>("test.session", { scope: "session" });
    const container = new Container()
      .provide(definePlugin({ id: "plugin:root", provides: root, create: () => ({ name: "root" }) }))
      .provide(
        definePlugin({
          id: "plugin:session",
          provides: session,
          deps: { root, bus },
          create: (deps) => ({ root: deps.root, bus: deps.bus }),
        }),
      );
    const busA = { name: "busA" };
    const busB = { name: "busB" };
    const a = container.createScope([[bus, busA]]).resolve(session);
    const b = container.createScope([[bus, busB]]).resolve(session);
    expect(a.bus).to.equal(busA);
    expect(b.bus).to.equal(busB);
    expect(a.root).to.equal(b.root);
    expect(a.root).to.equal(container.resolve(root));
  });

  describe("validate", () => {
    it("throws one MissingServiceError naming the plugin and the token it needs that nothing provides", () => {
      const a = createToken<Named>("test.a", { scope: "root" });
      const b = createToken<Named>("test.b", { scope: "root" });
      const container = new Container().provide(
        definePlugin({ id: "plugin:b", provides: b, deps: { a }, create: () => ({ name: "b" }) }),
      );
      const error = catchError(() => container.validate());
      expect(error).to.be.instanceOf(MissingServiceError);
      expect((error as MissingServiceError).code).to.equal("KC_ERR_MISSING_SERVICE");
      expect((error as Error).message).to.include('plugin "plugin:b" needs token{test.a}');
    });

    it("reports every problem in a single error message", () => {
      const a = createToken<Named>("test.a", { scope: "root" });
      const b = createToken<Named>("test.b", { scope: "root" });
      const c = createToken<Named>("test.c", { scope: "root" });
      const d = createToken<Named>("test.d", { scope: "root" });
      const container = new Container()
        .provide(definePlugin({ id: "plugin:b", provides: b, deps: { a }, create: () => ({ name: "b" }) }))
        .provide(definePlugin({ id: "plugin:d", provides: d, deps: { c }, create: () => ({ name: "d" }) }));
      const message = (catchError(() => container.validate()) as Error).message;
      expect(message).to.include('plugin "plugin:b" needs token{test.a}');
      expect(message).to.include('plugin "plugin:d" needs token{test.c}');
    });

    it("reports a root plugin that depends on a session-scoped token", () => {
      const bus = createToken<Named>("test.bus", { scope: "session" });
      const root = createToken<Named>("test.root", { scope: "root" });
      const container = new Container()
        .provide(definePlugin({ id: "plugin:bus", provides: bus, create: () => ({ name: "bus" }) }))
        .provide(
          definePlugin({ id: "plugin:root", provides: root, deps: { bus }, create: () => ({ name: "r" }) }),
        );
      const error = catchError(() => container.validate());
      expect(error).to.be.instanceOf(MissingServiceError);
      const message = (error as Error).message;
      expect(message).to.include('plugin "plugin:root"');
      expect(message).to.include("token{test.root}");
      expect(message).to.include("session-scoped token{test.bus}");
    });

    it("passes when every dependency is provided", () => {
      const a = createToken<Named>("test.a", { scope: "root" });
      const b = createToken<Named>("test.b", { scope: "root" });
      const container = new Container()
        .provideValue(a, { name: "a" })
        .provide(definePlugin({ id: "plugin:b", provides: b, deps: { a }, create: () => ({ name: "b" }) }));
      expect(() => container.validate()).to.not.throw();
    });

    it("accepts session tokens given as session values, but only when they are listed", () => {
      const bus = createToken<Named>("test.bus", { scope: "session" });
      const session = createToken<Named>("test.session", { scope: "session" });
      const container = new Container().provide(
        definePlugin({
          id: "plugin:session",
          provides: session,
          deps: { bus },
          create: () => ({ name: "s" }),
        }),
      );
      expect(() => container.validate()).to.throw(MissingServiceError, "token{test.bus}");
      expect(() => container.validate([bus])).to.not.throw();
    });
  });

  it("providing a token again replaces the earlier provider", () => {
    const token = createToken<Named>("test.swap", { scope: "root" });
    let firstCreated = 0;
    const container = new Container()
      .provide(
        definePlugin({
          id: "plugin:first",
          provides: token,
          create: () => {
            firstCreated += 1;
            return { name: "first" };
          },
        }),
      )
      .provide(definePlugin({ id: "plugin:second", provides: token, create: () => ({ name: "second" }) }));
    expect(container.resolve(token).name).to.equal("second");
    expect(firstCreated).to.equal(0);
  });

  it("providing a token again after it was resolved makes resolve return the replacement's instance", () => {
    const token = createToken<Named>("test.swap", { scope: "root" });
    const container = new Container().provide(
      definePlugin({ id: "plugin:first", provides: token, create: () => ({ name: "first" }) }),
    );
    expect(container.resolve(token).name).to.equal("first");
    container.provide(
      definePlugin({ id: "plugin:second", provides: token, create: () => ({ name: "second" }) }),
    );
    expect(container.resolve(token).name).to.equal("second");
  });

  it("resolve of an unprovided token throws MissingServiceError naming the token", () => {
    const token = createToken<Named>("test.nothing", { scope: "root", description: "nobody home" });
    const container = new Container();
    const error = catchError(() => container.resolve(token));
    expect(error).to.be.instanceOf(MissingServiceError);
    expect((error as MissingServiceError).code).to.equal("KC_ERR_MISSING_SERVICE");
    expect((error as Error).message).to.include("token{test.nothing}");
    expect((error as Error).message).to.include("nobody home");
    const scopeError = catchError(() => container.createScope().resolve(token));
    expect(scopeError).to.be.instanceOf(MissingServiceError);
    expect((scopeError as Error).message).to.include("token{test.nothing}");
  });

  it("provideValue on the container rejects a session-scoped token", () => {
    const bus = createToken<Named>("test.bus", { scope: "session" });
    const error = catchError(() => new Container().provideValue(bus, { name: "bus" }));
    expect(error).to.be.instanceOf(KernelError);
    expect((error as KernelError).code).to.equal("KC_ERR_SCOPE");
    expect((error as Error).message).to.include("token{test.bus}");
  });

  describe("scope disposal", () => {
    function recordingPlugins(
      ids: string[],
      order: string[],
      failing: Record<string, Error> = {},
    ): { container: Container; tokens: Token<Named>[] } {
      const container = new Container();
      const tokens = ids.map((id) => createToken<Named>(`test.${id}`, { scope: "session" }));
      ids.forEach((id, index) => {
        container.provide(
          definePlugin({
            id: `plugin:${id}`,
            provides: tokens[index]!,
            create: () => ({ name: id }),
            dispose: (service) => {
              order.push(service.name);
              if (failing[id]) throw failing[id];
            },
          }),
        );
      });
      return { container, tokens };
    }

    it("runs plugin dispose hooks last-in first-out", async () => {
      const order: string[] = [];
      const { container, tokens } = recordingPlugins(["a", "b", "c"], order);
      const scope = container.createScope();
      for (const token of tokens) scope.resolve(token);
      expect(order).to.deep.equal([]);
      const errors = await scope.dispose();
      expect(errors).to.deep.equal([]);
      expect(order).to.deep.equal(["c", "b", "a"]);
    });

    it("disposes in reverse creation order, so a dependency is disposed after its dependent", async () => {
      const order: string[] = [];
      const base = createToken<Named>("test.base", { scope: "session" });
      const top = createToken<Named>("test.top", { scope: "session" });
      const container = new Container()
        .provide(
          definePlugin({
            id: "plugin:top",
            provides: top,
            deps: { base },
            create: () => ({ name: "top" }),
            dispose: (s) => {
              order.push(s.name);
            },
          }),
        )
        .provide(
          definePlugin({
            id: "plugin:base",
            provides: base,
            create: () => ({ name: "base" }),
            dispose: (s) => {
              order.push(s.name);
            },
          }),
        );
      const scope = container.createScope();
      scope.resolve(top);
      await scope.dispose();
      expect(order).to.deep.equal(["top", "base"]);
    });

    it("awaits async dispose hooks one after another", async () => {
      const order: string[] = [];
      const slow = createToken<Named>("test.slow", { scope: "session" });
      const fast = createToken<Named>("test.fast", { scope: "session" });
      const container = new Container()
        .provide(
          definePlugin({
            id: "plugin:slow",
            provides: slow,
            create: () => ({ name: "slow" }),
            dispose: async () => {
              order.push("slow:start");
              await new Promise((resolve) => setTimeout(resolve, 5));
              order.push("slow:end");
            },
          }),
        )
        .provide(
          definePlugin({
            id: "plugin:fast",
            provides: fast,
            create: () => ({ name: "fast" }),
            dispose: async () => {
              order.push("fast");
            },
          }),
        );
      const scope = container.createScope();
      scope.resolve(fast);
      scope.resolve(slow);
      await scope.dispose();
      expect(order).to.deep.equal(["slow:start", "slow:end", "fast"]);
    });

    it("runs every disposer even when one throws and returns the failures", async () => {
      const order: string[] = [];
      const boom = new Error("boom");
      const { container, tokens } = recordingPlugins(["a", "b", "c"], order, { b: boom });
      const scope = container.createScope();
      for (const token of tokens) scope.resolve(token);
      const errors = await scope.dispose();
      expect(order).to.deep.equal(["c", "b", "a"]);
      expect(errors).to.have.length(1);
      const failure = errors[0] as KernelError;
      expect(failure).to.be.instanceOf(KernelError);
      expect(failure.code).to.equal("KC_ERR_DISPOSE");
      expect(failure.message).to.include("plugin:b");
      expect(failure.cause).to.equal(boom);
    });

    it("only disposes services the scope actually created", async () => {
      const order: string[] = [];
      const { container, tokens } = recordingPlugins(["a", "b"], order);
      const scope = container.createScope();
      scope.resolve(tokens[1]!);
      await scope.dispose();
      expect(order).to.deep.equal(["b"]);
    });

    it("disposing a scope twice is a no-op", async () => {
      const order: string[] = [];
      const { container, tokens } = recordingPlugins(["a"], order, { a: new Error("once") });
      const scope = container.createScope();
      scope.resolve(tokens[0]!);
      expect(await scope.dispose()).to.have.length(1);
      expect(await scope.dispose()).to.deep.equal([]);
      expect(order).to.deep.equal(["a"]);
      expect(scope.isDisposed).to.equal(true);
    });

    it("resolving from a disposed scope throws", async () => {
      const { container, tokens } = recordingPlugins(["a"], []);
      const scope = container.createScope();
      scope.resolve(tokens[0]!);
      await scope.dispose();
      const error = catchError(() => scope.resolve(tokens[0]!));
      expect(error).to.be.instanceOf(KernelError);
      expect((error as KernelError).code).to.equal("KC_ERR_DISPOSED");
      expect((error as Error).message).to.include("token{test.a}");
    });

    it("disposing a scope leaves root services alive", async () => {
      const order: string[] = [];
      const root = createToken<Named>("test.root", { scope: "root" });
      const container = new Container().provide(
        definePlugin({
          id: "plugin:root",
          provides: root,
          create: () => ({ name: "root" }),
          dispose: (s) => {
            order.push(s.name);
          },
        }),
      );
      const scope = container.createScope();
      const instance = scope.resolve(root);
      await scope.dispose();
      expect(order).to.deep.equal([]);
      expect(container.resolve(root)).to.equal(instance);
      await container.dispose();
      expect(order).to.deep.equal(["root"]);
    });
  });

  describe("container.dispose", () => {
    it("disposes open scopes newest first and then root services last-in first-out", async () => {
      const order: string[] = [];
      const rootA = createToken<Named>("test.rootA", { scope: "root" });
      const rootB = createToken<Named>("test.rootB", { scope: "root" });
      const session = createToken<Named>("test.session", { scope: "session" });
      const name = createToken<string>("test.name", { scope: "session" });
      const record = (s: Named) => {
        order.push(s.name);
      };
      const container = new Container()
        .provide(
          definePlugin({
            id: "plugin:rootA",
            provides: rootA,
            create: () => ({ name: "rootA" }),
            dispose: record,
          }),
        )
        .provide(
          definePlugin({
            id: "plugin:rootB",
            provides: rootB,
            create: () => ({ name: "rootB" }),
            dispose: record,
          }),
        )
        .provide(
          definePlugin({
            id: "plugin:session",
            provides: session,
            deps: { name },
            create: (deps) => ({ name: deps.name }),
            dispose: record,
          }),
        );
      container.resolve(rootA);
      const first = container.createScope([[name, "scope1"]]);
      first.resolve(session);
      const second = container.createScope([[name, "scope2"]]);
      second.resolve(session);
      container.resolve(rootB);
      const closed = container.createScope([[name, "closed"]]);
      closed.resolve(session);
      await closed.dispose();
      order.length = 0;

      const errors = await container.dispose();
      expect(errors).to.deep.equal([]);
      expect(order).to.deep.equal(["scope2", "scope1", "rootB", "rootA"]);
      expect(first.isDisposed).to.equal(true);
      expect(second.isDisposed).to.equal(true);
    });

    it("collects the failures of scopes and root services and still runs every disposer", async () => {
      const order: string[] = [];
      const rootError = new Error("root failed");
      const sessionError = new Error("session failed");
      const root = createToken<Named>("test.root", { scope: "root" });
      const session = createToken<Named>("test.session", { scope: "session" });
      const container = new Container()
        .provide(
          definePlugin({
            id: "plugin:root",
            provides: root,
            create: () => ({ name: "root" }),
            dispose: () => {
              order.push("root");
              throw rootError;
            },
          }),
        )
        .provide(
          definePlugin({
            id: "plugin:session",
            provides: session,
            create: () => ({ name: "session" }),
            dispose: () => {
              order.push("session");
              throw sessionError;
            },
          }),
        );
      container.resolve(root);
      container.createScope().resolve(session);
      const errors = (await container.dispose()) as KernelError[];
      expect(order).to.deep.equal(["session", "root"]);
      expect(errors.map((e) => e.cause)).to.deep.equal([sessionError, rootError]);
    });

    it("disposing the container twice is a no-op and no scope can be created afterwards", async () => {
      const order: string[] = [];
      const root = createToken<Named>("test.root", { scope: "root" });
      const container = new Container().provide(
        definePlugin({
          id: "plugin:root",
          provides: root,
          create: () => ({ name: "root" }),
          dispose: (s) => {
            order.push(s.name);
          },
        }),
      );
      container.resolve(root);
      await container.dispose();
      expect(await container.dispose()).to.deep.equal([]);
      expect(order).to.deep.equal(["root"]);
      const error = catchError(() => container.createScope());
      expect(error).to.be.instanceOf(KernelError);
      expect((error as KernelError).code).to.equal("KC_ERR_DISPOSED");
    });
  });

  it("scope.provideValue values resolve in that scope only", () => {
    const bus = createToken<Named>("test.bus", { scope: "session" });
    const container = new Container();
    const one = container.createScope();
    const two = container.createScope();
    const value = { name: "bus" };
    one.provideValue(bus, value);
    expect(one.has(bus)).to.equal(true);
    expect(one.resolve(bus)).to.equal(value);
    expect(one.tryResolve(bus)).to.equal(value);
    expect(two.has(bus)).to.equal(false);
    expect(two.tryResolve(bus)).to.equal(undefined);
    expect(() => two.resolve(bus)).to.throw(MissingServiceError, "token{test.bus}");
    expect(container.has(bus)).to.equal(false);
  });
});
