/** Command-line parsing. Unknown options are errors that suggest the closest known one. */

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
          const near = closest(arg, OPTIONS);
          return { ok: false, error: `unknown option ${arg}${near ? ` (did you mean ${near}?)` : ""}` };
        }
        args.rest.push(arg);
    }
  }
  return { ok: true, args };
}

function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const score = distance(word, candidate);
    if (score < bestScore) {
      bestScore = score;
      best = candidate;
    }
  }
  return bestScore <= Math.max(2, Math.floor(word.length / 3)) ? best : undefined;
}

function distance(a: string, b: string): number {
  const dp = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = dp[0]!;
    dp[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = dp[j]!;
      dp[j] = Math.min(above + 1, dp[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return dp[b.length]!;
}
