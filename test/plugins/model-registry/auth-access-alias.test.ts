/**
 * pi's auth.json keeps a sign-in's access token as `access` where KnightCode keeps `key`: such an entry reads as if
 * `key` held it (so a pi auth.json copied as it is works), its renewal keeps `access` current, and the token never
 * reaches the provider among the credential's other fields.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import {
  type Disposable,
  type ExtensionContext,
  type ExtensionInfo,
  HookBus,
  type ModelInfo,
  type ProviderStreamRequest,
} from "../../../kernel/index.js";
import { AssistantMessageWriter } from "../../../plugins/kit/provider/assistant-writer.js";
import { AuthFile, withKeyAliases } from "../../../plugins/model-registry/auth-file.js";
import { ModelService } from "../../../plugins/model-registry/model-service.js";
import { ProviderStore } from "../../../plugins/model-registry/provider-store.js";

const owner = { id: "test:alias", origin: "builtin" } as unknown as ExtensionInfo;

describe("auth.json: pi's `access` is read as `key`", () => {
  let dir: string;
  let registrations: Disposable[];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "kc-access-"));
    mkdirSync(join(dir, "agent"));
    registrations = [];
  });
  afterEach(() => {
    for (const r of registrations) r.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  const authPath = () => join(dir, "agent", "auth.json");
  const writeAuth = (value: unknown) => writeFileSync(authPath(), JSON.stringify(value), { mode: 0o600 });

  it("an entry with `access` and no `key` gets it as `key`; `key` wins when both are there", () => {
    writeAuth({
      a: { type: "oauth", access: "pi-access", refresh: "r", expires: 1 },
      b: { type: "oauth", key: "ours", access: "theirs" },
      c: { type: "api_key", key: "sk-1" },
      d: { type: "oauth", access: "" },
    });
    const entries = new AuthFile(authPath()).read();
    expect(entries.a).to.deep.equal({
      type: "oauth",
      access: "pi-access",
      key: "pi-access",
      refresh: "r",
      expires: 1,
    });
    expect(entries.b!.key).to.equal("ours");
    expect(entries.c).to.deep.equal({ type: "api_key", key: "sk-1" });
    expect(entries.d!.key).to.equal(undefined);
    // Untouched input is returned as it is; the file itself is not rewritten by reading.
    const plain = { x: { type: "api_key", key: "k" } };
    expect(withKeyAliases(plain)).to.equal(plain);
    expect(JSON.parse(readFileSync(authPath(), "utf8")).a).to.not.have.property("key");
  });

  it("a pi-form sign-in is used, renewed with `access` kept current, and its token stays out of the provider's credential", async () => {
    writeAuth({
      sub: {
        type: "oauth",
        access: "pi-old",
        refresh: "pi-refresh",
        expires: Date.now() - 1000,
        accountId: "a1",
      },
    });
    const store = new ProviderStore();
    const models = new ModelService({
      store,
      bus: new HookBus({ onHandlerError: () => {} }),
      context: () => ({}) as ExtensionContext,
      agentDir: join(dir, "agent"),
      env: {},
    });
    const seen: ProviderStreamRequest[] = [];
    const renewedFrom: Record<string, unknown>[] = [];
    registrations.push(
      store.register(
        "sub",
        {
          api: "sub-api",
          models: [{ id: "m1" }],
          refreshCredential: async (credential) => {
            renewedFrom.push(credential);
            return { ...credential, key: "kc-new", refresh: "kc-refresh", expires: Date.now() + 3_600_000 };
          },
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
    expect(models.listCredentials()).to.deep.equal([
      {
        provider: "sub",
        type: "oauth",
        masked: "****",
        expires: JSON.parse(readFileSync(authPath(), "utf8")).sub.expires,
      },
    ]);
    const model = models.find("sub", "m1") as ModelInfo;
    const answer = await models.stream({ model, systemPrompt: "", messages: [], tools: [] }).result();
    expect(answer.stopReason).to.equal("stop");
    expect(renewedFrom[0]).to.deep.include({ key: "pi-old", refresh: "pi-refresh" });
    expect(seen[0]!.apiKey).to.equal("kc-new");
    expect(seen[0]!.credential).to.deep.include({ type: "oauth", accountId: "a1" });
    expect(seen[0]!.credential).to.not.have.any.keys("access", "key", "refresh");
    const stored = JSON.parse(readFileSync(authPath(), "utf8")).sub;
    expect(stored).to.deep.include({ key: "kc-new", access: "kc-new", refresh: "kc-refresh" });
    expect(statSync(authPath()).mode & 0o777).to.equal(0o600);
  });
});
