/**
 * The core tool factories exported from `@knightcodeai/cli`: registered by an extension file they replace the
 * built-ins and work in the folder they were given; a spawn hook rewrites what bash runs; operations objects take
 * the place of every file system and process access.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type BashOperations,
  createBashTool,
  createEditTool,
  createFindTool,
  createGrepTool,
  createLocalBashOperations,
  createLsTool,
  createReadTool,
  createWriteTool,
  type EditOperations,
  type FindOperations,
  type GrepOperations,
  type LsOperations,
  type ReadOperations,
  type WriteOperations,
} from "@knightcodeai/cli";
import { createTestSession, type TestSession } from "@knightcodeai/cli/testing";
import { expect } from "chai";
import { sessionInternals } from "../../../hosts/sdk/session-internals.js";
import { runCli } from "../../helpers/cli.js";
import { useTempDir } from "../../helpers/temp-dir.js";

const textOf = (result: { content: { type: string; text?: string }[] }) =>
  result.content.map((part) => part.text ?? "").join("");

/** A file system in a Map, under a root that does not exist on disk; every call is recorded. */
function memoryFs(files: Record<string, string>) {
  const store = new Map(Object.entries(files).map(([path, text]) => [path, Buffer.from(text)]));
  const calls: string[] = [];
  const missing = (path: string) => Object.assign(new Error(`ENOENT: ${path}`), { code: "ENOENT" });
  const isDir = (path: string) => [...store.keys()].some((file) => file.startsWith(`${path}/`));
  const read: ReadOperations = {
    async readFile(path) {
      calls.push(`readFile ${path}`);
      const data = store.get(path);
      if (!data) throw missing(path);
      return data;
    },
    async access(path) {
      calls.push(`access ${path}`);
      if (!store.has(path)) throw missing(path);
    },
  };
  const write: WriteOperations = {
    async writeFile(path, content) {
      calls.push(`writeFile ${path}`);
      store.set(path, Buffer.from(content));
    },
    async mkdir(dir) {
      calls.push(`mkdir ${dir}`);
    },
  };
  const edit: EditOperations = {
    readFile: read.readFile,
    access: read.access,
    writeFile: async (path, content) => {
      await write.writeFile(path, content);
    },
  };
  const ls: LsOperations = {
    exists: (path) => store.has(path) || isDir(path),
    stat(path) {
      calls.push(`stat ${path}`);
      if (!store.has(path) && !isDir(path)) throw missing(path);
      return { isDirectory: () => isDir(path) };
    },
    readdir(path) {
      calls.push(`readdir ${path}`);
      const names = new Set<string>();
      for (const file of store.keys()) {
        if (file.startsWith(`${path}/`)) names.add(file.slice(path.length + 1).split("/")[0]!);
      }
      return [...names];
    },
  };
  const find: FindOperations = {
    exists: ls.exists,
    glob(pattern, cwd, options) {
      calls.push(`glob ${pattern} ${cwd} ${options.ignore.join(",")} ${options.limit}`);
      const ext = pattern.replace(/^\*/, "");
      return [...store.keys()].filter((file) => file.startsWith(`${cwd}/`) && file.endsWith(ext));
    },
  };
  const grep: GrepOperations = {
    isDirectory(path) {
      if (!store.has(path) && !isDir(path)) throw missing(path);
      return isDir(path);
    },
    readFile(path) {
      calls.push(`grep readFile ${path}`);
      return store.get(path)!.toString("utf8");
    },
    listFiles(path) {
      calls.push(`listFiles ${path}`);
      return [...store.keys()]
        .filter((file) => file.startsWith(`${path}/`))
        .map((f) => f.slice(path.length + 1));
    },
  };
  return { store, calls, read, write, edit, ls, find, grep };
}

