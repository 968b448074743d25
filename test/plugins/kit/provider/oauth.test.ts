/**
 * The provider kit's sign-in helpers against an authorization server on 127.0.0.1: the PKCE flow (the test plays
 * the browser by following the printed URL), the paste fallback, state mismatch, denial; the RFC 8628 device flow
 * (pending, slow_down, denied, expired); refresh; endpoint overrides.
 */
import { createHash } from "node:crypto";
import {
  authorizationCodeLogin,
  deviceAuthorizationLogin,
  OAuthError,
  oauthEndpoint,
  type ProviderLoginIO,
  parseAuthorizationInput,
  refreshOAuthCredential,
} from "@knightcodeai/cli/kit";
import { expect } from "chai";
import { type RecordedRequest, startTestServer, type TestServer } from "../../../helpers/sse-server.js";

/** A login IO: notices are kept; answers come from `answers` in order (a pending promise when none is left). */
function loginIO(answers: (string | undefined)[] = [], signal?: AbortSignal) {
  const notices: string[] = [];
  const asked: string[] = [];
  let noticed!: (text: string) => void;
  const firstNotice = new Promise<string>((resolve) => {
    noticed = resolve;
  });
  const io: ProviderLoginIO = {
    notify: (message) => {
      notices.push(message);
      noticed(message);
    },
    input: (title, options) => {
      asked.push(title);
      if (answers.length === 0) {
        return new Promise((resolve) => options?.signal?.addEventListener("abort", () => resolve(undefined)));
      }
      return Promise.resolve(answers.shift());
    },
    ...(signal ? { signal } : {}),
  };
  return { io, notices, asked, firstNotice };
}

const form = (request: RecordedRequest) => Object.fromEntries(new URLSearchParams(String(request.body)));
const json = (res: import("node:http").ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
};

async function failure(promise: Promise<unknown>): Promise<OAuthError> {
  try {
    await promise;
  } catch (error) {
    expect(error).to.be.instanceOf(OAuthError);
    return error as OAuthError;
  }
  throw new Error("expected the sign-in to fail");
}

