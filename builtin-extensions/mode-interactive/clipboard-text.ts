/**
 * Text onto the clipboard for `/copy` and `/share`, with the system's own tools as the image paste reads them
 * (`wl-copy` or `xclip` on Linux, `pbcopy` on macOS, `clip.exe` on Windows). Without any of them (over SSH, say)
 * the caller falls back to OSC 52, which asks the terminal itself to set its clipboard.
 */
import { spawn } from "node:child_process";

const TIMEOUT_MS = 3000;

/** The tool that took the text, or why none did. */
export async function writeClipboardText(
  text: string,
  platform: NodeJS.Platform = process.platform,
): Promise<{ tool: string } | { missing: string }> {
  const tools: [string, string[]][] =
    platform === "darwin"
      ? [["pbcopy", []]]
      : platform === "win32"
        ? [["clip.exe", []]]
        : process.env.WAYLAND_DISPLAY
          ? [
              ["wl-copy", []],
              ["xclip", ["-selection", "clipboard", "-in"]],
            ]
          : [
              ["xclip", ["-selection", "clipboard", "-in"]],
              ["wl-copy", []],
            ];
  const failures: string[] = [];
  for (const [command, args] of tools) {
    const result = await pipeTo(command, args, text);
    if (result === "ok") return { tool: command };
    if (result !== "absent") failures.push(`${command} ${result}`);
  }
  return {
    missing: failures.length
      ? failures.join("; ")
      : `no clipboard tool (${tools.map(([c]) => c).join(" or ")}) is installed`,
  };
}

function pipeTo(command: string, args: string[], text: string): Promise<"ok" | "absent" | string> {
  return new Promise((done) => {
    const child = spawn(command, args, { stdio: ["pipe", "ignore", "ignore"], timeout: TIMEOUT_MS });
    child.on("error", (error: NodeJS.ErrnoException) =>
      done(error.code === "ENOENT" ? "absent" : `failed: ${error.message}`),
    );
    child.on("close", (code, signal) =>
      done(code === 0 ? "ok" : signal ? `was stopped (${signal})` : `exited with ${code}`),
    );
    child.stdin.on("error", () => {});
    child.stdin.end(text);
  });
}

/** The OSC 52 sequence that sets the terminal's clipboard (tmux passes it on with `set-clipboard on`). */
export function osc52(text: string): string {
  return `\x1b]52;c;${Buffer.from(text, "utf8").toString("base64")}\x07`;
}
