/**
 * pi's message components through the built `knightcode`: an extension written for pi draws a user and an assistant
 * message with `UserMessageComponent` and `AssistantMessageComponent` (pi-tui containers here), while a component
 * KnightCode still refuses (`ToolExecutionComponent`) is named in a load warning and throws a clear error when used.
 */

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { runCli } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("pi's message components", function () {
  this.timeout(30_000);
  const tmp = useTempDir("kc-pi-components-");

  it("draws messages with the mapped ones and refuses the others by name", async () => {
    const out = join(tmp.path, "drawn.json");
    const ext = tmp.write(
      "transcript.ts",
      `import { writeFileSync } from "node:fs";
import { AssistantMessageComponent, ToolExecutionComponent, UserMessageComponent, getMarkdownTheme } from "@earendil-works/pi-coding-agent";
import { Container } from "@earendil-works/pi-tui";

export default function () {
  const strip = (lines: readonly string[]) => lines.map((l) => l.replace(/\\x1b\\[[0-9;]*m/g, "").trimEnd());
  const user = new UserMessageComponent("Please **fix** the bug");
  const assistant = new AssistantMessageComponent(undefined, false, getMarkdownTheme());
  assistant.updateContent({ role: "assistant", content: [{ type: "thinking", thinking: "Look at main.ts" }, { type: "text", text: "Done: see \`main.ts\`." }], stopReason: "stop" });
  const drawnAssistant = strip(assistant.render(40));
  assistant.setHideThinkingBlock(true);
  const hidden = strip(assistant.render(40));
  assistant.updateContent({ role: "assistant", content: [], stopReason: "error", errorMessage: "overloaded" });
  const failed = strip(assistant.render(40));
  let refused = "";
  try {
    new ToolExecutionComponent("bash", {}, {});
  } catch (error) {
    refused = (error as Error).message;
  }
  writeFileSync(${JSON.stringify(out)}, JSON.stringify({
    user: strip(user.render(40)),
    assistant: drawnAssistant,
    hidden,
    failed,
    isContainer: user instanceof Container && assistant instanceof Container,
    refused,
  }));
}
`,
    );
    const run = await runCli(["--list-extensions", "-e", ext], {
      cwd: tmp.path,
      env: { KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") },
    });
    expect(run.code, run.stderr).to.equal(0);
    // The refused one is named at load with its package; the mapped ones are not.
    expect(run.stderr).to.contain("imports ToolExecutionComponent from @earendil-works/pi-coding-agent");
    expect(run.stderr).to.not.contain("imports UserMessageComponent");
    expect(run.stderr).to.not.contain("imports AssistantMessageComponent");
    const drawn = JSON.parse(readFileSync(out, "utf8"));
    expect(drawn.isContainer).to.equal(true);
    expect(drawn.user.join("\n")).to.contain("Please fix the bug");
    expect(drawn.user.every((l: string) => l.length <= 40)).to.equal(true);
    const assistant = drawn.assistant.join("\n");
    expect(assistant).to.contain("Look at main.ts");
    expect(assistant).to.contain("Done: see main.ts.");
    expect(assistant.indexOf("Look at main.ts")).to.be.lessThan(assistant.indexOf("Done:"));
    expect(drawn.hidden.join("\n")).to.contain("Thinking...");
    expect(drawn.hidden.join("\n")).to.not.contain("Look at main.ts");
    expect(drawn.failed.join("\n")).to.contain("Error: overloaded");
    expect(drawn.refused).to.contain(
      "ToolExecutionComponent from @earendil-works/pi-coding-agent is not supported by KnightCode",
    );
  });
});
