/**
 * Keys and header values that come from a command, as pi writes them: a value starting with `!` (`"!op read
 * 'op://vault/item/key'"`, `"!security find-generic-password -ws anthropic"`) is run by the shell and its standard
 * output, trimmed, is the value. A `models.json` value runs for each request (the command decides about caching, as
 * in pi); an `auth.json` key runs once per process. The command never runs to decide whether a model is usable.
 */

/** How long a key command may take. */
export const KEY_COMMAND_TIMEOUT_MS = 30_000;

export const isCommandValue = (value: unknown): value is string =>
  typeof value === "string" && value.startsWith("!") && value.slice(1).trim() !== "";

/** A key command that failed: what ran, for whom, and why (never its output, which may hold a secret). */
export class KeyCommandError extends Error {}

/**
 * Runs `!command` and answers its trimmed standard output. `what` names the value in errors (`the apiKey of
 * provider "x" in models.json`). Fails on a non-zero exit, a timeout, an abort and an empty output.
 */
export async function runKeyCommand(value: string, what: string, signal?: AbortSignal): Promise<string> {
  const command = value.slice(1).trim();
  what = what.charAt(0).toUpperCase() + what.slice(1);
  const { execa } = await import("execa");
  const result = await execa(command, {
    shell: true,
    stdin: "ignore",
    reject: false,
    timeout: KEY_COMMAND_TIMEOUT_MS,
    ...(signal ? { cancelSignal: signal } : {}),
    stripFinalNewline: true,
    maxBuffer: 64 * 1024,
  });
  const said = String(result.stderr ?? "")
    .trim()
    .split("\n")[0]
    ?.slice(0, 200);
  if (result.isCanceled) throw new KeyCommandError(`${what}: the command \`${command}\` was stopped`);
  if (result.timedOut) {
    throw new KeyCommandError(
      `${what}: the command \`${command}\` did not finish within ${KEY_COMMAND_TIMEOUT_MS / 1000} s`,
    );
  }
  if (result.failed) {
    const why =
      result.exitCode !== undefined ? `exit code ${result.exitCode}` : (result.shortMessage ?? "failed");
    throw new KeyCommandError(
      `${what}: the command \`${command}\` failed (${why})${said ? `: ${said}` : ""}`,
    );
  }
  const output = String(result.stdout ?? "").trim();
  if (!output) throw new KeyCommandError(`${what}: the command \`${command}\` printed nothing`);
  return output;
}
