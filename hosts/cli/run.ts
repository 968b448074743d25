/**
 * The `knightcode` command: parses the command line, starts a session through the SDK, and hands it to the mode
 * `--mode` names (print, json, ... — modes are extensions, so an extension can add or replace one).
 * The SDK is imported only when a session opens: `--help` for the built-ins prints from their manifest and usage
 * errors need nothing either.
 */

import { existsSync, fstatSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { isatty } from "node:tty";
import type {
  AgentSessionHandle,
  CreateAgentSessionOptions,
  ExtensionUIContext,
  ModeIO,
  ModeSessionOptions,
  RegisteredMode,
} from "@knightcodeai/cli";
import {
  type CliArgs,
  parseArgs,
  provisionalFlagValues,
  resolveExtensionFlags,
  type UsageProblem,
} from "./args.js";
import { builtinHelp, helpNeedsSession, helpText } from "./help.js";
import { PACKAGE_COMMANDS, packagesCommand } from "./packages.js";
import { guardStdout } from "./stdout-guard.js";
import { packageVersion } from "./version.js";

class UsageError extends Error {
  constructor(readonly problem: UsageProblem) {
    super(problem.error);
  }
}

let sessionOpened = false;

/** Whether this process opened a session (bundle-loader.ts keeps the code cache of such a run). */
export function openedSession(): boolean {
  return sessionOpened;
}

export async function main(argv: string[]): Promise<number> {
  const controller = new AbortController();
  const stop = () => controller.abort();
  // A reader that went away (`knightcode --mode json ... | head`, `--list-extensions | head`) ends the run
  // instead of crashing it.
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") stop();
  });
  // Diagnostics to a reader that went away (`2>&1 | head`) are lost, not fatal.
  process.stderr.on("error", () => {});
  if (argv[0] === "mcp") {
    const { mcpCommand } = await import("./mcp-command.js");
    return mcpCommand(argv.slice(1), {
      out: (text) => process.stdout.write(text),
      err: (text) => process.stderr.write(text),
    });
  }
  if (argv[0] === "login" || argv[0] === "logout") {
    const { loginCommand } = await import("./login-command.js");
    return loginCommand(argv[0], argv.slice(1), {
      out: (text) => process.stdout.write(text),
      err: (text) => process.stderr.write(text),
    });
  }
  if (argv[0] === "import") {
    const { importCommand } = await import("./import-pi.js");
    return importCommand(argv.slice(1), {
      out: (text) => process.stdout.write(text),
      err: (text) => process.stderr.write(text),
    });
  }
  if (argv[0] === "app-server") {
    const { appServerCommand } = await import("./app-server.js");
    return appServerCommand(argv.slice(1));
  }
  // `knightcode install npm:x` is a command, not two prompts.
  if (argv[0] !== undefined && PACKAGE_COMMANDS.has(argv[0])) return packagesCommand(argv);
  // `knightcode acp [options]`: the acp mode (builtin:mode-acp) with the usual session options.
  const acp = argv[0] === "acp";
  const parsed = parseArgs(acp ? argv.slice(1) : argv);
  if (!parsed.ok) return usage(parsed);
  const args = parsed.args;
  if (acp) {
    const problem = acpArgsProblem(args);
    if (problem) return usage({ error: problem });
    args.mode = "acp";
  }
  if (args.help && !helpNeedsSession(args)) {
    const { flags, modes } = builtinHelp();
    process.stdout.write(helpText(packageVersion(), flags, modes));
    return 0;
  }
  if (args.help || args.listExtensions || args.listModels !== undefined) return inspect(args);
  if (args.exportSession) return exportSession(args, args.exportSession);

  // In a terminal, prompts on the command line start the interactive mode with them (as the closest peer does);
  // anywhere else (pipes, scripts, CI) they run in print mode. --resume asks for the interactive mode's picker.
  if (args.resume && (args.print || (args.mode !== undefined && args.mode !== "interactive"))) {
    return usage({
      error: "--resume opens the interactive mode's session picker; it cannot run with -p or --mode",
    });
  }
  // isatty() rather than process.stdin: making the stdin stream costs a few milliseconds, and a print or JSON run
  // whose prompt is on the command line never reads it.
  const terminal = isatty(0) && isatty(1);
  const modeName = args.resume
    ? "interactive"
    : (args.mode ?? (args.print || !terminal ? "print" : "interactive"));
  let handle: AgentSessionHandle | undefined;
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  // From here on only the mode writes to stdout; extensions' stray output goes to stderr.
  const guard = guardStdout();
  let stdinOpened = false;
  const io: ModeIO = {
    get stdin() {
      stdinOpened = true;
      return process.stdin;
    },
    stdout: guard.stdout,
    stderr: process.stderr,
    isTTY: Boolean(process.stdout.isTTY),
  };
  // ctx.shutdown() from an extension: the mode ends at its next idle point.
  const shutdown = new AbortController();
  let endNotice = () => {};
  try {
    let prompts: string[] = [];
    let mode: RegisteredMode | undefined;
    let ui: ExtensionUIContext | undefined;
    let flagValues: Record<string, boolean | string> = {};
    endNotice = slowOpenNotice();
    handle = await openSession(args, modeName, {
      onShutdownRequest: () => shutdown.abort(),
      // Flags, the mode and its UI are settled before session_start, so its handlers see them.
      beforeStart: async (session) => {
        endNotice();
        const flags = resolveExtensionFlags(args, session.registeredFlags());
        if (!flags.ok) throw new UsageError(flags);
        // A positional argument is a prompt unless an extension's string flag took it as its value.
        if (acp && flags.prompts.length > 0) {
          throw new UsageError({ error: "knightcode acp does not take prompts (the ACP client sends them)" });
        }
        session.setFlagValues(flags.values);
        flagValues = flags.values;
        if (args.name !== undefined) session.setSessionName(args.name.trim());
        prompts = flags.prompts;
        mode = session.getMode(modeName);
        if (!mode) {
          const known = session.listModes().map((m) => m.name);
          throw new UsageError({
            error: `unknown mode "${modeName}" (available: ${known.join(", ") || "none"})`,
          });
        }
        if (mode.ui) {
          ui = await mode.ui({ session, io, host: session.host });
          session.setUI(ui, true);
        }
      },
    });
    if (!mode) throw new Error("the session started without choosing a mode");
    const inputs = await buildPrompts(args, prompts, mode.readsStdin === true);
    return await mode.run({
      session: handle,
      ...(ui ? { ui } : {}),
      options: { ...(args.resume ? { resume: true } : {}) },
      prompts: inputs,
      io,
      signal: controller.signal,
      shutdown: shutdown.signal,
      agentDir: handle.agentDir,
      host: handle.host,
      // More sessions, with this command line's options (a mode serving several, such as acp).
      openSession: (options) => openModeSession(args, modeName, flagValues, options),
    });
  } catch (error) {
    endNotice();
    if (error instanceof UsageError) return usage(error.problem);
    const code = (error as { code?: string }).code;
    const { errorMessage } = await import("@knightcodeai/cli/kit");
    process.stderr.write(`knightcode: ${errorMessage(error)}\n`);
    return code === "KC_ERR_NO_MODEL" ? 2 : 1;
  } finally {
    endNotice();
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    if (handle) await disposeWithin(handle, SHUTDOWN_GRACE_MS);
    // The process exits right after this returns: what the mode wrote must be out first.
    await guard.flush();
    guard.restore();
    // A mode that stopped reading (RPC after a signal) must not keep the process alive on an open stdin.
    if (stdinOpened || stdinRead) process.stdin.destroy();
  }
}

