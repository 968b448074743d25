/** `before_agent_start`: what handlers see, the messages they add, and the system prompt a run gets. */

import { expect } from "chai";
import {
  type BeforeAgentStartEvent,
  type ExtensionContext,
  HookBus,
  type SystemPromptOptions,
} from "../../../kernel/index.js";
import { beforeAgentStart, type RunStart } from "../../../plugins/agent-loop/before-agent-start.js";
import { customMessage, promptMessage } from "../../../plugins/agent-loop/convert.js";
import { buildSystemPrompt, defaultSystemPromptOptions } from "../../../plugins/resources/system-prompt.js";

const tools = [{ name: "read", promptSnippet: "Read files" }];
const ctx = {} as ExtensionContext;
const handler = (order: number) => ({ id: `test:${order}`, order });

function setup() {
  const bus = new HookBus({
    onHandlerError: (report) => {
      throw report.error;
    },
  });
  const fresh = () =>
    defaultSystemPromptOptions({ cwd: "/work", tools, contextFiles: [], date: new Date(0) });
  const render = (options: SystemPromptOptions, original?: SystemPromptOptions) =>
    buildSystemPrompt(options, { tools, ...(original ? { original } : {}) });
  const config = { bus, context: () => ctx, systemPromptOptions: fresh, renderSystemPrompt: render };
  const start: RunStart = { kind: "user", message: promptMessage("hi") };
  return { bus, config, start, defaultPrompt: render(fresh()) };
}

describe("before_agent_start", () => {
  it("shows handlers the prompt, its images and the rendered default prompt with its options", async () => {
    const t = setup();
    const seen: BeforeAgentStartEvent[] = [];
    t.bus.on("before_agent_start", (event: BeforeAgentStartEvent) => void seen.push(event), handler(0));
    const image = { type: "image" as const, data: "AAAA", mimeType: "image/png" };
    await beforeAgentStart({ kind: "user", message: promptMessage("look", [image]) }, t.config);
    expect(seen[0]).to.deep.include({
      messageType: "user",
      prompt: "look",
      images: [image],
      systemPrompt: t.defaultPrompt,
    });
    expect(seen[0]!.systemPromptOptions.tools).to.deep.equal(["read"]);
  });

  it("shows the starting message of a custom run, and no prompt", async () => {
    const t = setup();
    const seen: BeforeAgentStartEvent[] = [];
    t.bus.on("before_agent_start", (event: BeforeAgentStartEvent) => void seen.push(event), handler(0));
    const message = customMessage({ customType: "ping", content: "wake up" });
    await beforeAgentStart({ kind: "custom", message }, t.config);
    expect(seen[0]!.messageType).to.equal("custom");
    expect(seen[0]!.message).to.deep.equal(message);
    expect(seen[0]).to.not.have.property("prompt");
  });

  it("keeps the default prompt when no handler changes anything", async () => {
    const t = setup();
    expect(await beforeAgentStart(t.start, t.config)).to.deep.equal({
      systemPrompt: t.defaultPrompt,
      recorded: t.defaultPrompt,
      messages: [],
    });
  });

  it("adds the message of every handler that returns one, in handler order", async () => {
    const t = setup();
    t.bus.on("before_agent_start", () => ({ message: { customType: "first", content: "1" } }), handler(0));
    t.bus.on("before_agent_start", () => undefined, handler(1));
    t.bus.on(
      "before_agent_start",
      () => ({ message: { customType: "second", content: "2", display: false } }),
      handler(2),
    );
    const { messages } = await beforeAgentStart(t.start, t.config);
    expect(messages.map((m) => [m.customType, m.content, m.display])).to.deep.equal([
      ["first", "1", true],
      ["second", "2", false],
    ]);
  });

  it("renders edited options into the run's prompt", async () => {
    const t = setup();
    t.bus.on(
      "before_agent_start",
      (event: BeforeAgentStartEvent) => {
        event.systemPromptOptions.sections.push({ id: "house-rules", text: "Always write tests first." });
      },
      handler(0),
    );
    const { systemPrompt } = await beforeAgentStart(t.start, t.config);
    expect(systemPrompt).to.equal(`${t.defaultPrompt}\n\nAlways write tests first.`);
  });

  it("takes the last returned systemPrompt as the whole prompt, and forceSystemPrompt keeps the rendered one", async () => {
    const t = setup();
    t.bus.on("before_agent_start", () => ({ systemPrompt: "FIRST" }), handler(0));
    t.bus.on("before_agent_start", () => ({ systemPrompt: "SECOND" }), handler(1));
    const replaced = await beforeAgentStart(t.start, t.config);
    expect(replaced.systemPrompt).to.equal("SECOND");
    // The transcript keeps recording the structured sections.
    expect(replaced.recorded).to.equal(t.defaultPrompt);

    const forced = setup();
    forced.bus.on(
      "before_agent_start",
      (event: BeforeAgentStartEvent) => {
        event.systemPromptOptions.sections.push({ id: "extra", text: "EXTRA" });
        return { forceSystemPrompt: true };
      },
      handler(0),
    );
    expect((await beforeAgentStart(forced.start, forced.config)).systemPrompt).to.equal(forced.defaultPrompt);
  });

  it("chains the prompt: a handler sees earlier handlers' option edits and returned text", async () => {
    const t = setup();
    // The first handler edits the options in place (as builtin:skills does), the second appends to the text it
    // is shown (the common pi pattern), the third appends again.
    t.bus.on(
      "before_agent_start",
      (event: BeforeAgentStartEvent) => {
        event.systemPromptOptions.skills.push({
          name: "deploy",
          description: "Ship it",
          filePath: "/s/SKILL.md",
        });
      },
      handler(0),
    );
    const seen: string[] = [];
    t.bus.on(
      "before_agent_start",
      (event: BeforeAgentStartEvent) => {
        seen.push(event.systemPrompt);
        return { systemPrompt: `${event.systemPrompt}\n\nAPPENDED ONE` };
      },
      handler(1),
    );
    t.bus.on(
      "before_agent_start",
      (event: BeforeAgentStartEvent) => {
        seen.push(event.systemPrompt);
        return { systemPrompt: `${event.systemPrompt}\n\nAPPENDED TWO` };
      },
      handler(2),
    );
    const { systemPrompt } = await beforeAgentStart(t.start, t.config);
    expect(seen[0]).to.contain('<skill name="deploy" path="/s/SKILL.md">Ship it</skill>');
    expect(seen[1]).to.equal(`${seen[0]}\n\nAPPENDED ONE`);
    expect(systemPrompt).to.equal(`${seen[0]}\n\nAPPENDED ONE\n\nAPPENDED TWO`);
  });
});
