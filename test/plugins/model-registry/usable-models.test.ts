/**
 * `ProviderConfig.usableModels`: a provider says which of its catalogue models the stored sign-in can use (from the
 * credential's non-secret fields). Model lists leave the others out, a request for one fails before anything is
 * sent, naming the sign-in's models, and `getApiKeyAndHeaders` (the app-server's `usable`) refuses it too. Models
 * a models.json entry adds, API keys and providers that say nothing are not limited.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { listModels, pickModel } from "../../../builtin-extensions/mode-app-server/models.js";
import {
  type Disposable,
  type ExtensionContext,
  type ExtensionInfo,
  HookBus,
  type ProviderConfig,
  type ProviderStreamRequest,
} from "../../../kernel/index.js";
import { AssistantMessageWriter } from "../../../plugins/kit/provider/assistant-writer.js";
import { ModelService } from "../../../plugins/model-registry/model-service.js";
import { ProviderStore } from "../../../plugins/model-registry/provider-store.js";

const owner = { id: "test:usable-models", origin: "builtin" } as unknown as ExtensionInfo;

describe("ProviderConfig.usableModels: the models a stored sign-in has", () => {
  let dir: string;
  let agentDir: string;
  let registrations: Disposable[];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "kc-usable-"));
    agentDir = join(dir, "agent");
    mkdirSync(agentDir);
    registrations = [];
  });
  afterEach(() => {
    for (const r of registrations) r.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  const writeAuth = (value: unknown) =>
    writeFileSync(join(agentDir, "auth.json"), JSON.stringify(value), { mode: 0o600 });

  /** Provider "sub" with models a, b and c, whose sign-in keeps the ids it has as `has`. */
  function setup(usableModels?: ProviderConfig["usableModels"]) {
    const store = new ProviderStore();
    const seen: ProviderStreamRequest[] = [];
    const asked: unknown[] = [];
    registrations.push(
      store.register(
        "sub",
        {
          api: "sub-api",
          apiKey: "SUB_KEY",
          models: [{ id: "a" }, { id: "b" }, { id: "c" }],
          usableModels:
            usableModels ??
            ((credential) => {
              asked.push(credential);
              return Array.isArray(credential.has) ? (credential.has as string[]) : undefined;
            }),
          streamSimple: (request) => {
            seen.push(request);
            const writer = new AssistantMessageWriter(request.model);
            writer.start();
            writer.done("stop");
            return writer.stream;
          },
        },
        owner,
        {},
      ),
    );
    const models = new ModelService({
      store,
      bus: new HookBus({ onHandlerError: () => {} }),
      context: () => ({}) as ExtensionContext,
      agentDir,
      env: {},
    });
    const usable = () => models.getUsable().map((u) => `${u.model.provider}/${u.model.id}`);
    return { models, seen, asked, usable };
  }

  it("lists only the sign-in's models, refuses another before any request, naming the sign-in's models", async () => {
    writeAuth({
      sub: { type: "oauth", key: "tok", refresh: "r", expires: Date.now() + 3_600_000, has: ["c", "a", "z"] },
    });
    const { models, seen, asked, usable } = setup();
    expect(usable()).to.deep.equal(["sub/a", "sub/c"]);
    // The provider sees the non-secret fields only.
    expect(asked[0]).to.deep.equal({
      type: "oauth",
      expires: (asked[0] as { expires: number }).expires,
      has: ["c", "a", "z"],
    });

    const refused = await models
      .stream({ model: models.find("sub", "b")!, systemPrompt: "", messages: [], tools: [] })
      .result();
    expect(refused.stopReason).to.equal("error");
    expect(refused.errorMessage).to.contain(
      "The sub account signed in does not offer sub/b; its models: c, a.",
    );
    expect(seen).to.have.length(0);

    const ok = await models
      .stream({ model: models.find("sub", "a")!, systemPrompt: "", messages: [], tools: [] })
      .result();
    expect(ok.stopReason).to.equal("stop");
    expect(seen.map((r) => r.model.id)).to.deep.equal(["a"]);

    // getApiKeyAndHeaders (what the app-server's model/list and pickers ask) refuses it as well.
    const auth = await models.getApiKeyAndHeaders(models.find("sub", "b")!);
    expect(auth).to.deep.include({ ok: false });
    expect(auth.ok ? "" : auth.error).to.contain("does not offer sub/b");
    expect(await models.getApiKeyAndHeaders(models.find("sub", "a")!)).to.deep.include({
      ok: true,
      apiKey: "tok",
    });
    const listed = await listModels(models.runtime(), undefined, undefined);
    expect(listed.filter((m) => m.provider === "sub" && m.usable).map((m) => m.model)).to.deep.equal([
      "a",
      "c",
    ]);
    let error: unknown;
    await pickModel(models.runtime(), "sub/b", undefined, undefined).catch((e) => {
      error = e;
    });
    expect(String((error as Error).message)).to.contain(
      "cannot be used here: The sub account signed in does not offer sub/b",
    );
  });

  it("does not limit models a models.json entry adds, an API key, or a sign-in that keeps no list", () => {
    writeFileSync(
      join(agentDir, "models.json"),
      JSON.stringify({ providers: { sub: { models: [{ id: "a" }, { id: "b" }, { id: "mine" }] } } }),
    );
    writeAuth({ sub: { type: "oauth", key: "tok", has: ["a"] } });
    expect(setup().usable()).to.deep.equal(["sub/a", "sub/mine"]);

    writeAuth({ sub: { type: "api_key", key: "sk-1", has: ["a"] } });
    const keyed = setup();
    expect(keyed.usable()).to.deep.equal(["sub/a", "sub/b", "sub/mine"]);
    expect(keyed.asked).to.have.length(0);

    writeAuth({ sub: { type: "oauth", key: "tok" } });
    expect(setup().usable()).to.deep.equal(["sub/a", "sub/b", "sub/mine"]);
  });
});
