/**
 * @knightcodeai/cli/tui: terminal UI building blocks for extensions (components, key parsing, column widths,
 * themes). They render to lines and take key strings, so they work outside a terminal too; see docs/tui.md.
 * Nothing loads this entry unless an extension or the interactive mode imports it.
 */
export * from "./plugins/kit/tui/index.js";
