/**
 * builtin:mode-acp — `knightcode acp`: KnightCode as an Agent Client Protocol agent over stdio, for editors (Zed,
 * JetBrains IDEs, Neovim and Emacs plugins) and other ACP clients (acp-mode.ts). The factory registers only the
 * mode and its flag, so a session that runs another mode never loads the ACP SDK.
 */
import type { ExtensionAPI } from "@knightcodeai/cli/kit";

/** Seconds a permission request waits for the client's answer before the call is refused. */
export const DEFAULT_PERMISSION_TIMEOUT_S = 300;

export default function (knightcode: ExtensionAPI): void {
  knightcode.registerFlag("acp-permission-timeout", {
    type: "string",
    description:
      "acp mode: seconds to wait for the client's answer to a permission request before refusing the call (default 300)",
  });
  knightcode.registerMode("acp", {
    description: "the Agent Client Protocol on stdin and stdout, for editors (knightcode acp)",
    readsStdin: false,
    run: async (ctx) => {
      const timeout = permissionTimeoutMs(knightcode.getFlag("acp-permission-timeout"));
      if (typeof timeout === "string") {
        ctx.io.stderr.write(`knightcode: ${timeout}\n`);
        return 2;
      }
      return (await import("./acp-mode.js")).runAcp(ctx, { permissionTimeoutMs: timeout });
    },
  });
}

/** The flag's value in milliseconds, or what is wrong with it. */
function permissionTimeoutMs(value: boolean | string | undefined): number | string {
  if (value === undefined) return DEFAULT_PERMISSION_TIMEOUT_S * 1000;
  const seconds = typeof value === "string" ? Number(value) : Number.NaN;
  if (typeof value !== "string" || !/^\d+(\.\d+)?$/.test(value.trim()) || !(seconds > 0)) {
    return `--acp-permission-timeout needs a positive number of seconds, not "${String(value)}"`;
  }
  return Math.round(seconds * 1000);
}
