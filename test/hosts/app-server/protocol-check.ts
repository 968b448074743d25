/**
 * The protocol check every app-server test's client runs: each result against its method's result schema, each
 * notification and server request against its params schema (protocol.ts). A result that does not match rejects the
 * request; a notification that does not match is kept in `client.problems`, which the harness asserts empty.
 */
import type { TSchema } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import {
  notificationSpecs,
  requestSpecs,
  serverRequestSpecs,
} from "../../../builtin-extensions/mode-app-server/protocol.js";
import type { AppServerMessageCheck } from "../../../hosts/sdk/app-server-client.js";

function checkers(specs: Record<string, TSchema>): Map<string, TypeCheck<TSchema>> {
  return new Map(Object.entries(specs).map(([name, schema]) => [name, TypeCompiler.Compile(schema)]));
}

function problem(check: TypeCheck<TSchema> | undefined, value: unknown): string | undefined {
  if (!check || check.Check(value)) return undefined;
  const first = check.Errors(value).First();
  return `${first?.path || "/"}: ${first?.message ?? "does not match"} (${JSON.stringify(first?.value)?.slice(0, 200)})`;
}

const results = checkers(Object.fromEntries(Object.entries(requestSpecs).map(([n, s]) => [n, s.result])));
const notifications = checkers(
  Object.fromEntries(Object.entries(notificationSpecs).map(([n, s]) => [n, s.params])),
);
const serverRequests = checkers(
  Object.fromEntries(Object.entries(serverRequestSpecs).map(([n, s]) => [n, s.params])),
);

/** Methods other extensions add (a test's `demo/echo`) are not in the table and are not checked. */
export const protocolCheck: AppServerMessageCheck = {
  result: (method, result) => problem(results.get(method), result),
  notification: (method, params) =>
    notifications.has(method)
      ? problem(notifications.get(method), params)
      : "not a notification of the protocol",
  serverRequest: (method, params) =>
    serverRequests.has(method)
      ? problem(serverRequests.get(method), params)
      : "not a server request of the protocol",
};
