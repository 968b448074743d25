import type { ExtensionAPI } from "@knightcodeai/cli/kit";
export default function codemode(_knightcode: ExtensionAPI): void {}
