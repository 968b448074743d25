import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** A temp dir per test, removed afterwards. `write` creates parent folders. */
export function useTempDir(prefix = "kc-test-"): {
  readonly path: string;
  write(rel: string, text: string): string;
} {
  let dir = "";
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), prefix));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get path() {
      return dir;
    },
    write(rel: string, text: string) {
      const file = join(dir, rel);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
      return file;
    },
  };
}
