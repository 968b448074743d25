/**
 * The protocol as files for client authors: `app-server.schema.json` (JSON Schema of every request's params and
 * result, every notification and every server request) and `app-server.ts` (the same as TypeScript types). The
 * repository keeps both under `schema/app-server/`; a test regenerates them and fails on any difference, and
 * `knightcode app-server schema --out DIR` writes them anywhere.
 *
 * The JSON Schema is one schema a generic generator can take whole (json-schema-to-typescript, quicktype, ...):
 * its root is the union of every message (`Request`, `Response`, `ErrorResponse`, `Notification`, `ServerRequest`,
 * `ServerRequestResponse`), each message a definition of its own (`ThreadStartRequest`, `ThreadStartResponse`,
 * `TurnCompletedNotification`, `UiDialogRequest`, ...) over the params and result definitions
 * (`ThreadStartParams`, `ThreadStartResult`, ...), with the error names of `error.data.code` as the `ErrorCode`
 * enum. The `requests`, `notifications` and `serverRequests` tables point at the same definitions.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { TSchema } from "@sinclair/typebox";
import { ERROR_CODES } from "./errors.js";
import { notificationSpecs, requestSpecs, serverRequestSpecs, sharedSchemas } from "./protocol.js";

type Json = Record<string, unknown>;

const shared = new Map<unknown, string>(sharedSchemas.map((s) => [s, (s as Json).$id as string]));

/** JSON Schema without TypeBox's symbols, shared schemas as `$ref`s into `definitions`. */
function toJson(schema: unknown, top = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => toJson(s));
  if (typeof schema !== "object" || schema === null) return schema;
  const name = shared.get(schema);
  if (name && !top) return { $ref: `#/definitions/${name}` };
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "$id") continue;
    out[key] = toJson(value);
  }
  return out;
}

function tsType(schema: Json, indent: string, top = false): string {
  const name = shared.get(schema);
  if (name && !top) return name;
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Json[]).map((s) => tsType(s, indent)).join(" | ");
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).map((v) => JSON.stringify(v)).join(" | ");
  switch (schema.type) {
    case "string":
      return "string";
    case "number":
    case "integer":
      return "number";
    case "boolean":
      return "boolean";
    case "null":
      return "null";
    case "array": {
      const item = tsType(schema.items as Json, indent);
      return /[|&]/.test(item) ? `(${item})[]` : `${item}[]`;
    }
    case "object": {
      const props = (schema.properties ?? {}) as Record<string, Json>;
      const required = new Set((schema.required ?? []) as string[]);
      const keys = Object.keys(props);
      if (keys.length === 0) {
        return schema.patternProperties
          ? `Record<string, ${tsType(Object.values(schema.patternProperties as Record<string, Json>)[0]!, indent)}>`
          : "Record<string, never>";
      }
      const inner = `${indent}  `;
      const lines = keys.map((key) => {
        const doc = props[key]!.description ? `${inner}/** ${String(props[key]!.description)} */\n` : "";
        const safe = /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key);
        return `${doc}${inner}${safe}${required.has(key) ? "" : "?"}: ${tsType(props[key]!, inner)};`;
      });
      return `{\n${lines.join("\n")}\n${indent}}`;
    }
    default:
      return "unknown";
  }
}

function pascal(method: string): string {
  return method
    .split(/[/]/)
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join("");
}

type Specs = Record<string, { description: string; params: TSchema; result?: TSchema }>;

const ref = (name: string) => ({ $ref: `#/definitions/${name}` });

