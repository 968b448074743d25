#!/usr/bin/env node
/**
 * The `knightcode` command. For now it loads extensions into a session and reports what they registered; the
 * agent loop and the modes (print, json, rpc, interactive) are built on this as the next issues land.
 * `--version` and `--help` load nothing.
 */
import { VERSION } from "@knightcodeai/cli";
import {
  type CommandRegistry,
  coreTokens,
  createKernel,
  defaultPlugins,
  extensionCacheDir,
  type FlagRegistry,
  packageVirtualModules,
  resolveAgentDir,
} from "@knightcodeai/cli/plugin";
import { parseArgs } from "./args.js";

const HELP = `knightcode ${VERSION}: an extensible AI coding agent for the terminal

Usage:
  knightcode [options]

Options:
  -e, --extension <path>   Load an extension file or directory (repeatable)
  --list-extensions        Load the extensions, list them with what they registered, and exit
  --version                Print the version and exit
  -h, --help               Show this help and exit

Environment:
  KNIGHTCODE_AGENT_DIR     Agent directory (default ~/.knightcode/agent)
`;

async function main(argv: string[]): Promise<number> {
  const parsed = parseArgs(argv);
  if (!parsed.ok) {
    process.stderr.write(`knightcode: ${parsed.error}\nRun knightcode --help for usage.\n`);
    return 2;
  }
  const args = parsed.args;
  if (args.version) {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (args.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (!args.listExtensions) {
    process.stderr.write(
      "knightcode: running prompts needs the agent runtime, which is not built yet. " +
        "Use --list-extensions to load and check extensions.\n",
    );
    return 2;
  }

  const agentDir = resolveAgentDir();
  const kernel = createKernel({
    plugins: defaultPlugins(),
    cacheDir: extensionCacheDir(agentDir),
    virtualModules: await packageVirtualModules(),
  });
  let failed = 0;
  const { runtime } = await kernel.createSession({
    sources: args.extensions.map((path) => ({ origin: "cli" as const, path })),
    cwd: process.cwd(),
    mode: "print",
    onExtensionError: (report) => {
      failed++;
      process.stderr.write(`knightcode: ${report.message}\n`);
    },
  });
  const commands = runtime.scope.resolve(coreTokens.commands) as unknown as CommandRegistry;
  const flags = runtime.scope.resolve(coreTokens.flags) as unknown as FlagRegistry;
  for (const info of runtime.extensionInfos) {
    process.stdout.write(`${info.id}\n`);
    for (const command of commands.getCommands().filter((c) => c.owner === info.id)) {
      process.stdout.write(`  /${command.name}${command.description ? `  ${command.description}` : ""}\n`);
    }
    for (const flag of flags.list().filter((f) => f.owner === info.id)) {
      process.stdout.write(`  --${flag.name}${flag.description ? `  ${flag.description}` : ""}\n`);
    }
  }
  await runtime.shutdown();
  await kernel.dispose();
  return failed > 0 ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(
      `knightcode: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
