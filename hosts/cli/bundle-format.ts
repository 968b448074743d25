/**
 * How a CLI bundle file (`dist/chunks/knightcode-cli-<hash>.cjs`, `knightcode-side-<name>-<hash>.cjs`) holds its
 * code: the build writes it already wrapped as the function expression the loader compiles, so a run hands the
 * file's text to V8 as read instead of building a second copy of a megabyte of source around it. The text is ASCII
 * (the build's `charset: "ascii"`), so the loader decodes it as Latin-1, byte for byte, without UTF-8 validation.
 */

/** The parameters the loader passes the bundle (bundle-loader.ts). */
const PARAMETERS = "exports, require, module, __filename, __dirname, __kcImport, __kcSide";

/** The file text for a bundle's CommonJS code. */
export function wrapBundle(code: string): string {
  return `(function (${PARAMETERS}) {"use strict";${code}\n})`;
}
