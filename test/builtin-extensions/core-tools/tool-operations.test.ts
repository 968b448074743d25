/**
 * `toolOperationsService`: a session extension that provides it moves the built-in read, write, edit and bash
 * somewhere else (the ACP mode's client buffers and terminals), at each call, without replacing the tools.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { type ExtensionAPI, type ToolOperations, toolOperationsService } from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";

const textOf = (result: { content: { type: string; text?: string }[] }) =>
  result.content.map((c) => c.text ?? "").join("");

describe("core tools through toolOperationsService", () => {
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it("read, write, edit and bash go through the provided operations; a missing file is worded as usual", async () => {
    const files = new Map<string, string>([["notes.txt", "text from the service\n"]]);
    const commands: string[] = [];
    const ops: ToolOperations = {
      files: {
        async readTextFile(path) {
          const text = files.get(basename(path));
          if (text === undefined) throw Object.assign(new Error(`no ${path}`), { code: "ENOENT" });
          return text;
        },
        async writeTextFile(path, content) {
          files.set(basename(path), content);
        },
      },
      bash: {
        async exec(command, _cwd, { onData }) {
          commands.push(command);
          await onData(Buffer.from("ran elsewhere\n"));
          return { exitCode: 0 };
        },
      },
    };
    const provider = (knightcode: ExtensionAPI) => {
      knightcode.services.provide(toolOperationsService, () => ops);
    };
    t = await createTestSession({
      extensions: [provider],
      script: [
        {
          toolCalls: [
            { name: "read", arguments: { path: "notes.txt" } },
            { name: "read", arguments: { path: "missing.txt" } },
            { name: "bash", arguments: { command: "echo here" } },
          ],
        },
        { toolCalls: [{ name: "write", arguments: { path: "new.txt", content: "written\n" } }] },
        {
          toolCalls: [
            {
              name: "edit",
              arguments: { path: "notes.txt", edits: [{ oldText: "from", newText: "edited by" }] },
            },
          ],
        },
        { text: "done" },
      ],
    });
    writeFileSync(join(t.cwd, "notes.txt"), "text on the disk\n");
    await t.prompt("go");
    const [read, missing, bash, write, edit] = t.toolCalls();
    expect(textOf(read!.result!)).to.contain("text from the service");
    expect(missing!.isError).to.equal(true);
    expect(textOf(missing!.result!)).to.equal("File not found: missing.txt");
    expect(textOf(bash!.result!)).to.contain("ran elsewhere");
    expect(commands).to.deep.equal(["echo here"]);
    expect(write!.isError).to.equal(false);
    expect(files.get("new.txt")).to.equal("written\n");
    expect(existsSync(join(t.cwd, "new.txt"))).to.equal(false);
    expect(edit!.isError, textOf(edit!.result!)).to.equal(false);
    expect(files.get("notes.txt")).to.equal("text edited by the service\n");
    expect(readFileSync(join(t.cwd, "notes.txt"), "utf8")).to.equal("text on the disk\n");
  });
});
