/** The provider kit's redaction: what an error message may not show, and what it keeps. */
import {
  AssistantMessageWriter,
  type ModelInfo,
  REDACTED,
  redactSecrets,
  requestSecrets,
} from "@knightcodeai/cli/kit";
import { expect } from "chai";

const MODEL: ModelInfo = {
  provider: "fake",
  api: "fake-api",
  id: "fake-1",
  contextWindow: 1000,
  maxTokens: 100,
  reasoning: false,
};

describe("plugins/kit/provider: redactSecrets", () => {
  it("removes URL userinfo, Authorization and x-api-key values and fields whose names end in Key", () => {
    expect(
      redactSecrets("Could not reach local at http://proxy:hunter2@127.0.0.1:9/v1 (ECONNREFUSED)"),
    ).to.equal(`Could not reach local at http://${REDACTED}@127.0.0.1:9/v1 (ECONNREFUSED)`);
    expect(
      redactSecrets("Authorization: Bearer abc.def.ghi, x-api-key: zzz999; authorization=Basic dXNlcg=="),
    ).to.equal(`Authorization: Bearer ${REDACTED}, x-api-key: ${REDACTED}; authorization=Basic ${REDACTED}`);
    expect(redactSecrets(`{"apiKey":"a\\"b","api_key": 'c d', "secretKey": "e", "password": "f"}`)).to.equal(
      `{"apiKey":"${REDACTED}","api_key": '${REDACTED}', "secretKey": "${REDACTED}", "password": "${REDACTED}"}`,
    );
    expect(redactSecrets("Incorrect API key provided: sk-proj-0123456789abcdefXYZ.")).to.equal(
      `Incorrect API key provided: ${REDACTED}.`,
    );
  });

  it("removes every configured secret wherever it appears, longest first, and ignores short ones", () => {
    const text = "key kc-secret-123456 and kc-secret-123456-long, not abc";
    expect(redactSecrets(text, ["kc-secret-123456", "kc-secret-123456-long", "abc", "", undefined])).to.equal(
      `key ${REDACTED} and ${REDACTED}, not abc`,
    );
  });

  it("leaves ordinary messages alone", () => {
    const messages = [
      "No key: set FAKE_KEY",
      "prompt is too long: 210000 tokens > 200000 maximum; max_tokens: 100",
      "anthropic refused the API key (401): invalid x-api-key. Set ANTHROPIC_API_KEY or add a key to <agentDir>/auth.json",
      "local sent nothing for 600s, so the request timed out (compat.timeoutMs sets the limit)",
      "See https://docs.example.com/errors#rate-limits",
    ];
    for (const message of messages) expect(redactSecrets(message)).to.equal(message);
  });

  it("names a request's secrets: its key, credential headers and the baseUrl's user name and password", () => {
    const secrets = requestSecrets({
      apiKey: "sk-configured",
      baseUrl: "http://proxy-user:p%40ss-word@127.0.0.1:8080/v1",
      headers: { "X-Custom-Token": "tok-123", Authorization: "Bearer bear-456", Accept: "text/plain" },
    });
    expect(secrets).to.include.members([
      "sk-configured",
      "tok-123",
      "bear-456",
      "proxy-user",
      "p%40ss-word",
      "p@ss-word",
    ]);
    expect(secrets).not.to.include("text/plain");
  });
});

describe("plugins/kit/provider: AssistantMessageWriter redacts error messages", () => {
  it("takes the request's secrets and the generic patterns out of the message it stores and streams", async () => {
    const writer = new AssistantMessageWriter(MODEL, { secrets: ["kc-secret-value-1"] });
    writer.addSecrets(["extension-header-2"]);
    writer.fail("auth", "refused kc-secret-value-1 / extension-header-2 at http://u:pw@host/v1");
    const expected = `refused ${REDACTED} / ${REDACTED} at http://${REDACTED}@host/v1`;
    const events = [];
    for await (const event of writer.stream) events.push(event);
    expect((await writer.stream.result()).errorMessage).to.equal(expected);
    expect(JSON.stringify(events)).not.to.match(/kc-secret-value-1|extension-header-2|u:pw/);
  });
});
