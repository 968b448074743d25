/**
 * ProviderStore.implementationOf: which registration implements a wire API, for custom providers that name only the
 * API and for providers whose models use several (request.streamApi): the one registered under the API's own name
 * first, never the asking provider.
 */
import { expect } from "chai";
import type { ExtensionInfo, ProviderConfig } from "../../../kernel/index.js";
import { ProviderStore } from "../../../plugins/model-registry/provider-store.js";

const owner: ExtensionInfo = { id: "builtin:test", origin: "builtin", order: 0 };

function implementation(name: string): NonNullable<ProviderConfig["streamSimple"]> {
  return Object.assign(() => undefined as never, { displayName: name });
}

const nameOf = (stream: ProviderConfig["streamSimple"]) =>
  (stream as undefined | { displayName: string })?.displayName;

describe("ProviderStore.implementationOf", () => {
  it("prefers the registration named as the API over an earlier one of that API", () => {
    const store = new ProviderStore();
    store.register(
      "copilot-like",
      { api: "openai-completions", streamSimple: implementation("copilot") },
      owner,
      {},
    );
    store.register(
      "openai-completions",
      { api: "openai-completions", streamSimple: implementation("completions") },
      owner,
      {},
    );
    expect(nameOf(store.implementationOf("openai-completions"))).to.equal("completions");
  });

  it("never answers the asking provider's own implementation", () => {
    const store = new ProviderStore();
    store.register("mixed", { api: "anthropic-messages", streamSimple: implementation("mixed") }, owner, {});
    expect(store.implementationOf("anthropic-messages", "mixed")).to.equal(undefined);
    store.register(
      "anthropic",
      { api: "anthropic-messages", streamSimple: implementation("anthropic") },
      owner,
      {},
    );
    expect(nameOf(store.implementationOf("anthropic-messages", "mixed"))).to.equal("anthropic");
    expect(nameOf(store.implementationOf("anthropic-messages"))).to.equal("mixed");
  });
});
