/**
 * builtin:pi-compat: pi's package names resolve for extension files while it is enabled, name KnightCode's own
 * modules (the same objects), stub what KnightCode lacks with a clear error, and stop resolving when it is off.
 */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import * as knightcode from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("builtin:pi-compat module names", () => {
  const tmp = useTempDir("kc-pi-compat-");
  let t: TestSession | undefined;
  const g = globalThis as unknown as { __piSeen?: Record<string, unknown> };
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
    delete g.__piSeen;
  });

  const extension = () => {
    const file = join(tmp.path, "pi-style.ts");
    writeFileSync(
      file,
      `import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { getAgentDir, isToolCallEventType, InteractiveMode, parseFrontmatter } from "@mariozechner/pi-coding-agent";
import { StringEnum, Type as AiType, modelsAreEqual } from "@earendil-works/pi-ai";
import { Type } from "typebox";
import { Type as SinclairType } from "@sinclair/typebox";
import { Check } from "typebox/value";
import * as agentCore from "@mariozechner/pi-agent-core";

export default function (pi: ExtensionAPI) {
  let modeError = "";
  try { new (InteractiveMode as any)(); } catch (error) { modeError = (error as Error).message; }
  const frontmatter = (parseFrontmatter as any)("---\\na: 1\\nlist:\\n  - x: 2\\n---\\nbody\\n");
  (globalThis as any).__piSeen = {
    agentDir: getAgentDir(),
    guard: isToolCallEventType("bash", { toolName: "bash" }),
    sameType: Type === SinclairType && AiType === Type,
    enumSchema: JSON.parse(JSON.stringify(StringEnum(["a", "b"]))),
    checks: Check(Type.String(), "x") && !Check(Type.String(), 1),
    equal: modelsAreEqual({ id: "m", provider: "p" }, { id: "m", provider: "p" }),
    modeError,
    frontmatter,
    agentCoreHasAgent: typeof (agentCore as any).Agent,
  };
  pi.registerCommand("pi-hello", { description: "hi", handler: async () => {} });
}
`,
    );
    return file;
  };

  it("loads an extension that imports pi's names, unchanged", async () => {
    t = await createTestSession({ extensions: [extension()] });
    expect(t.session.extensions().failed).to.deep.equal([]);
    const seen = g.__piSeen!;
    expect(seen.agentDir).to.equal(knightcode.getAgentDir());
    expect(seen).to.include({
      checks: true,
      guard: true,
      sameType: true,
      equal: true,
      agentCoreHasAgent: "function",
    });
    expect(seen.enumSchema).to.deep.equal({ type: "string", enum: ["a", "b"] });
    expect(seen.modeError).to.match(
      /^InteractiveMode from @mariozechner\/pi-coding-agent is not supported by KnightCode: pi's interactive mode's own components; .* \(see docs\/extensions\.md/,
    );
    // pi's contract, not KnightCode's (a promise of { data, ... }): { frontmatter, body } at once, nested YAML kept.
    expect(seen.frontmatter).to.deep.equal({ frontmatter: { a: 1, list: [{ x: 2 }] }, body: "body" });
  });

  it("gives pi-tui itself for pi-tui's names, and a clear error for a name only later pi-tui releases have", async () => {
    const file = join(tmp.path, "pi-tui-style.ts");
    writeFileSync(
      file,
      `import { Editor, Text, renderFakeCursor } from "@earendil-works/pi-tui";
import * as mario from "@mariozechner/pi-tui";
import * as kc from "@knightcodeai/cli/tui";

export default function () {
  let newer = "";
  try { renderFakeCursor("x"); } catch (error) { newer = (error as Error).message; }
  (globalThis as any).__piSeen = {
    sameEditor: Editor === kc.Editor && mario.Editor === kc.Editor && mario.Text === Text,
    text: new Text("hi", 0, 0).render(4)[0],
    newer,
  };
}
`,
    );
    t = await createTestSession({ extensions: [file] });
    expect(t.session.extensions().failed).to.deep.equal([]);
    expect(g.__piSeen).to.deep.include({ sameEditor: true, text: "hi  " });
    expect(String(g.__piSeen?.newer)).to.match(
      /^renderFakeCursor from @earendil-works\/pi-tui is not supported by KnightCode: only pi-tui 1\.x has it; KnightCode carries pi-tui 0\.73\.1 \(see docs\/extensions\.md/,
    );
  });

  it("resolves none of them when builtin:pi-compat is disabled, and says which import failed", async () => {
    t = await createTestSession({ extensions: [extension()], disableBuiltins: ["builtin:pi-compat"] });
    const failed = t.session.extensions().failed;
    expect(failed).to.have.length(1);
    expect(failed[0]).to.match(/@mariozechner\/pi-coding-agent|@earendil-works\/pi-ai|typebox/);
    expect(g.__piSeen).to.equal(undefined);
  });
});
