/** lazyStreamSimple: a provider's request code loads on the first request, once, and a failed load fails only that request. */
import {
  AssistantMessageWriter,
  lazyStreamSimple,
  type ModelInfo,
  type ProviderStreamRequest,
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

const request = { model: MODEL } as unknown as ProviderStreamRequest;

/** A stream that answers `text` at once. */
function answer(text: string) {
  const writer = new AssistantMessageWriter(MODEL);
  const index = writer.textStart();
  writer.textDelta(index, text);
  writer.textEnd(index);
  writer.done("stop");
  return writer.stream;
}

describe("plugins/kit/provider: lazyStreamSimple", () => {
  it("loads nothing until the first request, then loads once for every later request", async () => {
    let loads = 0;
    const stream = lazyStreamSimple(async () => {
      loads++;
      return () => answer("hi");
    });
    expect(loads).to.equal(0);
    const first = await stream(request).result();
    const second = await stream(request).result();
    expect(loads).to.equal(1);
    expect(first.stopReason).to.equal("stop");
    expect(second.content).to.deep.equal(first.content);
  });

  it("delivers the loaded stream's events to an iterating caller", async () => {
    const stream = lazyStreamSimple(async () => () => answer("streamed"));
    const types: string[] = [];
    for await (const event of stream(request)) types.push(event.type);
    expect(types[0]).to.equal("start");
    expect(types.at(-1)).to.equal("done");
    expect(types).to.include("text_delta");
  });

  it("fails the request with the load error and tries the load again on the next request", async () => {
    let attempts = 0;
    const stream = lazyStreamSimple(async () => {
      attempts++;
      if (attempts === 1) throw new Error("Cannot find module 'openai'");
      return () => answer("recovered");
    });
    const failed = await stream(request).result();
    expect(failed.stopReason).to.equal("error");
    expect(failed.errorMessage).to.equal("fake provider could not load: Cannot find module 'openai'");
    const recovered = await stream(request).result();
    expect(recovered.stopReason).to.equal("stop");
    expect(attempts).to.equal(2);
  });
});
