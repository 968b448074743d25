/**
 * `tool/settings/*` and `resource/*` over `knightcode app-server`: tools.json read with masked keys and the
 * classifier models, written one key at a time with refusals; resources listed as `knightcode config` lists them
 * and switched with a `+`/`-` pattern in the scope that defines them, a project's only once it is trusted.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { useTempDir } from "../../helpers/temp-dir.js";
import { type Harness, harness } from "./harness.js";

function skill(dir: string, name: string): string {
  mkdirSync(join(dir, name), { recursive: true });
  const file = join(dir, name, "SKILL.md");
  writeFileSync(file, `---\nname: ${name}\ndescription: The ${name} skill\n---\nDo ${name}.\n`);
  return file;
}

describe("knightcode app-server: tool settings and resources", function () {
  this.timeout(60_000);
  let h: Harness;
  afterEach(async () => h?.close());
  // Removed after the hook above has stopped the process, so nothing writes into it any more.
  const tmp = useTempDir("kc-appserver-resources-");

  it("reads tools.json with masked keys and the classifier models, and writes one setting at a time", async () => {
    h = await harness(tmp.path);
    const file = join(h.agentDir, "tools.json");
    writeFileSync(
      file,
      JSON.stringify({ "classifier-gate": { enabled: true, apiKey: "sk-secret-9876", timeoutMs: 5000 } }),
    );
    const { client } = await h.start();
    await client.initialize();
    const read = await client.request("tool/settings/read", {});
    const gate = read.tools.find((t) => t.name === "classifier-gate")!;
    expect(gate).to.deep.equal({
      name: "classifier-gate",
      enabled: true,
      settings: { apiKey: "****9876", timeoutMs: "5000" },
    });
    expect(read.tools.find((t) => t.name === "ask-user")).to.deep.equal({
      name: "ask-user",
      enabled: true,
      settings: {},
    });
    expect(read.classifiers).to.deep.equal([{ provider: "local", id: "m", name: "m" }]);
    expect(JSON.stringify(read)).not.to.contain("secret");

    await client.request("tool/settings/write", { name: "classifier-gate", key: "model", value: "local/m" });
    await client.request("tool/settings/write", { name: "classifier-gate", key: "apiKey", value: null });
    await client.request("tool/settings/write", { name: "ask-user", key: "enabled", value: false });
    expect(JSON.parse(readFileSync(file, "utf8"))).to.deep.equal({
      "classifier-gate": { enabled: true, timeoutMs: 5000, model: "local/m" },
      "ask-user": { enabled: false },
    });
    const after = await client.request("tool/settings/read", {});
    expect(after.tools.find((t) => t.name === "ask-user")!.enabled).to.equal(false);

    for (const [params, what] of [
      [{ name: "nope", key: "x", value: "1" }, "Unknown tool"],
      [{ name: "classifier-gate", key: "bad key", value: "1" }, "Malformed setting key"],
      [{ name: "classifier-gate", key: "enabled", value: "yes" }, "true or false"],
      [{ name: "classifier-gate", key: "model", value: true }, "takes a string"],
    ] as const) {
      const refused = await client.request("tool/settings/write", params as never).catch((e) => e);
      expect(refused.data?.code, what).to.equal("invalidParams");
      expect(refused.message).to.contain(what);
    }
    // A malformed file is reported and never overwritten.
    writeFileSync(file, "{ not json");
    const broken = await client.request("tool/settings/read", {});
    expect(broken.warning).to.contain(file);
    const refused = await client
      .request("tool/settings/write", { name: "ask-user", key: "enabled", value: true })
      .catch((e) => e);
    expect(refused.data?.code).to.equal("invalidParams");
    expect(readFileSync(file, "utf8")).to.equal("{ not json");
  });

  it("lists resources and switches them in the scope that defines them; a project's need trust", async () => {
    h = await harness(tmp.path);
    const review = skill(join(h.agentDir, "skills"), "review");
    const local = skill(join(h.project, ".knightcode", "skills"), "local-only");
    const { client } = await h.start();
    await client.initialize();

    const global = await client.request("resource/list", {});
    expect(global.resources).to.deep.equal([
      {
        type: "skills",
        path: review,
        name: "review",
        enabled: true,
        scope: "user",
        origin: "top-level",
        source: "auto",
      },
    ]);
    // Untrusted: the project's resources are not read, and cannot be switched.
    const untrusted = await client.request("resource/list", { cwd: h.project });
    expect(untrusted.resources.map((r) => r.path)).to.deep.equal([review]);
    const refused = await client
      .request("resource/set", { cwd: h.project, type: "skills", path: local, enabled: false })
      .catch((e) => e);
    expect(refused.data).to.deep.include({ code: "invalidParams", reason: "untrusted" });

    const set = await client.request("resource/set", { type: "skills", path: review, enabled: false });
    expect(set.resource).to.deep.include({ path: review, enabled: false });
    expect(JSON.parse(readFileSync(join(h.agentDir, "settings.json"), "utf8")).skills).to.deep.equal([
      "-skills/review/SKILL.md",
    ]);
    expect((await client.request("resource/list", {})).resources[0]!.enabled).to.equal(false);

    await client.request("project/trust/write", { cwd: h.project, trusted: true });
    const trusted = await client.request("resource/list", { cwd: h.project });
    expect(trusted.resources.find((r) => r.path === local)).to.deep.include({
      scope: "project",
      enabled: true,
    });
    await client.request("resource/set", { cwd: h.project, type: "skills", path: local, enabled: false });
    expect(
      JSON.parse(readFileSync(join(h.project, ".knightcode", "settings.json"), "utf8")).skills,
    ).to.deep.equal(["-skills/local-only/SKILL.md"]);

    for (const path of [join(h.agentDir, "skills", "missing", "SKILL.md"), "builtin:core-tools"]) {
      const unknown = await client
        .request("resource/set", { type: "skills", path, enabled: true })
        .catch((e) => e);
      expect(unknown.data, path).to.deep.include({ code: "invalidParams", reason: "path" });
    }
  });
});