/** How long a session may take to open before a terminal is told why it waits. */
const SLOW_OPEN_MS = 1_000;

/**
 * On a terminal (stderr), one line while the session is slow to open: the first start of a package compiles its
 * TypeScript, which takes seconds for a large one, and the screen would stay blank meanwhile. The returned function
 * erases the line (the mode's output then starts where it was) and cancels it if not yet shown. Anything else
 * written to stderr meanwhile (a warning, an extension's output) erases it first, so it starts on a clean line.
 * Nothing is written when stderr is not a terminal: scripts and protocol clients see no change.
 */
function slowOpenNotice(): () => void {
  if (!isatty(2)) return () => {};
  const stderr = process.stderr;
  const write = stderr.write;
  let shown = false;
  const erase = () => {
    if (!shown) return;
    shown = false;
    stderr.write = write;
    write.call(stderr, "\r\x1b[2K");
  };
  const timer = setTimeout(() => {
    const text = "Loading extensions… (the first start of a package compiles its TypeScript)";
    const width = stderr.columns || 80;
    write.call(stderr, text.length < width ? text : `${text.slice(0, width - 2)}…`);
    shown = true;
    stderr.write = function (this: typeof stderr, ...args: Parameters<typeof write>) {
      erase();
      return write.apply(this, args);
    } as typeof write;
  }, SLOW_OPEN_MS);
  timer.unref();
  return () => {
    clearTimeout(timer);
    erase();
  };
}

