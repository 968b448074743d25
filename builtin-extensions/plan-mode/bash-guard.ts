/**
 * Which shell commands `bash` may run while planning: commands that only read, from a fixed list, joined by pipes
 * and `&&`/`||`/`;`. Anything else is refused with the reason. It guards against accidental changes while the agent
 * investigates; it is not a sandbox (docs/plan-mode.md): the permission gate and the person's review are the
 * safety nets for the rest.
 */

/** Commands that only read, whatever their arguments (besides the ones `REFUSED_ARGS` lists). */
const READERS = new Set([
  "cat",
  "head",
  "tail",
  "ls",
  "pwd",
  "tree",
  "wc",
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "find",
  "fd",
  "file",
  "stat",
  "du",
  "df",
  "which",
  "echo",
  "printf",
  "sort",
  "uniq",
  "cut",
  "tr",
  "diff",
  "cmp",
  "basename",
  "dirname",
  "realpath",
  "readlink",
  "date",
  "uname",
  "whoami",
  "nl",
  "column",
  "jq",
  "true",
  "git",
]);

/** Arguments that make a reader write or run something. */
const REFUSED_ARGS: Record<string, RegExp> = {
  find: /^-(exec|execdir|ok|okdir|delete|fprint|fprint0|fprintf|fls)$/,
  fd: /^(-x|-X|--exec|--exec-batch)$/,
  rg: /^--pre(=|$)/,
  sort: /^(-o|--output(=|$))/,
  tree: /^-o$/,
  git: /^(--output(=|$)|-c$|--exec-path|--ext-diff$)/,
};

/** Git commands that only read. */
const GIT_READERS = new Set([
  "status",
  "log",
  "diff",
  "show",
  "blame",
  "ls-files",
  "ls-tree",
  "rev-parse",
  "grep",
  "shortlog",
  "describe",
  "cat-file",
]);

/** `git branch` only lists with these. */
const GIT_BRANCH_LISTING =
  /^(-a|-r|-v|-vv|--all|--list|--remotes|--show-current|--verbose|--no-color|--color)$/;

/** Why `command` may not run while planning, or undefined when it only reads. */
export function refuseCommand(command: string): string | undefined {
  // Discarding error output is reading too; any other redirection may write a file.
  const text = command.replace(/\s[12]?>\s*\/dev\/null\b/g, " ").replace(/\s2>&1\b/g, " ");
  if (/[<>]/.test(text)) return "redirections (< and >) are not allowed while planning";
  if (/`|\$\(|\$\{/.test(text))
    return (
      "command substitution and parameter expansion ($(...), `...`, $" +
      "{...}) are not allowed while planning"
    );
  if (/(^|[^&])&([^&]|$)/.test(text)) return "background jobs (&) are not allowed while planning";
  const segments = text.split(/&&|\|\||[;|\n]/);
  for (const segment of segments) {
    const words = segment.trim().split(/\s+/).filter(Boolean);
    if (words.length === 0) continue;
    const reason = refuseWords(words);
    if (reason) return reason;
  }
  return undefined;
}

function refuseWords(words: string[]): string | undefined {
  const [name, ...args] = words as [string, ...string[]];
  if (/^\w+=/.test(name)) return "setting environment variables is not allowed while planning";
  if (!READERS.has(name)) return `"${name}" is not one of the read-only commands allowed while planning`;
  const refused = REFUSED_ARGS[name];
  const bad = refused ? args.map(unquote).find((a) => refused.test(a)) : undefined;
  if (bad) return `"${name} ${bad}" can change things and is not allowed while planning`;
  if (name !== "git") return undefined;
  const sub = args[0];
  if (sub === "branch") {
    const other = args.slice(1).find((a) => !GIT_BRANCH_LISTING.test(a));
    return other === undefined
      ? undefined
      : `"git branch ${other}" can change branches; only listing is allowed`;
  }
  if (sub === undefined || !GIT_READERS.has(sub)) {
    return `"git ${sub ?? ""}" is not one of the read-only git commands allowed while planning (${[...GIT_READERS].join(", ")}, branch)`;
  }
  return undefined;
}

function unquote(word: string): string {
  return word.replace(/^['"]|['"]$/g, "");
}
