/**
 * A provider that builds its own error messages (not through the kit's writer, which redacts with the request's
 * secrets) still gets credentials removed before the message is shown or stored: the agent loop redacts every
 * assistant error message.
 */
import type {
  AssistantMessage,
  AssistantMessageStream,
  ExtensionAPI,
  ProviderStreamRequest,
} from "@knightcodeai/cli";
import { expect } from "chai";
import { createTestSession } from "../../../hosts/testing/test-session.js";
import { emptyUsage } from "../../../plugins/kit/usage.js";

describe("agent loop: provider error messages", () => {
  it("removes a URL password, credential fields and key-shaped strings from an error a provider made itself", async () => {
    const leaky = (kc: ExtensionAPI) => {
      kc.registerProvider("leaky", {
        baseUrl: "http://127.0.0.1:9",
        api: "leaky-api",
        models: [{ id: "m1" }],
        streamSimple(request: ProviderStreamRequest): AssistantMessageStream {
          const message: AssistantMessage = {
            role: "assistant",
            content: [],
            api: request.model.api,
            provider: request.model.provider,
            model: request.model.id,
            usage: emptyUsage(),
            stopReason: "error",
            errorMessage:
              'POST http://alice:hunter22@proxy.example.test/v1 failed: 401 {"api_key": "abc123secretvalue"} sk-0123456789abcdef0123',
            timestamp: Date.now(),
          };
          return {
            async *[Symbol.asyncIterator]() {
              yield { type: "error", reason: "error", error: message };
            },
            result: async () => message,
          };
        },
      } as never);
    };
    const s = await createTestSession({ extensions: [leaky] });
    try {
      await s.session.setModel("leaky", "m1");
      await s.prompt("hi");
      const stored = JSON.stringify(s.eventsOfType("message_end"));
      expect(stored).to.contain("failed: 401");
      for (const secret of ["hunter22", "abc123secretvalue", "sk-0123456789abcdef0123"]) {
        expect(stored, secret).to.not.contain(secret);
      }
    } finally {
      await s.dispose();
    }
  });
});
