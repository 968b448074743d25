/** An image and a stand-in for `xclip`, for the tests of image paste. */
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** A 1×1 PNG. */
export const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

/** Writes an `xclip` that offers `image/png` with the bytes of `pngFile` (or nothing, without it). */
export function fakeXclip(binDir: string, pngFile?: string): void {
  mkdirSync(binDir, { recursive: true });
  const script = pngFile
    ? `#!/bin/sh
case "$*" in
  *TARGETS*) printf 'TARGETS\\ntext/plain\\nimage/png\\n' ;;
  *image/png*) cat '${pngFile}' ;;
  *) exit 1 ;;
esac
`
    : "#!/bin/sh\nexit 1\n";
  writeFileSync(join(binDir, "xclip"), script);
  chmodSync(join(binDir, "xclip"), 0o755);
}