describe("core tool factories", () => {
  const tmp = useTempDir("kc-factories-");
  let t: TestSession | undefined;
  afterEach(async () => {
    await t?.dispose();
    t = undefined;
  });

  it("registered by an extension file, all seven replace the built-ins and work in the folder they were given", async () => {
    const elsewhere = join(tmp.path, "elsewhere");
    tmp.write("elsewhere/notes.md", "first line\n");
    const extension = tmp.write(
      "ext/factories.ts",
      `import { createBashTool, createEditTool, createFindTool, createGrepTool, createLsTool, createReadTool,
         createWriteTool } from "@knightcodeai/cli";
       const cwd = ${JSON.stringify(elsewhere)};
       export default function (kc) {
         for (const tool of [createReadTool(cwd), createBashTool(cwd), createEditTool(cwd), createWriteTool(cwd),
           createGrepTool(cwd), createFindTool(cwd), createLsTool(cwd)]) kc.registerTool(tool);
       }`,
    );
    t = await createTestSession({
      extensions: [extension],
      settings: { defaultTools: ["+grep", "+find", "+ls"] },
      script: [
        { toolCalls: [{ name: "write", arguments: { path: "made.txt", content: "made here\n" } }] },
        {
          toolCalls: [
            {
              name: "edit",
              arguments: { path: "made.txt", edits: [{ oldText: "made", newText: "edited" }] },
            },
          ],
        },
        {
          toolCalls: [
            { name: "read", arguments: { path: "made.txt" } },
            { name: "bash", arguments: { command: "pwd" } },
            { name: "ls", arguments: {} },
            { name: "find", arguments: { pattern: "*.txt" } },
            { name: "grep", arguments: { pattern: "edited" } },
          ],
        },
        { text: "done" },
      ],
    });
    const owners = sessionInternals(t.session)
      .tools.getAllTools()
      .filter((tool) => ["read", "bash", "edit", "write", "grep", "find", "ls"].includes(tool.name))
      .map((tool) => tool.owner);
    expect(owners).to.have.length(7);
    expect(new Set(owners).size).to.equal(1);
    expect(owners[0]).to.not.match(/^builtin:/);

    await t.prompt("go");
    const calls = t.toolCalls();
    expect(calls.map((c) => c.toolName)).to.deep.equal([
      "write",
      "edit",
      "read",
      "bash",
      "ls",
      "find",
      "grep",
    ]);
    for (const call of calls)
      expect(call.isError, `${call.toolName}: ${textOf(call.result!)}`).to.equal(false);
    const [, , read, bash, ls, find, grep] = calls.map((c) => textOf(c.result!));
    expect(readFileSync(join(elsewhere, "made.txt"), "utf8")).to.equal("edited here\n");
    expect(existsSync(join(t.cwd, "made.txt"))).to.equal(false);
    expect(read).to.contain("edited here");
    expect(bash!.trim()).to.equal(elsewhere);
    expect(ls).to.equal("made.txt\nnotes.md");
    expect(find).to.equal("made.txt");
    expect(grep).to.equal("made.txt:1: edited here");
  });

  it("bash with a spawn hook replaces the built-in and runs the rewritten command with the rewritten env", async () => {
    const COMMAND = 'echo "secret=[$KC_FACTORY_SECRET]"; pwd';
    const seen: { command: string; cwd: string }[] = [];
    process.env.KC_FACTORY_SECRET = "leaked";
    try {
      t = await createTestSession({
        extensions: [
          (kc) => {
            kc.registerTool(
              createBashTool(undefined, {
                spawnHook: ({ command, cwd, env }) => {
                  seen.push({ command, cwd });
                  const { KC_FACTORY_SECRET: _dropped, ...rest } = env;
                  return {
                    command: `echo "hooked $KC_HOOK_VAR"\n${command}`,
                    cwd,
                    env: { ...rest, KC_HOOK_VAR: "yes" },
                  };
                },
              }),
            );
          },
        ],
        script: [
          {
            toolCalls: [{ name: "bash", arguments: { command: COMMAND } }],
          },
          { text: "done" },
        ],
      });
      await t.prompt("go");
    } finally {
      delete process.env.KC_FACTORY_SECRET;
    }
    const [call] = t.toolCalls();
    expect(call!.isError).to.equal(false);
    expect(textOf(call!.result!).split("\n")).to.deep.equal(["hooked yes", "secret=[]", t.cwd]);
    // Made without a folder, the tool runs in the session's folder, as the built-in does.
    expect(seen).to.deep.equal([{ command: COMMAND, cwd: t.cwd }]);
  });

  it("read, write and edit go only through their operations (an in-memory file system under a folder that does not exist)", async () => {
    const root = join(tmp.path, "no-such-folder");
    const fs = memoryFs({ [`${root}/a.txt`]: "alpha\nbeta\n" });
    const write = createWriteTool(root, { operations: fs.write });
    const edit = createEditTool(root, { operations: fs.edit });
    const read = createReadTool(root, { operations: fs.read });

    // Called as extensions written for pi call a wrapped tool: without a context.
    const written = await write.execute("1", { path: "sub/b.txt", content: "one\ntwo\n" });
    expect(textOf(written)).to.equal("Wrote 8 bytes to sub/b.txt");
    expect(written.details).to.deep.equal({ path: `${root}/sub/b.txt`, bytes: 8 });
    const edited = await edit.execute("2", { path: "a.txt", edits: [{ oldText: "beta", newText: "gamma" }] });
    expect(edited.details.diff).to.contain("-beta").and.contain("+gamma");
    const shown = await read.execute("3", { path: "a.txt" });
    expect(textOf(shown)).to.equal("     1\talpha\n     2\tgamma");
    const window = await read.execute("4", { path: "sub/b.txt", offset: 2 });
    expect(textOf(window)).to.equal("     2\ttwo");

    expect(fs.store.get(`${root}/a.txt`)!.toString()).to.equal("alpha\ngamma\n");
    expect(existsSync(root)).to.equal(false);
    expect(fs.calls).to.deep.equal([
      `mkdir ${root}/sub`,
      `writeFile ${root}/sub/b.txt`,
      `access ${root}/a.txt`,
      `readFile ${root}/a.txt`,
      `writeFile ${root}/a.txt`,
      `access ${root}/a.txt`,
      `readFile ${root}/a.txt`,
      `access ${root}/sub/b.txt`,
      `readFile ${root}/sub/b.txt`,
    ]);
    const missing = await read.execute("5", { path: "nope.txt" }).catch((error: Error) => error.message);
    expect(missing).to.equal("File not found: nope.txt");
  });

  it("read through operations sniffs images and binary files from the bytes they return", async () => {
    const root = "/virtual";
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
    const fs = memoryFs({});
    fs.store.set("/virtual/pic.bin", png);
    fs.store.set("/virtual/blob", Buffer.from([1, 0, 2]));
    const read = createReadTool(root, { operations: fs.read });
    const image = await read.execute("1", { path: "pic.bin" });
    expect(image.content[1]).to.deep.equal({
      type: "image",
      data: png.toString("base64"),
      mimeType: "image/png",
    });
    const binary = await read.execute("2", { path: "blob" }).catch((error: Error) => error.message);
    expect(binary).to.equal("blob is a binary file (3 B); read cannot show it");
  });

  it("ls, find and grep go only through their operations", async () => {
    const root = "/remote/project";
    const fs = memoryFs({
      [`${root}/src/main.ts`]: "const x = 1;\n// TODO: more\n",
      [`${root}/src/util.ts`]: "export {};\n",
      [`${root}/README.md`]: "TODO list\n",
    });
    const ls = await createLsTool(root, { operations: fs.ls }).execute("1", {});
    expect(textOf(ls)).to.equal("README.md\nsrc/");
    const find = await createFindTool(root, { operations: fs.find }).execute("2", {
      pattern: "*.ts",
      limit: 1,
    });
    expect(textOf(find)).to.equal(
      "src/main.ts\n\n[1 results limit reached. Use limit=2 for more, or refine the pattern or path]",
    );
    expect(fs.calls).to.include(`glob *.ts ${root} **/.git/** 2`);
    const grep = createGrepTool(root, { operations: fs.grep });
    const found = await grep.execute("3", { pattern: "TODO", context: 1 });
    expect(textOf(found)).to.equal(
      "README.md:1: TODO list\n--\nsrc/main.ts-1- const x = 1;\nsrc/main.ts:2: // TODO: more",
    );
    const globbed = await grep.execute("4", { pattern: "TODO", glob: "*.ts" });
    expect(textOf(globbed)).to.equal("src/main.ts:2: // TODO: more");

    const { listFiles: _none, ...withoutListing } = fs.grep;
    const single = createGrepTool(root, { operations: withoutListing });
    expect(textOf(await single.execute("5", { pattern: "x", path: "src/main.ts" }))).to.equal(
      "main.ts:1: const x = 1;",
    );
    const folder = await single.execute("6", { pattern: "x" }).catch((error: Error) => error.message);
    expect(folder).to.contain("grep cannot search the folder").and.contain("no listFiles");
  });

  it("bash goes only through its operations: output, exit code, timeout and abort", async () => {
    const runs: { command: string; cwd: string; timeout: number | undefined; marker: string | undefined }[] =
      [];
    const fake: BashOperations = {
      async exec(command, cwd, { onData, timeout, env, signal }) {
        runs.push({ command, cwd, timeout, marker: env?.KC_MARK });
        if (command.endsWith("slow")) throw new Error(`timeout:${timeout}`);
        if (command.endsWith("wait")) {
          await new Promise((resolve) => signal?.addEventListener("abort", resolve));
          throw new Error("aborted");
        }
        onData(Buffer.from("fake output\n"));
        return { exitCode: 3 };
      },
    };
    const bash = createBashTool("/sandbox/work", {
      operations: fake,
      commandPrefix: "set -e",
      spawnHook: (context) => ({ ...context, env: { ...context.env, KC_MARK: "hook" } }),
    });
    const result = await bash.execute("1", { command: "make" });
    expect(textOf(result)).to.equal("fake output\n\n[Exit code: 3]");
    expect(result.details).to.deep.include({ exitCode: 3, timedOut: false, truncated: false });
    expect(runs[0]).to.deep.equal({
      command: "set -e\nmake",
      cwd: "/sandbox/work",
      timeout: undefined,
      marker: "hook",
    });

    const timedOut = await bash
      .execute("2", { command: "slow", timeout: 2 })
      .catch((error: Error) => error.message);
    expect(timedOut).to.equal("(no output)\n\n[Command timed out after 2s]");
    expect(runs[1]!.timeout).to.equal(2);

    const controller = new AbortController();
    const pending = bash
      .execute("3", { command: "wait" }, controller.signal)
      .catch((error: Error) => error.message);
    setTimeout(() => controller.abort(), 10);
    expect(await pending).to.equal("(no output)\n\n[Command aborted]");
  });

  it("createLocalBashOperations runs a real shell with pi's exec contract", async () => {
    const local = createLocalBashOperations();
    const chunks: Buffer[] = [];
    const done = await local.exec("printf 'caf\\303'; sleep 0.05; printf '\\251\\n'; exit 4", tmp.path, {
      onData: (data) => {
        chunks.push(data);
      },
    });
    expect(done).to.deep.equal({ exitCode: 4 });
    // The two halves of "é" arrive as one chunk boundary-safe piece.
    expect(chunks.map((c) => c.toString("utf8")).join("|")).to.not.contain("\ufffd");
    expect(Buffer.concat(chunks).toString("utf8")).to.equal("café\n");
    const timeout = await local
      .exec("sleep 5", tmp.path, { onData: () => {}, timeout: 0.1 })
      .catch((error: Error) => error.message);
    expect(timeout).to.equal("timeout:0.1");
  });

  it("through the built CLI, a pi-style wrapper of createBashTool with a spawn hook runs the hooked command", async () => {
    // Run `npm run build` first: the CLI is the built one.
    const project = join(tmp.path, "project");
    tmp.write("project/.keep", "");
    const extension = tmp.write(
      "ext/hooked-bash.ts",
      `import { createBashTool } from "@knightcodeai/cli";
       export default function (kc) {
         const bash = createBashTool(process.cwd(), {
           spawnHook: ({ command, cwd, env }) => ({ command: "echo from-hook:$HOOK_VAR\\n" + command, cwd, env: { ...env, HOOK_VAR: "1" } }),
         });
         kc.registerTool({ ...bash, execute: (id, params, signal, onUpdate) => bash.execute(id, params, signal, onUpdate) });
       }`,
    );
    const script = tmp.write(
      "script.json",
      JSON.stringify({
        steps: [
          { toolCalls: [{ name: "bash", arguments: { command: "echo original" } }] },
          { expect: { lastToolResult: { toolName: "bash", isError: false } }, text: "done" },
        ],
      }),
    );
    const { code, stdout, stderr } = await runCli(
      ["--mode", "json", "--provider", "scripted", "--script", script, "--no-session", "-e", extension, "go"],
      { cwd: project, env: { KNIGHTCODE_AGENT_DIR: join(tmp.path, "agent") } },
    );
    expect(code, stderr).to.equal(0);
    const end = stdout
      .split("\n")
      .filter((line) => line.includes('"tool_execution_end"'))
      .map((line) => JSON.parse(line) as { isError: boolean; result: { content: { text: string }[] } });
    expect(end).to.have.length(1);
    expect(end[0]!.isError).to.equal(false);
    expect(end[0]!.result.content[0]!.text).to.equal("from-hook:1\noriginal");
  });
});
