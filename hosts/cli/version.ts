import { readFileSync } from "node:fs";

/**
 * The version in this package's package.json, read directly so `--version` and `--help` load no other module.
 * The file is two folders up from the source (hosts/cli) and from a bundle chunk (dist/chunks), three from an
 * entry of the bundle (dist/hosts/cli).
 */
export function packageVersion(): string {
  for (const candidate of ["../../package.json", "../../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(candidate, import.meta.url), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === "@knightcodeai/cli" && pkg.version) return pkg.version;
    } catch {
      // the next place
    }
  }
  return "unknown";
}
