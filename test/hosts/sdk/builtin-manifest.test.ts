/** The built-in manifest says exactly what the built-in extensions register, so hosts can trust it unloaded. */

import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { expect } from "chai";
import { BUILTIN_MANIFEST } from "../../../hosts/sdk/builtin-manifest.js";
import { createAgentSession, createStandardKernel } from "../../../hosts/sdk/create-agent-session.js";
import { sdkTokens } from "../../../hosts/sdk/session-plugins.js";
import { useTempDir } from "../../helpers/temp-dir.js";

describe("the built-in manifest", () => {
  const tmp = useTempDir("kc-manifest-");

  it("declares, in load order, the modes, flags and providers each built-in's factory registers", async () => {
    const cwd = join(tmp.path, "project");
    mkdirSync(cwd);
    const agentDir = join(tmp.path, "agent");
    const kernel = await createStandardKernel({ agentDir, cacheDir: false });
    const handle = await createAgentSession({ cwd, agentDir, kernel, session: { inMemory: true } });
    try {
      const flags = handle.registeredFlags();
      const modes = handle.listModes();
      const providers = handle.runtime.scope.resolve(sdkTokens.providers).list();
      const registered = handle.runtime.extensionInfos
        .filter((info) => info.origin === "builtin")
        .map((info) => ({
          name: info.id.slice("builtin:".length),
          modes: modes
            .filter((m) => m.owner === info.id)
            .map((m) => ({ name: m.name, description: m.description, readsStdin: m.readsStdin === true })),
          flags: flags
            .filter((f) => f.owner === info.id)
            .map((f) => ({ name: f.name, type: f.type, description: f.description })),
          providers: providers
            .filter((p) => p.owner === info.id)
            .map((p) => ({ name: p.name, api: p.config.api })),
        }));
      expect(registered).to.deep.equal(BUILTIN_MANIFEST);
    } finally {
      await handle.dispose();
      await kernel.dispose();
    }
  });
});
