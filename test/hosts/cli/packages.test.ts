/**
 * `knightcode install|remove|list|update|config` as real processes, against real parts: a git repository in a temp
 * dir (cloned by `git:`/`file://`), an npm tarball made by `npm pack` and installed by the npm client with no
 * network, and a local folder. Each package carries an extension, a skill, a prompt template and a theme; print runs
 * against a local OpenAI-compatible server show which of them loaded, read from the request body the server got.
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { expect } from "chai";
import { textStream } from "../../builtin-extensions/providers/openai-compatible/fixtures.js";
import { runCli } from "../../helpers/cli.js";
import { writeLocalModels } from "../../helpers/local-models.js";
import { startTestServer, type TestServer, writeSse } from "../../helpers/sse-server.js";

/** A package folder offering one resource of each kind, all named after `name`. */
function writePackage(root: string, name: string, manifest: "knightcode" | "pi" | "folders"): void {
  const write = (rel: string, text: string) => {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  };
  const layout = {
    extensions: ["./extensions/index.ts"],
    skills: ["./skills"],
    prompts: ["./prompts"],
    themes: ["./themes/*.json"],
  };
  write(
    "package.json",
    JSON.stringify({
      name,
      version: "1.0.0",
      ...(manifest === "folders" ? {} : { [manifest]: layout }),
      peerDependencies: { "@knightcodeai/cli": "*" },
    }),
  );
  // The extension reports itself and the theme paths it can see in the system prompt.
  write(
    "extensions/index.ts",
    `import { basename } from "node:path";
export default function (kc) {
  kc.on("before_agent_start", (event, ctx) => {
    const themes = ctx.getDiscoveredResources().themePaths.map((p) => basename(p)).join(",");
    event.systemPromptOptions.sections.push({ id: "${name}", text: "EXT ${name} themes=[" + themes + "]" });
    return undefined;
  });
}
`,
  );
  write(
    `skills/${name}-skill/SKILL.md`,
    `---\nname: ${name}-skill\ndescription: Skill of ${name}\n---\nDo it.\n`,
  );
  write(
    `prompts/${name}-prompt.md`,
    `---\ndescription: Prompt of ${name}\n---\nTemplate of ${name} says $1\n`,
  );
  write(`themes/${name}-theme.json`, JSON.stringify({ name: `${name}-theme`, colors: {} }));
}

const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd,
    stdio: "pipe",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@example.com",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@example.com",
    },
  })
    .toString()
    .trim();

