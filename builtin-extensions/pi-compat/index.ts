/**
 * builtin:pi-compat — extensions written for pi load unchanged: while this built-in is enabled, an extension file
 * may import `@mariozechner/pi-coding-agent`, `@earendil-works/pi-ai`, `typebox` and pi's other package names, and
 * gets KnightCode's modules under them (hosts/sdk/pi-compat/modules.ts builds the map; module resolution happens
 * before any factory runs, so the map lives with the loader and this factory has nothing to register). Turn it off
 * with `"extensions": ["-builtin:pi-compat"]` in settings.json: those imports then fail to resolve.
 */
import type { ExtensionAPI } from "@knightcodeai/cli/kit";

export default function piCompat(_knightcode: ExtensionAPI): void {}