/** How long `session_shutdown` handlers get when the process ends before it exits anyway. */
const SHUTDOWN_GRACE_MS = 5_000;

/** Disposes the session (`session_shutdown` handlers run), but gives up waiting after `ms`. */
async function disposeWithin(handle: AgentSessionHandle, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), ms);
  });
  const disposed = handle.dispose().then(
    () => "done" as const,
    async (error: unknown) => {
      const { errorMessage } = await import("@knightcodeai/cli/kit");
      process.stderr.write(`knightcode: shutting the session down failed: ${errorMessage(error)}\n`);
      return "done" as const;
    },
  );
  const outcome = await Promise.race([disposed, late]);
  clearTimeout(timer);
  if (outcome === "late") {
    process.stderr.write(
      `knightcode: session_shutdown handlers did not finish within ${ms / 1000} s; exiting\n`,
    );
  }
}

/**
 * A session a mode opens besides the first (`ModeContext.openSession`): the command line's provider, model,
 * extensions and session folder, the flag values the first session resolved, in the folder the mode names.
 */
async function openModeSession(
  args: CliArgs,
  mode: string,
  flags: Record<string, boolean | string>,
  options: ModeSessionOptions,
): Promise<AgentSessionHandle> {
  const { createAgentSession } = await import("@knightcodeai/cli");
  const base = sessionOptions(args, mode);
  return createAgentSession({
    ...base,
    cwd: options.cwd,
    ...(options.model ? { model: options.model } : {}),
    ...(options.ui ? { ui: options.ui, hasUI: true } : {}),
    ...(options.warn ? { warn: options.warn } : {}),
    extensions: [...args.extensions, ...(options.extensions ?? [])],
    flags,
    session:
      options.inMemory || args.noSession
        ? { inMemory: true }
        : options.sessionFile
          ? { path: options.sessionFile }
          : { ...(args.sessionDir ? { sessionDir: args.sessionDir } : {}) },
  });
}

/** What `knightcode acp` cannot take: the client sends prompts and chooses sessions. */
function acpArgsProblem(args: CliArgs): string | undefined {
  const refused: [boolean, string][] = [
    [args.files.length > 0, "@file arguments (the ACP client sends the prompts)"],
    [args.print || args.mode !== undefined, "-p or --mode"],
    [
      args.resume ||
        args.continue ||
        args.session !== undefined ||
        args.fork !== undefined ||
        args.sessionId !== undefined,
      "--resume, --continue, --session, --fork or --session-id (the client loads sessions with session/load)",
    ],
    [args.maxTurns !== undefined, "--max-turns"],
  ];
  const found = refused.filter(([present]) => present).map(([, what]) => what);
  return found.length > 0 ? `knightcode acp does not take ${found.join(", ")}` : undefined;
}

/** pi's rules for --fork and --session-id: what they cannot be combined with, and a valid id. */
function sessionIdProblem(args: CliArgs): string | undefined {
  const given = (pairs: [unknown, string][]) => pairs.filter(([on]) => on).map(([, name]) => name);
  if (args.fork !== undefined) {
    const clash = given([
      [args.session !== undefined, "--session"],
      [args.continue, "--continue"],
      [args.resume, "--resume"],
      [args.noSession, "--no-session"],
    ]);
    if (clash.length > 0) return `--fork cannot be combined with ${clash.join(", ")}`;
  }
  if (args.sessionId !== undefined) {
    const clash = given([
      [args.session !== undefined, "--session"],
      [args.continue, "--continue"],
      [args.resume, "--resume"],
    ]);
    if (clash.length > 0) return `--session-id cannot be combined with ${clash.join(", ")}`;
    // pi's rule (the SDK checks it too): the id becomes part of the file name.
    if (!/^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/.test(args.sessionId)) {
      return `--session-id ${JSON.stringify(args.sessionId)} is invalid: use letters, digits, '.', '_' and '-', starting and ending with a letter or digit`;
    }
  }
  return undefined;
}