/** The JSON Schema file: definitions of every message and its parts, and the root as their union. */
function jsonSchema(): Json {
  const definitions: Json = {};
  const define = (name: string, schema: unknown) => {
    if (Object.hasOwn(definitions, name)) throw new Error(`two app-server schema definitions named ${name}`);
    definitions[name] = schema;
  };
  for (const schema of sharedSchemas) define((schema as Json).$id as string, toJson(schema, true));
  define("RequestId", {
    description: "A request's id: a string or a number",
    anyOf: [{ type: "string" }, { type: "number" }],
  });
  const errorNames = Object.keys(ERROR_CODES);
  define("ErrorCode", {
    description: "The error's name (`error.data.code`); `error.code` is its JSON-RPC number",
    type: "string",
    enum: errorNames,
    tsEnumNames: errorNames,
  });
  define("ErrorResponse", {
    description: "A request that failed",
    type: "object",
    required: ["id", "error"],
    properties: {
      id: { anyOf: [ref("RequestId"), { type: "null" }] },
      error: {
        type: "object",
        required: ["code", "message", "data"],
        properties: {
          code: { type: "integer" },
          message: { type: "string" },
          data: {
            type: "object",
            required: ["code"],
            properties: { code: ref("ErrorCode") },
            additionalProperties: true,
          },
        },
      },
    },
  });
  const message = (properties: Json, required: string[], description: string) => ({
    description,
    type: "object",
    required,
    properties,
  });
  /** A table's params and result definitions and its messages; returns the table and the messages' names. */
  const table = (
    specs: Specs,
    kind: { request: string; response?: string },
  ): { entries: Json; messages: string[]; responses: string[] } => {
    const entries: Json = {};
    const messages: string[] = [];
    const responses: string[] = [];
    for (const [method, spec] of Object.entries(specs)) {
      const base = pascal(method);
      define(`${base}Params`, { description: spec.description, ...(toJson(spec.params) as Json) });
      if (spec.result) define(`${base}Result`, toJson(spec.result));
      const id = spec.result ? { id: ref("RequestId") } : {};
      define(
        `${base}${kind.request}`,
        message(
          { ...id, method: { type: "string", const: method }, params: ref(`${base}Params`) },
          [...Object.keys(id), "method", "params"],
          spec.description,
        ),
      );
      messages.push(`${base}${kind.request}`);
      if (spec.result && kind.response) {
        define(
          `${base}${kind.response}`,
          message(
            { id: ref("RequestId"), result: ref(`${base}Result`) },
            ["id", "result"],
            `The result of ${method}`,
          ),
        );
        responses.push(`${base}${kind.response}`);
      }
      entries[method] = {
        description: spec.description,
        params: ref(`${base}Params`),
        ...(spec.result ? { result: ref(`${base}Result`) } : {}),
      };
    }
    return { entries, messages, responses };
  };
  const requests = table(requestSpecs, { request: "Request", response: "Response" });
  const notifications = table(notificationSpecs, { request: "Notification" });
  const serverRequests = table(serverRequestSpecs, { request: "Request", response: "Response" });
  const union = (name: string, members: string[], description: string) =>
    define(name, { description, anyOf: members.map(ref) });
  union("Request", requests.messages, "A request a client sends");
  union("Response", requests.responses, "The server's answer to a request that succeeded");
  union("Notification", notifications.messages, "A notification the server sends");
  union("ServerRequest", serverRequests.messages, "A request the server sends a client (answer it)");
  union("ServerRequestResponse", serverRequests.responses, "A client's answer to a server request");
  return {
    $schema: "http://json-schema.org/draft-07/schema#",
    title: "KnightCode app-server protocol",
    description:
      "Every message of the app-server protocol (JSON-RPC 2.0, `jsonrpc` optional), one line or WebSocket frame each",
    anyOf: [
      "Request",
      "Response",
      "ErrorResponse",
      "Notification",
      "ServerRequest",
      "ServerRequestResponse",
    ].map(ref),
    definitions,
    requests: requests.entries,
    notifications: notifications.entries,
    serverRequests: serverRequests.entries,
  };
}

/** The files' contents, by file name. */
export function appServerSchemaFiles(): Record<string, string> {
  const json = jsonSchema();
  const ts: string[] = [
    "// Generated by `knightcode app-server schema` from builtin-extensions/mode-app-server/protocol.ts; do not edit.",
    "",
  ];
  for (const schema of sharedSchemas)
    ts.push(`export type ${(schema as Json).$id} = ${tsType(schema as Json, "", true)};`, "");
  ts.push(
    "/** The error's name (`error.data.code`); `error.code` is its JSON-RPC number. */",
    `export type ErrorCode = ${Object.keys(ERROR_CODES)
      .map((name) => JSON.stringify(name))
      .join(" | ")};`,
    "",
  );
  const map = (kind: string, specs: Specs) => {
    const rows: string[] = [];
    for (const [name, spec] of Object.entries(specs)) {
      const base = pascal(name);
      ts.push(`/** ${spec.description} */`);
      ts.push(`export type ${base}Params = ${tsType(spec.params as Json, "")};`, "");
      if (spec.result) ts.push(`export type ${base}Result = ${tsType(spec.result as Json, "")};`, "");
      rows.push(
        spec.result
          ? `  ${JSON.stringify(name)}: { params: ${base}Params; result: ${base}Result };`
          : `  ${JSON.stringify(name)}: ${base}Params;`,
      );
    }
    ts.push(`export interface ${kind} {`, ...rows, "}", "");
  };
  map("Requests", requestSpecs);
  map("Notifications", notificationSpecs);
  map("ServerRequests", serverRequestSpecs);
  return { "app-server.schema.json": `${JSON.stringify(json, null, 2)}\n`, "app-server.ts": ts.join("\n") };
}

/** Writes the files into `dir` (created if needed); returns their paths. */
export function writeAppServerSchema(dir: string): string[] {
  const out = resolve(dir);
  mkdirSync(out, { recursive: true });
  return Object.entries(appServerSchemaFiles()).map(([name, text]) => {
    const file = join(out, name);
    writeFileSync(file, text);
    return file;
  });
}