describe("knightcode package commands (real git, npm and folders)", function () {
  this.timeout(120_000);
  let server: TestServer;
  let dir: string;
  let agentDir: string;
  let project: string;
  let env: Record<string, string>;

  beforeEach(async () => {
    server = await startTestServer();
    server.respond((_req, res) => writeSse(res, textStream("ok")));
    dir = mkdtempSync(join(tmpdir(), "kc-packages-"));
    agentDir = join(dir, "agent");
    project = join(dir, "project");
    mkdirSync(project, { recursive: true });
    mkdirSync(join(dir, "home"), { recursive: true });
    mkdirSync(agentDir, { recursive: true });
    writeLocalModels(agentDir, {
      baseUrl: `${server.url}/v1`,
      apiKey: "sk-test",
      models: [{ id: "m1", contextWindow: 32768, maxTokens: 1024 }],
    });
    env = {
      KNIGHTCODE_AGENT_DIR: agentDir,
      HOME: join(dir, "home"),
      // npm must not reach the network: only the tarball on disk is used.
      npm_config_offline: "true",
      npm_config_audit: "false",
      npm_config_fund: "false",
      npm_config_update_notifier: "false",
    };
  });

  afterEach(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const cli = (args: string[], cwd = project) => runCli(args, { cwd, env, timeoutMs: 90_000 });

  /** A print run; returns the system prompt and the last user message the server received. */
  async function printRun(prompt = "hello", extra: string[] = []) {
    const before = server.requests.length;
    const run = await cli(["--provider", "local", "--model", "m1", ...extra, "-p", prompt]);
    expect(run.code, run.stderr).to.equal(0);
    const request = server.requests[before];
    expect(request, `no request reached the server\n${run.stderr}`).to.not.equal(undefined);
    const messages = request!.body.messages as { role: string; content: unknown }[];
    const user = messages.filter((m) => m.role === "user").at(-1)!.content;
    return {
      system: String(messages[0]!.content),
      user: typeof user === "string" ? user : JSON.stringify(user),
      stderr: run.stderr,
    };
  }

  /** Everything of `name`'s package loaded: extension, skill (listed in the prompt), template, theme: one run. */
  async function expectLoaded(name: string) {
    const { system, user } = await printRun(`/${name}-prompt hi`);
    expect(system).to.match(new RegExp(`EXT ${name} themes=\\[[^\\]]*${name}-theme\\.json`));
    expect(system).to.contain(`${name}-skill`).and.contain(`Skill of ${name}`);
    expect(user).to.contain(`Template of ${name} says hi`);
  }

  async function expectUnloaded(name: string) {
    const { system, user } = await printRun(`/${name}-prompt hi`);
    expect(system).to.not.contain(`EXT ${name}`);
    expect(system).to.not.contain(`${name}-skill`);
    expect(user).to.not.contain(`Template of ${name}`);
  }

  function makeRepo(name: string): string {
    const repo = join(dir, "repos", name);
    writePackage(repo, name, "knightcode");
    git(repo, "init", "--quiet", "--initial-branch=main");
    git(repo, "add", ".");
    git(repo, "commit", "--quiet", "-m", "first");
    return repo;
  }

  it("installs a git repository by file URL, loads all four resources, updates to a new commit and removes it", async () => {
    const repo = makeRepo("gitpkg");
    const source = `file://${repo}`;
    const installed = await cli(["install", source]);
    expect(installed.code, installed.stderr).to.equal(0);
    const settings = JSON.parse(readFileSync(join(agentDir, "settings.json"), "utf8"));
    expect(settings.packages).to.deep.equal([source]);
    const clone = join(agentDir, "git", "local", ...repo.split("/").filter(Boolean));
    expect(existsSync(join(clone, ".git"))).to.equal(true);
    await expectLoaded("gitpkg");

    const listed = await cli(["list"]);
    expect(listed.stdout).to.contain(source).and.contain(clone);

    // A new commit upstream: update moves the clone to it.
    writeFileSync(join(repo, "prompts", "gitpkg-prompt.md"), "Updated template says $1\n");
    git(repo, "commit", "--quiet", "-am", "second");
    const head = git(repo, "rev-parse", "HEAD");
    expect(git(clone, "rev-parse", "HEAD")).to.not.equal(head);
    const updated = await cli(["update"]);
    expect(updated.code, updated.stderr).to.equal(0);
    expect(updated.stdout).to.contain(`Updated ${source}`);
    expect(git(clone, "rev-parse", "HEAD")).to.equal(head);
    expect((await printRun("/gitpkg-prompt now")).user).to.contain("Updated template says now");

    const removed = await cli(["remove", source]);
    expect(removed.code, removed.stderr).to.equal(0);
    expect(existsSync(clone)).to.equal(false);
    expect(JSON.parse(readFileSync(join(agentDir, "settings.json"), "utf8")).packages).to.deep.equal([]);
    await expectUnloaded("gitpkg");
  });

  it("installs an npm package from a tarball through the npm client with no network, then removes it", async () => {
    const src = join(dir, "npm-src");
    writePackage(src, "npmpkg", "pi");
    const tarball = execFileSync("npm", ["pack", "--silent", "--pack-destination", dir], {
      cwd: src,
      env: { ...process.env, ...env },
    })
      .toString()
      .trim();
    const source = `npm:npmpkg@file:${join(dir, tarball)}`;
    const installed = await cli(["install", source]);
    expect(installed.code, installed.stderr).to.equal(0);
    const root = join(agentDir, "npm", "node_modules", "npmpkg");
    expect(existsSync(join(root, "package.json"))).to.equal(true);
    // KnightCode's own npm folder, never the project's node_modules.
    expect(existsSync(join(project, "node_modules"))).to.equal(false);
    await expectLoaded("npmpkg");

    // A pinned package is left alone by update.
    const updated = await cli(["update"]);
    expect(updated.stdout).to.contain(`Skipped ${source}: pinned`);

    const removed = await cli(["remove", "npm:npmpkg"]);
    expect(removed.code, removed.stderr).to.equal(0);
    expect(existsSync(root)).to.equal(false);
    await expectUnloaded("npmpkg");
  });

  it("uses a local folder in place, applies settings filters and +/- patterns, and removes it", async () => {
    const folder = join(dir, "localpkg");
    writePackage(folder, "localpkg", "folders");
    const installed = await cli(["install", folder]);
    expect(installed.code, installed.stderr).to.equal(0);
    expect(installed.stdout).to.contain(
      "It adds 1 extension, 1 skill, 1 prompt, 1 theme; they load in the next session (or /reload).",
    );
    await expectLoaded("localpkg");
    // A folder is used in place: installing it again says so, and does not send you to `update`.
    const again = await cli(["install", folder]);
    expect(again.code).to.equal(1);
    expect(again.stderr).to.contain("already installed").and.contain("read from its folder on every run");
    expect(again.stderr).to.not.contain("update");

    // A filter of [] turns a kind off; "-path" turns one resource off through `config disable`.
    const settingsFile = join(agentDir, "settings.json");
    const disabled = await cli(["config", "disable", join(folder, "skills", "localpkg-skill", "SKILL.md")]);
    expect(disabled.code, disabled.stderr).to.equal(0);
    const written = JSON.parse(readFileSync(settingsFile, "utf8"));
    expect(written.packages).to.deep.equal([{ source: folder, skills: ["-skills/localpkg-skill/SKILL.md"] }]);
    const listing = await cli(["config"]);
    expect(listing.stdout)
      .to.match(/\[ \] skills\s+localpkg-skill/)
      .and.match(/\[x\] prompts\s+localpkg-prompt/);
    written.packages[0].prompts = [];
    writeFileSync(settingsFile, JSON.stringify(written));
    let run = await printRun("/localpkg-prompt hi");
    expect(run.system).to.contain("EXT localpkg").and.not.contain("localpkg-skill");
    expect(run.user).to.not.contain("Template of localpkg");
    const enabled = await cli(["config", "enable", join(folder, "skills", "localpkg-skill", "SKILL.md")]);
    expect(enabled.code, enabled.stderr).to.equal(0);
    run = await printRun();
    expect(run.system).to.contain("localpkg-skill");

    const removed = await cli(["remove", folder]);
    expect(removed.code, removed.stderr).to.equal(0);
    expect(existsSync(folder)).to.equal(true);
    await expectUnloaded("localpkg");
  });

  it("installs a project package with -l but loads it only once the project is trusted", async () => {
    const folder = join(dir, "projpkg");
    writePackage(folder, "projpkg", "folders");
    const installed = await cli(["install", "-l", folder]);
    expect(installed.code, installed.stderr).to.equal(0);
    expect(
      JSON.parse(readFileSync(join(project, ".knightcode", "settings.json"), "utf8")).packages,
    ).to.deep.equal([folder]);
    const untrusted = await printRun();
    expect(untrusted.system).to.not.contain("EXT projpkg");
    expect(untrusted.stderr).to.contain("until the project is trusted").and.contain(folder);
    const trusted = await printRun("hello", ["--approve"]);
    expect(trusted.system).to.contain("EXT projpkg").and.contain("projpkg-skill");
  });

  it("exits 1 with a clear message for an unknown source or a failed git clone, leaving the settings alone", async () => {
    const settingsFile = join(agentDir, "settings.json");
    writeFileSync(settingsFile, `${JSON.stringify({ packages: [] }, null, 2)}\n`);
    const before = readFileSync(settingsFile, "utf8");

    const unknown = await cli(["install", "svn:example.com/x"]);
    expect(unknown.code).to.equal(1);
    expect(unknown.stderr).to.contain('unknown package source "svn:example.com/x"');

    const missingRepo = await cli(["install", `file://${join(dir, "no-such-repo")}`]);
    expect(missingRepo.code).to.equal(1);
    expect(missingRepo.stderr).to.contain("git clone").and.contain("no-such-repo");

    expect(readFileSync(settingsFile, "utf8")).to.equal(before);
  });

  it("installs -e git:... for one run into a cache, leaving the settings alone", async () => {
    const repo = makeRepo("temppkg");
    const { system } = await printRun("hello", ["-e", `file://${repo}`]);
    expect(system).to.contain("EXT temppkg").and.contain("temppkg-skill");
    expect(existsSync(join(agentDir, "settings.json"))).to.equal(false);
    expect(existsSync(join(agentDir, "cache", "packages", "git"))).to.equal(true);
    const again = await printRun();
    expect(again.system).to.not.contain("EXT temppkg");
  });

  describe("a package that reaches outside its own folder is refused", () => {
    /** Code outside every package: were it loaded, the system prompt would say `EXT outside`. */
    function writeOutside(folder: string): string {
      mkdirSync(folder, { recursive: true });
      const file = join(folder, "outside.ts");
      writeFileSync(
        file,
        `export default function (kc) {
  kc.on("before_agent_start", (event) => {
    event.systemPromptOptions.sections.push({ id: "outside", text: "EXT outside" });
    return undefined;
  });
}
`,
      );
      return file;
    }

    /** A package whose manifest lists `extensions` (and a harmless prompt, so it offers something). */
    function writeManifestPackage(root: string, name: string, extensions: string[]): void {
      mkdirSync(join(root, "prompts"), { recursive: true });
      writeFileSync(join(root, "prompts", `${name}.md`), "inside\n");
      writeFileSync(
        join(root, "package.json"),
        JSON.stringify({ name, version: "1.0.0", knightcode: { extensions, prompts: ["./prompts"] } }),
      );
    }

    async function expectRefused(source: string, ...mentions: string[]) {
      const settingsFile = join(agentDir, "settings.json");
      writeFileSync(settingsFile, `${JSON.stringify({ packages: [] }, null, 2)}\n`);
      const before = readFileSync(settingsFile, "utf8");
      const run = await cli(["install", source]);
      expect(run.code, run.stderr).to.equal(1);
      expect(run.stderr).to.contain(`package ${source}:`).and.contain("outside the package folder");
      for (const mention of mentions) expect(run.stderr).to.contain(mention);
      expect(readFileSync(settingsFile, "utf8")).to.equal(before);
      expect((await printRun()).system).to.not.contain("EXT outside");
    }

    it("a folder whose manifest names ../outside/outside.ts, on install and when already configured", async () => {
      writeOutside(join(dir, "outside"));
      const folder = join(dir, "escapee");
      writeManifestPackage(folder, "escapee", ["../outside/outside.ts"]);
      await expectRefused(folder, '"extensions" entry "../outside/outside.ts"', "climbs out");

      // Configured by hand: a session does not load it, and says why.
      writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ packages: [folder] }));
      const run = await printRun();
      expect(run.system).to.not.contain("EXT outside").and.not.contain("escapee");
      expect(run.stderr).to.contain(`package ${folder}:`).and.contain("../outside/outside.ts");
    });

    it("a folder whose extensions/ folder is a symbolic link to a folder outside it", async () => {
      const outside = join(dir, "outside");
      writeOutside(outside);
      const folder = join(dir, "linked");
      mkdirSync(join(folder, "prompts"), { recursive: true });
      writeFileSync(join(folder, "prompts", "linked.md"), "inside\n");
      symlinkSync(outside, join(folder, "extensions"));
      await expectRefused(folder, "the extensions/ folder", `symbolic link to ${outside}`);
    });

    it("a git repository holding a symbolic link to a folder outside the clone", async () => {
      const outside = join(dir, "outside");
      writeOutside(outside);
      const repo = join(dir, "repos", "gitlink");
      writeManifestPackage(repo, "gitlink", ["./extensions"]);
      symlinkSync(outside, join(repo, "extensions"));
      git(repo, "init", "--quiet", "--initial-branch=main");
      git(repo, "add", ".");
      git(repo, "commit", "--quiet", "-m", "first");
      const source = `file://${repo}`;
      await expectRefused(source, '"extensions" entry "./extensions"', `symbolic link to ${outside}`);
      // The clone is not kept.
      expect(existsSync(join(agentDir, "git", "local", ...repo.split("/").filter(Boolean)))).to.equal(false);
    });

    it("an npm package whose manifest climbs out of node_modules", async () => {
      // <agentDir>/npm/node_modules/npmescape/../../../outside is <agentDir>/outside.
      writeOutside(join(agentDir, "outside"));
      const src = join(dir, "npm-escape");
      writeManifestPackage(src, "npmescape", ["../../../outside/outside.ts"]);
      const tarball = execFileSync("npm", ["pack", "--silent", "--pack-destination", dir], {
        cwd: src,
        env: { ...process.env, ...env },
      })
        .toString()
        .trim();
      const source = `npm:npmescape@file:${join(dir, tarball)}`;
      await expectRefused(source, "../../../outside/outside.ts");
      expect(existsSync(join(agentDir, "npm", "node_modules", "npmescape"))).to.equal(false);
    });
  });

  it("lists install, remove, list, update and config in --help", async () => {
    const help = await cli(["--help"]);
    for (const command of [
      "install <source> [-l]",
      "remove <source> [-l]",
      "list",
      "update [source]",
      "config",
    ]) {
      expect(help.stdout).to.contain(command);
    }
  });
});
