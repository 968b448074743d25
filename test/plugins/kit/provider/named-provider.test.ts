/**
 * The kit's named-provider catalogue: `lazyCatalogue` keeps each provider's models as JSON text until they are read,
 * and `namedProviderConfig` registers a provider without reading them when the catalogue names its APIs.
 */
import {
  lazyCatalogue,
  type NamedProvider,
  namedProviderConfig,
  type StreamSimple,
} from "@knightcodeai/cli/kit";
import { expect } from "chai";

const head = (name: string): Omit<NamedProvider, "models"> => ({
  name,
  apiKey: `${name.toUpperCase()}_KEY`,
  api: "chat",
  baseUrl: `https://${name}.example/v1`,
  apis: ["chat"],
});
const stream = (() => {
  throw new Error("not called");
}) as unknown as StreamSimple;

describe("kit: named-provider catalogues", () => {
  it("registering a provider reads none of its models; they are parsed on first read, once", () => {
    // The second provider's model text is not JSON: reading it fails, so not reading it is visible.
    const [good, broken] = lazyCatalogue(
      [head("good"), head("broken")],
      ['[{"id":"m1","reasoning":true,"contextWindow":1000,"maxTokens":100}]', "not json"],
    );
    const config = namedProviderConfig(broken!, { chat: stream });
    expect(config).to.include({ api: "chat", baseUrl: "https://broken.example/v1", apiKey: "BROKEN_KEY" });
    expect(config.streamSimple).to.be.a("function");
    expect(() => config.models).to.throw(SyntaxError);

    const first = good!.models;
    expect(first.map((m) => m.id)).to.deep.equal(["m1"]);
    expect(good!.models).to.equal(first);
    const models = namedProviderConfig(
      good!,
      { chat: stream },
      { compat: { thinkingLevelMap: { high: "max" } } },
    ).models;
    // The registering extension's compat is laid under the models': its level map reaches the reasoning model.
    expect(models).to.deep.equal([
      { id: "m1", reasoning: true, contextWindow: 1000, maxTokens: 100, thinkingLevelMap: { high: "max" } },
    ]);
  });

  it("a catalogue without `apis` is read at registration to learn them, and one with the wrong count is refused", () => {
    const { apis: _apis, ...withoutApis } = head("plain");
    const [plain] = lazyCatalogue([withoutApis], ["not json"]);
    expect(() => namedProviderConfig(plain!, { chat: stream })).to.throw(SyntaxError);
    expect(() => lazyCatalogue([head("a"), head("b")], ["[]"])).to.throw(
      "a catalogue of 2 providers has 1 model lists",
    );
  });

  it("a provider whose APIs the extension does not implement gets no streamSimple", () => {
    const [other] = lazyCatalogue(
      [{ ...head("other"), api: "responses", apis: ["responses"] }],
      ["not json"],
    );
    const config = namedProviderConfig(other!, { chat: stream });
    expect(config.streamSimple).to.equal(undefined);
    expect(config.api).to.equal("responses");
  });
});
