/**
 * Stored sign-ins (`oauth` credentials in auth.json): renewed through the provider's `refreshCredential` before a
 * request when they are about to expire, once for concurrent requests, saved atomically with mode 0600, handed to
 * the provider without the refresh token, listed masked; a failed renewal is a clear error.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import {
  type AssistantMessage,
  type Disposable,
  type ExtensionContext,
  type ExtensionInfo,
  HookBus,
  type ModelInfo,
  type ProviderConfig,
  type ProviderStreamRequest,
} from "../../../kernel/index.js";
import { AssistantMessageWriter } from "../../../plugins/kit/provider/assistant-writer.js";
import { ModelService } from "../../../plugins/model-registry/model-service.js";
import { ProviderStore } from "../../../plugins/model-registry/provider-store.js";

const owner = { id: "test:refresh", origin: "builtin" } as unknown as ExtensionInfo;

describe("stored sign-ins are renewed before they expire", () => {
  let dir: string;
  let agentDir: string;
  let registrations: Disposable[];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "kc-refresh-"));
    agentDir = join(dir, "agent");
    mkdirSync(agentDir);
    registrations = [];
  });
  afterEach(() => {
    for (const r of registrations) r.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  const authPath = () => join(agentDir, "auth.json");
  const writeAuth = (value: unknown) => writeFileSync(authPath(), JSON.stringify(value), { mode: 0o600 });
  const readAuth = () => JSON.parse(readFileSync(authPath(), "utf8"));

  /** A service with provider "sub" whose implementation records each request and answers "ok". */
  function setup(refreshCredential?: ProviderConfig["refreshCredential"], refused = new Set<string>()) {
    const store = new ProviderStore();
    const models = new ModelService({
      store,
      bus: new HookBus({ onHandlerError: () => {} }),
      context: () => ({}) as ExtensionContext,
      agentDir,
      env: {},
    });
    const seen: ProviderStreamRequest[] = [];
    registrations.push(
      store.register(
        "sub",
        {
          api: "sub-api",
          models: [{ id: "m1" }],
          ...(refreshCredential ? { refreshCredential } : {}),
          streamSimple: (request) => {
            seen.push(request);
            const writer = new AssistantMessageWriter(request.model);
            if (refused.has(request.apiKey ?? "")) {
              writer.fail("auth", "HTTP 401: the access token was revoked");
              return writer.stream;
            }
            writer.start();
            const index = writer.textStart();
            writer.textDelta(index, "ok");
            writer.textEnd(index);
            writer.done("stop");
            return writer.stream;
          },
        },
        owner,
        {},
      ),
    );
    const model = models.find("sub", "m1") as ModelInfo;
    const ask = (): Promise<AssistantMessage> =>
      models.stream({ model, systemPrompt: "", messages: [], tools: [] }).result();
    return { models, model, seen, ask };
  }

  it("renews an expired token once for two concurrent requests and saves it with mode 0600", async () => {
    writeAuth({
      sub: {
        type: "oauth",
        key: "old-access",
        refresh: "old-refresh",
        expires: Date.now() - 1000,
        accountId: "acct-1",
      },
    });
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const { seen, ask, models, model } = setup(async (credential) => {
      calls++;
      expect(credential.refresh).to.equal("old-refresh");
      await gate;
      return { ...credential, key: "new-access", refresh: "new-refresh", expires: Date.now() + 3_600_000 };
    });
    const first = ask();
    const second = ask();
    const auth = models.getApiKeyAndHeaders(model);
    release();
    const answers = await Promise.all([first, second]);
    expect(answers.map((a) => a.stopReason)).to.deep.equal(["stop", "stop"]);
    expect(calls).to.equal(1);
    expect(seen.map((r) => r.apiKey)).to.deep.equal(["new-access", "new-access"]);
    expect((await auth).ok && ((await auth) as { apiKey?: string }).apiKey).to.equal("new-access");
    // The provider learns it is a sign-in (and its account), never the refresh token.
    expect(seen[0]!.credential).to.deep.include({ type: "oauth", accountId: "acct-1" });
    expect(seen[0]!.credential).to.not.have.property("refresh");
    expect(seen[0]!.credential).to.not.have.property("key");
    const stored = readAuth().sub;
    expect(stored).to.deep.include({
      type: "oauth",
      key: "new-access",
      refresh: "new-refresh",
      accountId: "acct-1",
    });
    expect(statSync(authPath()).mode & 0o777).to.equal(0o600);
    expect(models.listCredentials()).to.deep.equal([
      { provider: "sub", type: "oauth", masked: "****cess", expires: stored.expires },
    ]);
  });

  it("leaves a token with time left alone", async () => {
    writeAuth({ sub: { type: "oauth", key: "live-access", refresh: "r", expires: Date.now() + 3_600_000 } });
    let calls = 0;
    const { seen, ask } = setup(async (c) => {
      calls++;
      return c;
    });
    expect((await ask()).stopReason).to.equal("stop");
    expect(calls).to.equal(0);
    expect(seen[0]!.apiKey).to.equal("live-access");
  });

  it("a failed renewal fails the request with how to sign in again, and keeps the stored credential", async () => {
    const before = { sub: { type: "oauth", key: "old-access", refresh: "revoked", expires: Date.now() - 1 } };
    writeAuth(before);
    const { seen, ask, models, model } = setup(async () => {
      throw new Error("invalid_grant: the refresh token was revoked");
    });
    const answer = await ask();
    expect(answer.stopReason).to.equal("error");
    expect(answer.errorKind).to.equal("auth");
    expect(answer.errorMessage).to.contain(
      "Could not renew the sub sign-in: invalid_grant: the refresh token was revoked",
    );
    expect(answer.errorMessage).to.contain("Sign in again with `knightcode login sub`");
    expect(seen).to.have.length(0);
    expect(readAuth()).to.deep.equal(before);
    const auth = await models.getApiKeyAndHeaders(model);
    expect(auth.ok).to.equal(false);
    expect(!auth.ok && auth.error).to.contain("knightcode login sub");
  });

  it("an expired sign-in of a provider that cannot renew says to sign in again", async () => {
    writeAuth({ sub: { type: "oauth", key: "old", refresh: "r", expires: Date.now() - 1 } });
    const { ask } = setup();
    const answer = await ask();
    expect(answer.stopReason).to.equal("error");
    expect(answer.errorMessage).to.contain("has expired and the provider cannot renew it");
    expect(answer.errorMessage).to.contain("knightcode login sub");
  });

  it("a token the server refuses before its time is renewed once and the request asked again", async () => {
    writeAuth({ sub: { type: "oauth", key: "revoked", refresh: "r1", expires: Date.now() + 3_600_000 } });
    let calls = 0;
    const { seen, ask } = setup(
      async (c) => {
        calls++;
        return { ...c, key: "fresh", refresh: "r2", expires: Date.now() + 3_600_000 };
      },
      new Set(["revoked"]),
    );
    const answer = await ask();
    expect(answer.stopReason).to.equal("stop");
    expect(calls).to.equal(1);
    expect(seen.map((r) => r.apiKey)).to.deep.equal(["revoked", "fresh"]);
    expect(readAuth().sub).to.deep.include({ key: "fresh", refresh: "r2" });

    // Refused again after the renewal: the second answer stands (no loop).
    const again = setup(async (c) => ({ ...c, key: "also-refused" }), new Set(["fresh", "also-refused"]));
    const second = await again.ask();
    expect(second.stopReason).to.equal("error");
    expect(second.errorKind).to.equal("auth");
    expect(again.seen.map((r) => r.apiKey)).to.deep.equal(["fresh", "also-refused"]);
  });

  it("waits for another process's renewal (auth.json.lock) and uses what it saved", async () => {
    writeAuth({ sub: { type: "oauth", key: "old", refresh: "r", expires: Date.now() - 1 } });
    writeFileSync(`${authPath()}.lock`, "");
    let calls = 0;
    const { ask, seen } = setup(async (c) => {
      calls++;
      return c;
    });
    const answer = ask();
    // The other process saves its renewal, then releases the lock.
    setTimeout(() => {
      writeAuth({ sub: { type: "oauth", key: "theirs", refresh: "r2", expires: Date.now() + 3_600_000 } });
      rmSync(`${authPath()}.lock`);
    }, 150);
    expect((await answer).stopReason).to.equal("stop");
    expect(calls).to.equal(0);
    expect(seen[0]!.apiKey).to.equal("theirs");
  });
});
