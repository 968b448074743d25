/**
 * The environment policy for tool processes: which names it leaves out, and that real children started for tools
 * (the user's `!cmd` shell, `knightcode.exec()`) never see them.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "chai";
import { type ExtensionContext, HookBus } from "../../../../kernel/index.js";
import { toolEnvironment } from "../../../../plugins/kit/process/env-policy.js";
import { ProcessService } from "../../../../plugins/process/process-service.js";
import { runUserBash } from "../../../../plugins/process/user-bash.js";
import { KEPT, SECRETS, withTestVariables } from "../../../helpers/secret-env.js";

describe("environment policy for tool processes", () => {
  withTestVariables();

  it("leaves out names ending in _KEY, _TOKEN, _SECRET or containing PASSWORD, in any case", () => {
    const env = toolEnvironment();
    for (const name of Object.keys(SECRETS)) expect(env, name).not.to.have.property(name);
    for (const [name, value] of Object.entries(KEPT)) expect(env).to.have.property(name, value);
    expect(env.PATH).to.equal(process.env.PATH);
    // The source is not changed.
    expect(process.env.KC_TEST_PROVIDER_API_KEY).to.equal("sk-secret-1");
  });

  it("include lets names through, exclude leaves more out and wins over include", () => {
    const env = toolEnvironment(process.env, {
      include: ["kc_test_github_token", "KC_TEST_*_SECRET"],
      exclude: ["KC_TEST_PL?IN", "KC_TEST_CLIENT_*"],
    });
    expect(env).to.have.property("KC_TEST_GITHUB_TOKEN", "secret-5");
    expect(env).not.to.have.property("KC_TEST_CLIENT_SECRET");
    expect(env).not.to.have.property("KC_TEST_PLAIN");
    expect(env).not.to.have.property("KC_TEST_PROVIDER_API_KEY");
    expect(env).to.have.property("KC_TEST_KEYBOARD", "us");
    // Patterns are globs, not regular expressions: a dot is a dot.
    expect(toolEnvironment({ "A.B": "1", AXB: "2" }, { exclude: ["A.B"] })).to.deep.equal({ AXB: "2" });
    expect(Object.keys(toolEnvironment(process.env, { include: ["*"] }))).to.include.members(
      Object.keys(SECRETS),
    );
  });

  describe("real child processes", () => {
    let dir: string;
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), "kc-env-policy-"));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it("a user's shell command (!cmd, RPC bash) does not see the secrets", async () => {
      const result = await runUserBash({
        bus: new HookBus({ onHandlerError: () => {} }),
        ctx: {} as ExtensionContext,
        cwd: dir,
        command: "env",
        excludeFromContext: false,
      });
      expect(result.exitCode).to.equal(0);
      for (const value of Object.values(SECRETS)) expect(result.output).not.to.contain(value);
      expect(result.output).to.contain("KC_TEST_PLAIN=plain-value");

      const included = await runUserBash({
        bus: new HookBus({ onHandlerError: () => {} }),
        ctx: {} as ExtensionContext,
        cwd: dir,
        command: "env",
        excludeFromContext: false,
        env: toolEnvironment(process.env, { include: ["KC_TEST_GITHUB_TOKEN"] }),
      });
      expect(included.output).to.contain("KC_TEST_GITHUB_TOKEN=secret-5");
      expect(included.output).not.to.contain("sk-secret-1");
    });

    it("knightcode.exec() runs programs without the secrets, under the configured policy", async () => {
      const print = ["-e", "process.stdout.write(JSON.stringify(process.env))"];
      const plain = await new ProcessService(dir).exec(process.execPath, print, { timeout: 20_000 });
      const env = JSON.parse(plain.stdout) as Record<string, string>;
      for (const name of Object.keys(SECRETS)) expect(env, name).not.to.have.property(name);
      expect(env).to.have.property("KC_TEST_PLAIN", "plain-value");

      let policy = { include: ["KC_TEST_GITHUB_TOKEN"], exclude: ["KC_TEST_PLAIN"] };
      const service = new ProcessService(dir, () => policy);
      const configured = JSON.parse((await service.exec(process.execPath, print)).stdout);
      expect(configured).to.have.property("KC_TEST_GITHUB_TOKEN", "secret-5");
      expect(configured).not.to.have.property("KC_TEST_PLAIN");
      // The policy is asked at each call (settings may be reloaded).
      policy = { include: [], exclude: [] };
      const again = JSON.parse((await service.exec(process.execPath, print)).stdout);
      expect(again).not.to.have.property("KC_TEST_GITHUB_TOKEN");
    });
  });
});
