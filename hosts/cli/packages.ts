/**
 * The package subcommands: `knightcode install|remove|uninstall|list|update|config`. They are thin: the package
 * manager (`PackageManager` from @knightcodeai/cli/plugin) does the work, so the app-server can serve the same
 * lists. A failure prints one message (a failed npm or git command with its stderr) and exits 1; a usage error
 * exits 2.
 */
import type { ResolvedResource } from "@knightcodeai/cli/plugin";

export const PACKAGE_COMMANDS = new Set(["install", "remove", "uninstall", "list", "update", "config"]);

interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

export async function packagesCommand(
  argv: readonly string[],
  io: Io = { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin },
): Promise<number> {
  const [command, ...rest] = argv;
  const local = rest.includes("-l") || rest.includes("--local");
  const trustFlag = (yes: boolean) =>
    rest.includes(yes ? "--trust-project" : "--no-trust-project") ||
    rest.includes(yes ? "--approve" : "--no-approve");
  const approve = trustFlag(true) ? true : trustFlag(false) ? false : undefined;
  const positional = rest.filter((a) => !a.startsWith("-"));
  const unknown = rest.find(
    (a) =>
      a.startsWith("-") &&
      !["-l", "--local", "--trust-project", "--no-trust-project", "--approve", "--no-approve"].includes(a),
  );
  const usage = (message: string) => {
    io.stderr.write(`knightcode ${command}: ${message}\nRun knightcode --help for usage.\n`);
    return 2;
  };
  if (unknown) return usage(`unknown option ${unknown}`);
  const { PackageManager, knownProjectTrust, resolveAgentDir } = await import("@knightcodeai/cli/plugin");
  const agentDir = resolveAgentDir();
  const cwd = process.cwd();
  const manager = new PackageManager({ agentDir, cwd });
  const scope = local ? "project" : "user";
  const say = (line: string) => io.stdout.write(`${line}\n`);
  try {
    switch (command) {
      case "install": {
        if (positional.length !== 1) return usage("give one package source");
        const pkg = await manager.install(positional[0]!, scope);
        say(`Installed ${pkg.source.raw} (${pkg.root}) in ${manager.settingsPath(scope)}`);
        if (pkg.offersNothing) {
          say(
            `Nothing was found to load in ${pkg.source.raw}: its package.json has no "knightcode" (or "pi") manifest ` +
              "listing resources, and it has no extensions/, skills/, prompts/ or themes/ folder. It stays " +
              `installed and loads nothing (knightcode remove ${pkg.source.raw} takes it away).`,
          );
        } else {
          const found = Object.entries(pkg.offered)
            .filter(([, n]) => n > 0)
            .map(([kind, n]) => `${n} ${n === 1 ? kind.replace(/s$/, "") : kind}`);
          say(`It adds ${found.join(", ")}; they load in the next session (or /reload).`);
        }
        if (
          scope === "project" &&
          !knownProjectTrust({ agentDir, cwd, ...(approve !== undefined ? { approve } : {}) })
        ) {
          say("This project is not trusted yet: its packages load once you trust it.");
        }
        return 0;
      }
      case "remove":
      case "uninstall": {
        if (positional.length !== 1) return usage("give one package source");
        const pkg = await manager.remove(positional[0]!, scope);
        say(`Removed ${pkg.source.raw} from ${manager.settingsPath(scope)}`);
        return 0;
      }
      case "list": {
        if (positional.length > 0) return usage("takes no arguments");
        const trusted = knownProjectTrust({ agentDir, cwd, ...(approve !== undefined ? { approve } : {}) });
        for (const which of ["user", "project"] as const) {
          const warnings: string[] = [];
          const packages = manager.configured(which, warnings);
          for (const warning of warnings) io.stderr.write(`knightcode: ${warning}\n`);
          const note =
            which === "project" && packages.length > 0 && !trusted
              ? " (project not trusted: not loaded)"
              : "";
          say(`${which === "user" ? "User" : "Project"} packages (${manager.settingsPath(which)})${note}:`);
          if (packages.length === 0) say("  (none)");
          for (const pkg of packages) {
            const state = pkg.installed ? pkg.root : "not installed";
            say(`  ${pkg.source.raw}${pkg.source.pinned ? "  (pinned)" : ""}  ${state}`);
          }
        }
        return 0;
      }
      case "update": {
        if (positional.length > 1) return usage("give at most one package source");
        const projectTrusted = knownProjectTrust({
          agentDir,
          cwd,
          ...(approve !== undefined ? { approve } : {}),
        });
        const { updated, skipped } = await manager.update(positional[0], { projectTrusted });
        for (const pkg of updated) say(`Updated ${pkg.source.raw}`);
        for (const { pkg, why } of skipped) say(`Skipped ${pkg.source.raw}: ${why}`);
        if (updated.length === 0 && skipped.length === 0) say("No packages to update.");
        return 0;
      }
      case "config":
        return await config(
          manager,
          positional,
          trustedFor(agentDir, cwd, approve, knownProjectTrust),
          io,
          usage,
        );
      default:
        return usage("unknown command");
    }
  } catch (error) {
    io.stderr.write(`knightcode ${command}: ${(error as Error).message}\n`);
    return 1;
  }
}

