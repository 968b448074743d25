/**
 * builtin:github-copilot's catalogue against pi-ai's (the installed `@earendil-works/pi-ai`'s data for
 * `github-copilot`), its registration, and the generator's `--check`. Requests through each API are tested through
 * the built CLI in test/hosts/cli/login-copilot.test.ts.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ModelInfo, ProviderConfig } from "@knightcodeai/cli/kit";
import { expect } from "chai";
import {
  COPILOT_APIS,
  GITHUB_COPILOT_MODELS,
  githubCopilotProviderConfig,
} from "../../../../builtin-extensions/providers/github-copilot/index.js";
import { runScript } from "../../../helpers/processes.js";

const root = fileURLToPath(new URL("../../../..", import.meta.url));

interface PiEntry {
  id: string;
  name: string;
  api: string;
  reasoning: boolean;
  input: string[];
  contextWindow: number;
  maxTokens: number;
}

/** pi's Copilot models, every API's. */
function piModels(): PiEntry[] {
  const file = join(root, "node_modules/@earendil-works/pi-ai/dist/providers/data/github-copilot.json");
  const data = JSON.parse(readFileSync(file, "utf8")) as Record<string, Record<string, PiEntry>>;
  return Object.values(data).flatMap((byId) => Object.values(byId));
}

describe("builtin:github-copilot catalogue", () => {
  it("is pi's whole Copilot catalogue: each model with pi's API, limits, reasoning and inputs, at cost 0", () => {
    const pi = piModels();
    expect(pi.length).to.be.greaterThan(10);
    expect(GITHUB_COPILOT_MODELS.map((m) => m.id).sort()).to.deep.equal(pi.map((m) => m.id).sort());
    for (const want of pi) {
      const got = GITHUB_COPILOT_MODELS.find((m) => m.id === want.id)!;
      expect(got, want.id).to.deep.include({
        name: want.name,
        api: want.api,
        contextWindow: want.contextWindow,
        maxTokens: want.maxTokens,
        reasoning: want.reasoning,
        input: want.input,
      });
      expect(got.cost, want.id).to.deep.equal({ input: 0, output: 0 });
    }
    // All three of Copilot's APIs are in use.
    expect(new Set(GITHUB_COPILOT_MODELS.map((m) => m.api))).to.deep.equal(new Set(COPILOT_APIS));
  });

  it("registers every model with its own API and level map; Chat Completions for models.json's own", () => {
    const config: ProviderConfig = githubCopilotProviderConfig();
    expect(config.api).to.equal("openai-completions");
    expect(config.models).to.deep.equal(GITHUB_COPILOT_MODELS);
    const gpt5mini = config.models!.find((m) => m.id === "gpt-5-mini")!;
    expect(gpt5mini.api).to.equal("openai-responses");
    expect(gpt5mini.thinkingLevelMap).to.deep.include({ off: null, minimal: "low" });
    expect(config.models!.find((m) => m.id === "claude-sonnet-4.6")!.api).to.equal("anthropic-messages");
  });

  it("a model on an API Copilot does not serve fails at once, naming the APIs it does", async () => {
    const config = githubCopilotProviderConfig();
    const model: ModelInfo = {
      provider: "github-copilot",
      id: "gemini-custom",
      api: "google-generative-ai",
      contextWindow: 1000,
      maxTokens: 100,
      reasoning: false,
    };
    const answer = await config.streamSimple!({
      model,
      systemPrompt: "",
      messages: [{ role: "user", content: "hi", timestamp: 1 }],
      tools: [],
      apiKey: "tid=1;exp=2",
      baseUrl: "http://127.0.0.1:9",
      hooks: {
        payload: async (p) => p,
        headers: async (h) => h,
        response: async () => {},
        streamEvent: async () => {},
      },
    }).result();
    expect(answer.stopReason).to.equal("error");
    expect(answer.errorMessage).to.contain('GitHub Copilot serves no "google-generative-ai" API');
    expect(answer.errorMessage).to.contain("openai-responses");
  });

  it("the generator's --check finds the catalogue and its docs table current", async function () {
    this.timeout(60_000);
    const result = await runScript("gen-copilot-catalogue.ts", ["--check"]);
    expect(result.code, result.out).to.equal(0);
    expect(result.out).to.contain("current");
  });
});
