import type { RegisteredFlag, RegisteredMode } from "@knightcodeai/cli";

const OPTIONS: [string, string][] = [
  ["--mode <name>", "How to run: print, json, or a mode an extension adds"],
  ["-p, --print", "Print mode: run the prompts and print the final answer"],
  ["-e, --extension <path>", "Load an extension file or folder (repeatable)"],
  ["--provider <name>", "Model provider"],
  ["--model <id>", "Model id, or provider/model"],
  ["--thinking <level>", "off, minimal, low, medium, high or xhigh"],
  ["--tools <a,b,...>", "Exactly these active tools"],
  ["--no-tools", "No active tools"],
  ["--session <path|id>", "Open a session file, or a session id (or unique prefix)"],
  ["-c, --continue", "Continue the most recent session of this folder"],
  ["--no-session", "Keep the session in memory only"],
  ["--session-dir <dir>", "Where session files go"],
  ["--approve, --no-approve", "Trust, or do not trust, this project's own resources"],
  ["--list-models [search]", "List available models"],
  ["--list-extensions", "List loaded extensions and the flags they add"],
  ["--version", "Print the version"],
  ["-h, --help", "Show this help"],
];

export function helpText(
  version: string,
  flags: readonly RegisteredFlag[],
  modes: readonly RegisteredMode[],
): string {
  const rows = (list: [string, string][]) => {
    const width = Math.max(...list.map(([left]) => left.length)) + 2;
    return list.map(([left, right]) => `  ${left.padEnd(width)}${right}`).join("\n");
  };
  const sections = [
    `knightcode ${version}: an extensible AI coding agent for the terminal`,
    "Usage:\n  knightcode [options] [@file ...] [prompt ...]",
    `Options:\n${rows(OPTIONS)}`,
  ];
  if (modes.length > 0) {
    sections.push(`Modes:\n${rows(modes.map((m) => [m.name, `${m.description ?? ""} (${m.owner})`]))}`);
  }
  if (flags.length > 0) {
    sections.push(
      `Extension flags:\n${rows(
        flags.map((f) => [
          `--${f.name}${f.type === "string" ? " <value>" : ""}`,
          `${f.description ?? ""} (${f.owner})`,
        ]),
      )}`,
    );
  }
  sections.push(
    "Environment:\n  KNIGHTCODE_AGENT_DIR     Agent directory (default ~/.knightcode/agent)\n" +
      "  ANTHROPIC_API_KEY, OPENAI_API_KEY   Keys of the built-in providers",
  );
  sections.push(
    'Offline quick start:\n  knightcode --provider scripted --script examples/scripts/hello.json -p "Say hello"',
  );
  return `${sections.join("\n\n")}\n`;
}
