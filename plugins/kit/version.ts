import { readFileSync } from "node:fs";

/** The package version, read from package.json next to the source or the build output. */
export const VERSION: string = readVersion();

function readVersion(): string {
  for (const candidate of ["../../package.json", "../../../package.json"]) {
    try {
      const parsed = JSON.parse(readFileSync(new URL(candidate, import.meta.url), "utf8")) as {
        name?: string;
        version?: string;
      };
      if (parsed.name === "@knightcodeai/cli" && parsed.version) return parsed.version;
    } catch {
      // try the next location
    }
  }
  return "0.0.0";
}