function trustedFor(
  agentDir: string,
  cwd: string,
  approve: boolean | undefined,
  known: (o: { agentDir: string; cwd: string; approve?: boolean }) => boolean,
): boolean {
  return known({ agentDir, cwd, ...(approve !== undefined ? { approve } : {}) });
}

type Manager = InstanceType<typeof import("@knightcodeai/cli/plugin").PackageManager>;

/**
 * `config`: lists every resource with its state. `config enable|disable <path>` sets one; in a terminal with no
 * arguments it asks for numbers to toggle. Outside a terminal it only prints (plain lines, no colour).
 */
async function config(
  manager: Manager,
  positional: string[],
  projectTrusted: boolean,
  io: Io,
  usage: (message: string) => number,
): Promise<number> {
  const load = async () => {
    const resolved = await manager.resolve({ scopes: ["user", "project"], projectTrusted });
    for (const warning of resolved.warnings) io.stderr.write(`knightcode: ${warning}\n`);
    return resolved.resources;
  };
  let resources = await load();
  const [action, target] = positional;
  if (action !== undefined) {
    if ((action !== "enable" && action !== "disable") || target === undefined || positional.length !== 2) {
      return usage("use config, or config enable|disable <path>");
    }
    const { resolve } = await import("node:path");
    const wanted = resolve(target);
    const resource = resources.find((r) => r.path === wanted || r.path === target);
    if (!resource) {
      io.stderr.write(`knightcode config: no resource at ${target}; run knightcode config to see the list\n`);
      return 1;
    }
    manager.setEnabled(resource, action === "enable");
    io.stdout.write(`${action === "enable" ? "Enabled" : "Disabled"} ${resource.type} ${resource.path}\n`);
    return 0;
  }
  const print = () => {
    for (const [i, r] of resources.entries()) {
      io.stdout.write(`${line(r, io.stdout.isTTY ? i + 1 : undefined)}\n`);
    }
    if (resources.length === 0) io.stdout.write("No extensions, skills, prompt templates or themes found.\n");
  };
  print();
  if (!io.stdout.isTTY || !io.stdin.isTTY || resources.length === 0) return 0;
  // Loaded here: every run of the command imports this file, and only this prompt needs readline.
  const { createInterface } = await import("node:readline/promises");
  const rl = createInterface({ input: io.stdin, output: io.stdout });
  try {
    for (;;) {
      const answer = (await rl.question("Number to toggle (Enter to finish): ")).trim();
      if (answer === "") return 0;
      const resource = resources[Number(answer) - 1];
      if (!/^\d+$/.test(answer) || !resource) {
        io.stdout.write(`No resource number ${answer}.\n`);
        continue;
      }
      manager.setEnabled(resource, !resource.enabled);
      resources = await load();
      print();
    }
  } finally {
    rl.close();
  }
}

function line(r: ResolvedResource, number: number | undefined): string {
  const from = r.origin === "package" ? `package ${r.source}` : r.source === "auto" ? "folder" : "settings";
  const prefix = number === undefined ? "" : `${String(number).padStart(3)} `;
  return `${prefix}[${r.enabled ? "x" : " "}] ${r.type.padEnd(10)} ${r.name}  ${r.path}  (${r.scope}, ${from})`;
}
