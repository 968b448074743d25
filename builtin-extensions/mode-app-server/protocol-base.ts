/** The short names protocol.ts and protocol-git.ts write their TypeBox schemas with, and the schemas both use. */
import { Type } from "@sinclair/typebox";

export const Opt = Type.Optional;
export const Str = Type.String;
export const Num = Type.Number;
export const Bool = Type.Boolean;
export const Lit = Type.Literal;
export const Obj = Type.Object;
export const Arr = Type.Array;
export const Any = Type.Unknown;

export const ThreadId = Str({ minLength: 1, description: "The session id of the thread" });
