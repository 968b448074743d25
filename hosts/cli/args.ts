/** Command-line parsing. Unknown options are errors that suggest the closest known one. */
import { closestName } from "@knightcodeai/cli/plugin";

export interface CliArgs {
  extensions: string[];
  listExtensions: boolean;
  version: boolean;
  help: boolean;
  rest: string[];
}

const OPTIONS = ["--extension", "--list-extensions", "--version", "--help"];

export function parseArgs(
  argv: readonly string[],
): { ok: true; args: CliArgs } | { ok: false; error: string } {
  const args: CliArgs = { extensions: [], listExtensions: false, version: false, help: false, rest: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    switch (arg) {
      case "-e":
      case "--extension": {
        const value = argv[++i];
        if (value === undefined) return { ok: false, error: `${arg} needs a path` };
        args.extensions.push(value);
        break;
      }
      case "--list-extensions":
        args.listExtensions = true;
        break;
      case "--version":
        args.version = true;
        break;
      case "-h":
      case "--help":
        args.help = true;
        break;
      default:
        if (arg.startsWith("-")) {
          const near = closestName(arg, OPTIONS);
          return { ok: false, error: `unknown option ${arg}${near ? ` (did you mean ${near}?)` : ""}` };
        }
        args.rest.push(arg);
    }
  }
  return { ok: true, args };
}
