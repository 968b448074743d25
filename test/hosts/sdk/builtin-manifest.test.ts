/**
 * The built-in manifest says exactly what the built-in extensions register, so hosts can trust it unloaded. Each
 * built-in's real factory runs against an API object that writes down the registrations it is asked for.
 */

import { expect } from "chai";
import { builtinSources } from "../../../hosts/sdk/builtin-extensions.js";
import { BUILTIN_MANIFEST } from "../../../hosts/sdk/builtin-manifest.js";
import type { ExtensionAPI } from "../../../kernel/index.js";

/** An ExtensionAPI whose every method (also of `events`, `log` and `services`) records its call and returns nothing. */
function recordingApi(calls: [string, unknown[]][], prefix = ""): ExtensionAPI {
  return new Proxy({} as ExtensionAPI, {
    get: (_target, method) =>
      method === "events" || method === "log" || method === "services"
        ? recordingApi(calls, `${String(method)}.`)
        : (...args: unknown[]) => {
            calls.push([`${prefix}${String(method)}`, args]);
          },
  });
}

describe("the built-in manifest", () => {
  it("declares, in load order, the modes, flags and providers each built-in's factory registers", async () => {
    const registered = [];
    for (const source of builtinSources(new Set())) {
      const calls: [string, unknown[]][] = [];
      await source.factory!(recordingApi(calls));
      const args = (method: string) => calls.filter(([m]) => m === method).map(([, a]) => a);
      registered.push({
        name: source.name,
        modes: args("registerMode").map(([name, mode]) => {
          const { description, readsStdin } = mode as { description?: string; readsStdin?: boolean };
          return { name, description, readsStdin: readsStdin === true };
        }),
        flags: args("registerFlag").map(([name, flag]) => {
          const { type, description } = flag as { type: string; description?: string };
          return { name, type, description };
        }),
        providers: args("registerProvider").map(([name, config]) => ({
          name,
          api: (config as { api?: string }).api,
        })),
      });
    }
    expect(registered).to.deep.equal(BUILTIN_MANIFEST);
  });

  it("disables a built-in by its id", () => {
    const names = builtinSources(new Set(["builtin:mode-rpc", "builtin:anthropic"])).map((s) => s.name);
    expect(names).to.deep.equal(
      BUILTIN_MANIFEST.map((b) => b.name).filter((n) => n !== "mode-rpc" && n !== "anthropic"),
    );
  });
});