function sessionOptions(args: CliArgs, mode: string): CreateAgentSessionOptions {
  const idProblem = sessionIdProblem(args);
  if (idProblem) throw new UsageError({ error: idProblem });
  if ([args.session, args.continue || undefined, args.noSession || undefined].filter(Boolean).length > 1) {
    throw new UsageError({ error: "choose one of --session, --continue and --no-session" });
  }
  return {
    cwd: process.cwd(),
    mode: mode === "interactive" ? "tui" : mode,
    ...(args.provider ? { provider: args.provider } : {}),
    ...(args.model ? { model: args.model } : {}),
    ...(args.thinking ? { thinkingLevel: thinkingLevel(args.thinking) } : {}),
    ...(args.noTools ? { tools: [] } : args.tools ? { tools: args.tools } : {}),
    extensions: args.extensions,
    session: {
      // The acp mode's first session only hosts it: the client's sessions are opened by the mode.
      ...(args.noSession || mode === "acp" ? { inMemory: true } : {}),
      ...(args.continue ? { continue: true } : {}),
      ...(args.session ? { path: args.session } : {}),
      ...(args.sessionDir ? { sessionDir: args.sessionDir } : {}),
      ...(args.sessionId !== undefined ? { id: args.sessionId } : {}),
      ...(args.fork !== undefined ? { fork: args.fork } : {}),
    },
    ...(args.approve !== undefined ? { approve: args.approve } : {}),
    ...(args.maxTurns !== undefined ? { maxTurns: maxTurns(args.maxTurns, mode) } : {}),
    ...piOptions(args),
    flags: provisionalFlagValues(args),
    warn: (message) => process.stderr.write(`knightcode: ${message}\n`),
  };
}

async function openSession(
  args: CliArgs,
  mode: string,
  host: Pick<CreateAgentSessionOptions, "beforeStart" | "onShutdownRequest">,
): Promise<AgentSessionHandle> {
  const { createAgentSession } = await import("@knightcodeai/cli");
  const handle = await createAgentSession({ ...sessionOptions(args, mode), ...host });
  sessionOpened = true;
  return handle;
}

/** --help, --list-extensions and --list-models: extensions are loaded, no session file is opened. */
async function inspect(args: CliArgs): Promise<number> {
  const options = sessionOptions(args, "print");
  const { createAgentSession } = await import("@knightcodeai/cli");
  const endNotice = slowOpenNotice();
  const handle = await createAgentSession({
    ...options,
    provider: undefined,
    model: undefined,
    session: { inMemory: true },
    approve: args.approve ?? false,
  } as CreateAgentSessionOptions).finally(endNotice);
  try {
    if (args.help) {
      process.stdout.write(helpText(packageVersion(), handle.registeredFlags(), handle.listModes()));
      return 0;
    }
    if (args.listModels !== undefined) {
      const search = typeof args.listModels === "string" ? args.listModels.toLowerCase() : "";
      const usable = handle.getUsableModels();
      const models = usable.filter(
        ({ model: m }) => !search || `${m.provider}/${m.id} ${m.name ?? ""}`.toLowerCase().includes(search),
      );
      if (models.length === 0) {
        process.stderr.write(
          `knightcode: ${
            usable.length === 0
              ? `no model can be used. Set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY, store a key with /login (in ${handle.credentials.path}), or add a provider to ${handle.agentDir}/models.json`
              : `no usable model matches "${search}"`
          }\n`,
        );
        return 1;
      }
      process.stdout.write(modelTable(models));
      return 0;
    }
    // With -e, list only those extensions (the point is usually to check them); otherwise everything loaded.
    const extensions = handle.extensions();
    for (const info of extensions.loaded) {
      if (info.origin === "builtin" && args.extensions.length > 0) continue;
      process.stdout.write(`${info.id}\n`);
      for (const command of handle.getCommands().filter((c) => c.owner === info.id)) {
        process.stdout.write(`  /${command.name}${command.description ? `  ${command.description}` : ""}\n`);
      }
      for (const flag of handle.registeredFlags().filter((f) => f.owner === info.id)) {
        process.stdout.write(`  --${flag.name}${flag.description ? `  ${flag.description}` : ""}\n`);
      }
    }
    return extensions.failed.length > 0 ? 1 : 0;
  } finally {
    await handle.dispose();
  }
}