describe("provider kit: OAuth sign-in", () => {
  let server: TestServer;
  beforeEach(async () => {
    server = await startTestServer();
  });
  afterEach(() => server.close());

  const pkceOptions = () => ({
    title: "Test subscription",
    authorizeUrl: `${server.url}/authorize`,
    tokenUrl: `${server.url}/token`,
    clientId: "client-1",
    scope: "a b",
    callback: { port: 0, path: "/callback", redirectHost: "127.0.0.1" },
    timeoutMs: 10_000,
  });

  /** The authorization URL from the first notice. */
  const authorizeUrl = (notice: string) => new URL(notice.match(/https?:\/\/\S+authorize\S*/)![0]);

  it("PKCE: the browser's redirect to the 127.0.0.1 callback completes the sign-in", async () => {
    server.respond((req, res) => {
      if (req.path === "/token")
        return json(res, 200, { access_token: "at", refresh_token: "rt", expires_in: 60 });
      res.writeHead(404).end();
    });
    const { io, firstNotice } = loginIO();
    const signIn = authorizationCodeLogin(io, pkceOptions());
    const url = authorizeUrl(await firstNotice);
    const params = url.searchParams;
    expect(params.get("client_id")).to.equal("client-1");
    expect(params.get("code_challenge_method")).to.equal("S256");
    expect(params.get("scope")).to.equal("a b");
    const redirect = new URL(params.get("redirect_uri")!);
    expect(redirect.hostname).to.equal("127.0.0.1");
    // A stray request without our state is refused, and the flow keeps waiting.
    const stray = await fetch(`${redirect.origin}/callback?code=evil&state=other`);
    expect(stray.status).to.equal(400);
    const page = await fetch(`${redirect}?code=the-code&state=${params.get("state")}`);
    expect(page.status).to.equal(200);
    const credential = await signIn;
    expect(credential).to.deep.include({ type: "oauth", key: "at", refresh: "rt" });
    expect(credential!.expires).to.be.within(Date.now() + 50_000, Date.now() + 61_000);
    const token = form(server.requests.find((r) => r.path === "/token")!);
    expect(token).to.deep.include({
      grant_type: "authorization_code",
      code: "the-code",
      client_id: "client-1",
    });
    expect(token.redirect_uri).to.equal(redirect.toString());
    const challenge = createHash("sha256").update(token.code_verifier!).digest("base64url");
    expect(challenge).to.equal(params.get("code_challenge"));
    // The callback server is closed afterwards.
    const closed = await fetch(redirect).then(
      () => "open",
      () => "closed",
    );
    expect(closed).to.equal("closed");
  });

  it("PKCE: a pasted code#state works, a pasted answer with another state is refused", async () => {
    server.respond((req, res) => {
      const code = typeof req.body === "object" ? req.body.code : form(req).code;
      json(res, 200, { access_token: `at-${code}` });
    });
    const first = loginIO();
    let state = "";
    first.io.input = async () => {
      state = authorizeUrl(first.notices[0]!).searchParams.get("state")!;
      return `pasted-code#${state}`;
    };
    const credential = await authorizationCodeLogin(first.io, {
      ...pkceOptions(),
      tokenFormat: "json",
      stateInTokenRequest: true,
    });
    expect(credential).to.deep.equal({ type: "oauth", key: "at-pasted-code" });
    const body = server.requests[0]!.body as Record<string, string>;
    expect(body).to.deep.include({ code: "pasted-code", state, grant_type: "authorization_code" });

    const second = loginIO([`http://localhost:1/callback?code=x&state=forged`]);
    const error = await failure(authorizationCodeLogin(second.io, pkceOptions()));
    expect(error.reason).to.equal("state_mismatch");
    expect(server.requests).to.have.length(1);
  });

  it("PKCE: denial in the browser, cancelling the paste prompt, and a refused code exchange", async () => {
    const denied = loginIO();
    const signIn = authorizationCodeLogin(denied.io, pkceOptions());
    signIn.catch(() => {}); // it fails while the test's browser is still reading the page
    const url = authorizeUrl(await denied.firstNotice);
    await fetch(
      `${url.searchParams.get("redirect_uri")}?error=access_denied&state=${url.searchParams.get("state")}`,
    );
    expect((await failure(signIn)).reason).to.equal("denied");

    expect(await authorizationCodeLogin(loginIO([undefined]).io, pkceOptions())).to.equal(undefined);

    server.respond((_req, res) =>
      json(res, 400, { error: "invalid_grant", error_description: "code already used" }),
    );
    const refused = await failure(authorizationCodeLogin(loginIO(["some-code"]).io, pkceOptions()));
    expect(refused.reason).to.equal("token_request_failed");
    expect(refused.message).to.contain("invalid_grant: code already used");
  });

  it("PKCE: a callback port in use is a clear error", async () => {
    const busy = new URL(server.url).port;
    const error = await failure(
      authorizationCodeLogin(loginIO().io, {
        ...pkceOptions(),
        callback: { port: Number(busy), path: "/cb" },
      }),
    );
    expect(error.reason).to.equal("callback_unavailable");
    expect(error.message).to.contain(`127.0.0.1:${busy}`);
  });

  describe("device authorization (RFC 8628)", () => {
    const deviceOptions = () => ({
      title: "Test account",
      deviceAuthorizationUrl: `${server.url}/device`,
      tokenUrl: `${server.url}/token`,
      clientId: "client-2",
      scope: "inference",
      slowDownStepMs: 250,
    });
    /** The device endpoint, then token answers in order (the last repeats). */
    function script(...tokenAnswers: [number, unknown][]) {
      let polls = 0;
      server.respond((req, res) => {
        if (req.path === "/device") {
          return json(res, 200, {
            device_code: "dev-code",
            user_code: "WXYZ-1234",
            verification_uri: `${server.url}/activate`,
            expires_in: 30,
            interval: 0,
          });
        }
        const [status, body] = tokenAnswers[Math.min(polls++, tokenAnswers.length - 1)]!;
        json(res, status, body);
      });
    }
    const pollTimes = () => server.requests.filter((r) => r.path === "/token");

    it("polls while pending, slows down when asked, and returns the tokens", async () => {
      script(
        [400, { error: "authorization_pending" }],
        [400, { error: "slow_down" }],
        [400, { error: "authorization_pending" }],
        [200, { access_token: "dev-at", refresh_token: "dev-rt", expires_in: 120 }],
      );
      const times: number[] = [];
      const original = server.requests.push.bind(server.requests);
      server.requests.push = (...items) => {
        times.push(Date.now());
        return original(...items);
      };
      const { io, notices } = loginIO();
      const credential = await deviceAuthorizationLogin(io, deviceOptions());
      expect(credential).to.deep.include({ type: "oauth", key: "dev-at", refresh: "dev-rt" });
      expect(notices[0]).to.contain("WXYZ-1234").and.contain(`${server.url}/activate`);
      expect(form(server.requests[0]!)).to.deep.equal({ client_id: "client-2", scope: "inference" });
      const polls = pollTimes();
      expect(polls).to.have.length(4);
      expect(form(polls[0]!)).to.deep.equal({
        grant_type: "urn:ietf:params:oauth:grant-type:device_code",
        device_code: "dev-code",
        client_id: "client-2",
      });
      // After slow_down (the 2nd answer) every wait is at least the added 250 ms.
      expect(times[3]! - times[2]!).to.be.at.least(240);
      expect(times[4]! - times[3]!).to.be.at.least(240);
    });

    it("denied and expired codes are clear errors", async () => {
      script([400, { error: "authorization_pending" }], [400, { error: "access_denied" }]);
      const denied = await failure(deviceAuthorizationLogin(loginIO().io, deviceOptions()));
      expect(denied.reason).to.equal("denied");
      expect(denied.message).to.equal("Sign-in to your Test account was denied");

      script([400, { error: "expired_token" }]);
      const expired = await failure(deviceAuthorizationLogin(loginIO().io, deviceOptions()));
      expect(expired.reason).to.equal("expired");
      expect(expired.message).to.contain("device code expired");

      // A code whose lifetime runs out while it is pending expires on our side too.
      script([400, { error: "authorization_pending" }]);
      const late = await failure(
        deviceAuthorizationLogin(loginIO().io, { ...deviceOptions(), maxWaitMs: 300 }),
      );
      expect(late.reason).to.equal("expired");
    });

    it("cancelling the waiting prompt stops polling", async () => {
      script([400, { error: "authorization_pending" }]);
      expect(await deviceAuthorizationLogin(loginIO([undefined]).io, deviceOptions())).to.equal(undefined);
      const aborted = new AbortController();
      const signIn = deviceAuthorizationLogin(loginIO([], aborted.signal).io, deviceOptions());
      setTimeout(() => aborted.abort(), 50);
      expect((await failure(signIn)).reason).to.equal("cancelled");
    });
  });

  it("refresh: new tokens keep the credential's fields; a refused refresh is refresh_failed", async () => {
    server.respondInOrder(
      (_req, res) => json(res, 200, { access_token: "at-2", expires_in: 3600 }),
      (_req, res) => json(res, 400, { error: "invalid_grant", error_description: "refresh token revoked" }),
    );
    const renewed = await refreshOAuthCredential(
      { type: "oauth", key: "at-1", refresh: "rt-1", expires: 1, accountId: "acct" },
      { tokenUrl: `${server.url}/token`, clientId: "c" },
    );
    expect(renewed).to.deep.include({ type: "oauth", key: "at-2", refresh: "rt-1", accountId: "acct" });
    expect(form(server.requests[0]!)).to.deep.equal({
      grant_type: "refresh_token",
      refresh_token: "rt-1",
      client_id: "c",
    });
    const error = await failure(
      refreshOAuthCredential(
        { key: "at-2", refresh: "rt-1" },
        { tokenUrl: `${server.url}/token`, clientId: "c" },
      ),
    );
    expect(error.reason).to.equal("refresh_failed");
    expect(error.message).to.contain("invalid_grant: refresh token revoked");
  });

  it("endpoint overrides must be https or loopback http; pasted answers parse", () => {
    const env = { KNIGHTCODE_OAUTH_MY_PROV_TOKEN_URL: "http://127.0.0.1:9/token" };
    expect(oauthEndpoint("my-prov", "TOKEN_URL", "https://x", env)).to.equal("http://127.0.0.1:9/token");
    expect(oauthEndpoint("my-prov", "OTHER", "https://x", env)).to.equal("https://x");
    expect(() =>
      oauthEndpoint("my-prov", "TOKEN_URL", "https://x", {
        KNIGHTCODE_OAUTH_MY_PROV_TOKEN_URL: "http://evil.example/t",
      }),
    ).to.throw("must be an https URL");
    expect(parseAuthorizationInput("http://localhost:1/cb?code=c1&state=s1")).to.deep.equal({
      code: "c1",
      state: "s1",
    });
    expect(parseAuthorizationInput("c2#s2")).to.deep.equal({ code: "c2", state: "s2" });
    expect(parseAuthorizationInput("code=c3&state=s3")).to.deep.equal({ code: "c3", state: "s3" });
    expect(parseAuthorizationInput(" c4 ")).to.deep.equal({ code: "c4" });
  });
});
