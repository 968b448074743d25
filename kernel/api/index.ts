export type * from "./context.js";
export type { ErrorCode } from "./error-codes.js";
export type * from "./events.js";
export type * from "./extension-api.js";
export type * from "./messages.js";
export type * from "./modes.js";
export type * from "./services.js";
export type * from "./session.js";
export type * from "./tools.js";