/**
 * pi's `--export <file> [output]`: opens the session file (its lock held for the moment), runs `/export` (the
 * html-export built-in, or an extension that replaces it) and prints the file written.
 */
async function exportSession(args: CliArgs, target: { file: string; output?: string }): Promise<number> {
  const file = resolve(target.file);
  if (!existsSync(file)) {
    process.stderr.write(`knightcode: --export: ${file} does not exist\n`);
    return 1;
  }
  const options = sessionOptions(args, "print");
  const { createAgentSession } = await import("@knightcodeai/cli");
  let handle: AgentSessionHandle | undefined;
  try {
    handle = await createAgentSession({
      ...options,
      session: { path: file },
      approve: args.approve ?? false,
    } as CreateAgentSessionOptions);
    const result = (await handle.runCommand("export", target.output ?? "")) as { path?: unknown } | undefined;
    if (typeof result?.path !== "string")
      throw new Error("the /export command did not report the file it wrote");
    process.stdout.write(`${result.path}\n`);
    return 0;
  } catch (error) {
    process.stderr.write(`knightcode: --export: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  } finally {
    await handle?.dispose();
  }
}

/** `--list-models`: one row per usable model, with why it can be used. */
function modelTable(models: ReturnType<AgentSessionHandle["getUsableModels"]>): string {
  const count = (n: number) =>
    n >= 1_000_000
      ? `${Number((n / 1_000_000).toFixed(2))}M`
      : n >= 1000
        ? `${Math.round(n / 1000)}k`
        : String(n);
  const rows = [
    ["provider", "model", "context", "max output", "thinking", "images", "usable through"],
    ...models.map(({ model: m, access, images }) => [
      m.provider,
      m.id,
      count(m.contextWindow),
      count(m.maxTokens),
      m.reasoning ? "yes" : "no",
      images ? "yes" : "no",
      access,
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows
    .map(
      (r) =>
        `${r
          .map((cell, i) => cell.padEnd(widths[i]!))
          .join("  ")
          .trimEnd()}\n`,
    )
    .join("");
}

/** `@file` contents go into the first prompt, and piped stdin is put before it (not for modes that read stdin themselves). */
async function buildPrompts(args: CliArgs, prompts: string[], readsStdin: boolean): Promise<string[]> {
  const parts: string[] = [];
  if (readsStdin && !isatty(0)) {
    const piped = await readStdin();
    if (piped.trim()) parts.push(piped.trimEnd());
  }
  for (const file of args.files) {
    const path = resolve(file);
    let content: string;
    try {
      content = readFileSync(path, "utf8");
    } catch (error) {
      throw new UsageError({ error: `cannot read @${file}: ${(error as Error).message}` });
    }
    parts.push(`<file name="${file}">\n${content}\n</file>`);
  }
  if (parts.length === 0) return prompts;
  const [first, ...rest] = prompts;
  return [[...parts, ...(first !== undefined ? [first] : [])].join("\n\n"), ...rest];
}

/** Whether readStdin() made the stdin stream (so the run's end closes it). */
let stdinRead = false;

/**
 * Piped or redirected input. A file or a device (`< file`, `/dev/null`, which a spawned process often gets) is read
 * at once; a pipe or socket through the stream, as its writer sends it. No stdin at all is no input.
 */
async function readStdin(): Promise<string> {
  let stat: ReturnType<typeof fstatSync>;
  try {
    stat = fstatSync(0);
  } catch {
    return "";
  }
  if (stat.isFile() || stat.isCharacterDevice()) return readFileSync(0, "utf8");
  stdinRead = true;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** `--max-turns N`: a positive integer, for the modes that run prompts on their own (print, JSON). */
function maxTurns(value: string, mode: string): number {
  if (mode !== "print" && mode !== "json") {
    throw new UsageError({ error: `--max-turns applies to print and JSON runs, not to the ${mode} mode` });
  }
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1) {
    throw new UsageError({ error: `--max-turns needs a positive whole number of turns, not "${value}"` });
  }
  return n;
}

/** pi's options: what to leave out, the system prompt, the model scope, the theme. */
function piOptions(args: CliArgs): Partial<CreateAgentSessionOptions> {
  const w = args.without;
  const withoutBuiltins = [
    ...(w.themes ? ["themes"] : []),
    ...(w.skills ? ["skills"] : []),
    ...(w.promptTemplates ? ["prompt-templates"] : []),
    ...(w.mcp ? ["mcp"] : []),
  ];
  if (args.tuiMode !== undefined && args.tuiMode !== "regular" && args.tuiMode !== "fullscreen") {
    throw new UsageError({ error: `--tui-mode must be regular or fullscreen, not "${args.tuiMode}"` });
  }
  if (args.name !== undefined && args.name.trim() === "")
    throw new UsageError({ error: "--name needs a name" });
  const resourcePaths = givenResources(args);
  const keyFor =
    args.provider ?? (args.model?.includes("/") ? args.model.slice(0, args.model.indexOf("/")) : undefined);
  if (args.apiKey !== undefined && keyFor === undefined) {
    throw new UsageError({
      error: "--api-key needs the provider it is for: add --provider, or --model provider/id",
    });
  }
  return {
    ...(args.excludeTools ? { excludeTools: args.excludeTools } : {}),
    ...(args.noBuiltinTools ? { withoutCoreTools: true } : {}),
    ...(args.apiKey !== undefined && keyFor !== undefined ? { apiKeys: { [keyFor]: args.apiKey } } : {}),
    ...(withoutBuiltins.length > 0 ? { withoutBuiltins } : {}),
    ...(w.extensions ? { discoverExtensions: false } : {}),
    ...(w.contextFiles ? { contextFiles: false } : {}),
    ...(args.offline ? { offline: true } : {}),
    ...(args.systemPrompt !== undefined ? { systemPrompt: args.systemPrompt } : {}),
    ...(args.appendSystemPrompt.length > 0 ? { appendSystemPrompt: args.appendSystemPrompt } : {}),
    ...(args.models ? { scopedModels: args.models } : {}),
    ...(args.useTheme !== undefined ? { settings: { theme: args.useTheme } } : {}),
    ...(Object.values(resourcePaths).some((paths) => paths.length > 0) ? { resourcePaths } : {}),
  };
}

/**
 * `--skill`, `--prompt-template` and `--theme` paths, resolved; each must exist, and the built-in that loads it must
 * not be left out by the matching `--no-...` switch.
 */
function givenResources(args: CliArgs): {
  skillPaths: string[];
  promptPaths: string[];
  themePaths: string[];
} {
  const w = args.without;
  const given = args.resources;
  for (const [option, paths, left] of [
    ["--skill", given.skills, w.skills ? "--no-skills" : undefined],
    ["--prompt-template", given.prompts, w.promptTemplates ? "--no-prompt-templates" : undefined],
    ["--theme", given.themes, w.themes ? "--no-themes" : undefined],
  ] as const) {
    if (paths.length === 0) continue;
    if (left) {
      throw new UsageError({
        error: `${left} leaves out the built-in that loads ${option} paths; give one of the two, not both`,
      });
    }
    const missing = paths.find((path) => !existsSync(resolve(path)));
    if (missing !== undefined)
      throw new UsageError({ error: `${option} ${missing}: no such file or folder` });
  }
  return {
    skillPaths: given.skills.map((p) => resolve(p)),
    promptPaths: given.prompts.map((p) => resolve(p)),
    themePaths: given.themes.map((p) => resolve(p)),
  };
}

function thinkingLevel(value: string): NonNullable<CreateAgentSessionOptions["thinkingLevel"]> {
  // pi's `max`: the model's highest level (see CreateAgentSessionOptions.thinkingLevel).
  const levels = ["off", "minimal", "low", "medium", "high", "xhigh", "max"] as const;
  const level = levels.find((l) => l === value);
  if (!level) throw new UsageError({ error: `--thinking must be one of ${levels.join(", ")}` });
  return level;
}

/** Prints a usage error (with the closest known option when one was misspelt) and returns exit code 2. */
async function usage(problem: UsageProblem): Promise<number> {
  let message = problem.error;
  if (problem.misspelt) {
    const { closestName } = await import("@knightcodeai/cli/plugin");
    const near = closestName(problem.misspelt.name, problem.misspelt.known);
    if (near) message += ` (did you mean ${near}?)`;
  }
  process.stderr.write(`knightcode: ${message}\nRun knightcode --help for usage.\n`);
  return 2;
}
