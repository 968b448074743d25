/**
 * The references of the services KnightCode's built-ins provide one another (`knightcode.services`), with their
 * types. A replacement of a built-in provides the same reference, so everything that uses it follows.
 */
export * from "./app-server.js";
export * from "./git.js";
export * from "./mcp.js";
export * from "./permission-gate.js";
export * from "./plan-mode.js";
export * from "./tool-operations.js";
