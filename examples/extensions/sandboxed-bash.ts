/**
 * Replaces the built-in `bash` tool with one that stays inside the project.
 *
 * Shows: registering a tool under a built-in's name replaces the built-in (and gives it back when the extension
 * goes away), and running commands with `runShellCommand` from `@knightcodeai/cli`, the engine of the built-in.
 *
 * The rule is deliberately simple, a guard rail rather than a sandbox:
 * - a `cd`/`pushd` whose target resolves outside the project folder (`ctx.cwd`) is refused, and so is a bare `cd`
 *   or `cd ~` (they go to the home folder);
 * - any word that starts with `/` or `~` (also after `=`, `>`, `<` or a quote) must resolve inside the project;
 *   `/dev/null` is the one exception.
 * It does not parse variables, `$(...)`, `..` in plain arguments or scripts the command runs; use a real sandbox
 * (a container, a VM) when the model must not be trusted.
 */
import { homedir } from "node:os";
import { isAbsolute, relative, resolve } from "node:path";
import { type ExtensionAPI, runShellCommand } from "@knightcodeai/cli";
import { Type } from "@sinclair/typebox";

const ALLOWED_OUTSIDE = new Set(["/dev/null"]);

function isInside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}

function expandHome(word: string): string {
  return word === "~" || word.startsWith("~/") ? homedir() + word.slice(1) : word;
}

/** Why `command` is refused, or `undefined` when it may run in `cwd`. */
export function refusal(command: string, cwd: string): string | undefined {
  // `cd <dir>` / `pushd <dir>` at the start of the command or after ; & | ( or a newline.
  for (const match of command.matchAll(/(?:^|[;&|(\n])\s*(?:cd|pushd)(?=[\s;&|)]|$)\s*([^\s;&|)]*)/g)) {
    const target = (match[1] ?? "").replace(/^['"]|['"]$/g, "");
    if (target === "" || target === "~") return "cd to the home folder leaves the project";
    if (target === "-") return "cd - may leave the project";
    const dir = resolve(cwd, expandHome(target));
    if (!isInside(dir, cwd)) return `cd ${target} leaves the project (${cwd})`;
  }
  // Absolute (or home-relative) paths anywhere in the command.
  for (const match of command.matchAll(/(?:^|[\s=<>'"(:])((?:\/|~(?=\/|$|\s))[^\s'";|&)<>]*)/g)) {
    const word = match[1] ?? "";
    if (ALLOWED_OUTSIDE.has(word)) continue;
    const path = resolve(expandHome(word));
    if (!isInside(path, cwd)) return `${word} is outside the project (${cwd})`;
  }
  return undefined;
}

export default function (knightcode: ExtensionAPI) {
  knightcode.registerTool({
    name: "bash",
    label: "bash (sandboxed)",
    description:
      "Run a shell command in the project folder. Commands that cd out of the project or name absolute paths " +
      "outside it are refused.",
    promptSnippet: "bash: run shell commands inside the project folder",
    parameters: Type.Object({
      command: Type.String({ description: "The command to run" }),
      timeout: Type.Optional(Type.Number({ description: "Seconds before the command is killed" })),
    }),
    async execute(_toolCallId, params, signal, onUpdate, ctx) {
      const reason = refusal(params.command, ctx.cwd);
      if (reason) throw new Error(`Refused by sandboxed-bash: ${reason}`);
      let streamed = "";
      const result = await runShellCommand(params.command, {
        cwd: ctx.cwd,
        ...(signal ? { signal } : {}),
        ...(params.timeout ? { timeoutMs: params.timeout * 1000 } : {}),
        onData: (chunk) => {
          streamed += chunk;
          onUpdate?.({ content: [{ type: "text", text: streamed }], details: undefined });
        },
      });
      let text = result.output || "(no output)";
      if (result.truncated) text += `\n\n[Output truncated. Full output: ${result.fullOutputPath}]`;
      if (result.timedOut) throw new Error(`${text}\n\nCommand timed out`);
      if (result.aborted) throw new Error(`${text}\n\nCommand aborted`);
      if (result.exitCode !== 0) throw new Error(`${text}\n\nCommand exited with code ${result.exitCode}`);
      return { content: [{ type: "text", text }], details: { exitCode: result.exitCode } };
    },
  });
}
