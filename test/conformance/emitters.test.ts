/**
 * Every catalogued event has an emitter in the sources, unless the catalogue marks it reserved for a feature that
 * has not landed; and a reserved event has none (then it is no longer reserved).
 *
 * Emitters are found in the syntax tree of every source file under kernel/, plugins/, builtin-extensions/ and
 * hosts/ (so comments, strings and docs never count): a call of a hook-bus dispatch method on a receiver named like
 * the bus (`bus.emit`, `this.bus.gate`, `runtime.bus.transform`, ...) with the event's name as a string literal.
 * A dispatch whose name is a parameter of the function around it makes that function a forwarder, and its callers'
 * literals count (a typed helper such as `dispatch(bus, "agent_start", ...)` keeps the test honest). Any other
 * computed event name fails the test, because the scan could not see which event it dispatches.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "chai";
import ts from "typescript";
import { eventCatalog, eventNames } from "../../kernel/api/event-catalog.js";
import { HookBus } from "../../kernel/events/hook-bus.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const SOURCE_DIRS = ["kernel", "plugins", "builtin-extensions", "hosts"];
/** HookBus's dispatch methods; the first test checks they still exist, so a rename cannot empty the scan. */
const DISPATCH_METHODS = ["emit", "transform", "gate", "lastWins", "boundary"] as const;

interface Site {
  file: string;
  line: number;
}

interface Scan {
  /** Event name → where it is dispatched. */
  emitted: Map<string, Site[]>;
  /** Bus dispatches whose event name is neither a literal nor a forwarded parameter. */
  opaque: Site[];
}

function sourceFiles(): { path: string; text: string }[] {
  return SOURCE_DIRS.flatMap((dir) =>
    readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".d.ts"))
      .map((e) => join(e.parentPath, e.name)),
  ).map((path) => ({ path: relative(root, path), text: readFileSync(path, "utf8") }));
}

/** `bus`, `this.bus`, `runtime.bus`, `this.runtime().bus`, `hookBus`: the receiver's own name ends in "bus". */
function isBusReceiver(node: ts.Expression): boolean {
  const inner = ts.isParenthesizedExpression(node) || ts.isNonNullExpression(node) ? node.expression : node;
  const name = ts.isIdentifier(inner)
    ? inner.text
    : ts.isPropertyAccessExpression(inner)
      ? inner.name.text
      : undefined;
  return name !== undefined && /bus$/i.test(name);
}

function literalText(node: ts.Expression | undefined): string | undefined {
  return node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node))
    ? node.text
    : undefined;
}

/** The name a call goes to: `f(...)` → f, `x.f(...)` → f. */
function calleeName(call: ts.CallExpression): string | undefined {
  const callee = call.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return undefined;
}

/** The named function, method or arrow (`const f = (...) => ...`) around `node`, with its parameter names. */
function enclosingFunction(node: ts.Node): { name: string; params: string[] } | undefined {
  for (let at: ts.Node | undefined = node.parent; at; at = at.parent) {
    if (!ts.isFunctionLike(at)) continue;
    let name: string | undefined;
    if ((ts.isFunctionDeclaration(at) || ts.isMethodDeclaration(at)) && at.name && ts.isIdentifier(at.name))
      name = at.name.text;
    else if (ts.isVariableDeclaration(at.parent) && ts.isIdentifier(at.parent.name))
      name = at.parent.name.text;
    else if (ts.isPropertyAssignment(at.parent) && ts.isIdentifier(at.parent.name))
      name = at.parent.name.text;
    if (!name) return undefined;
    const params = at.parameters.map((p) => (ts.isIdentifier(p.name) ? p.name.text : ""));
    return { name, params };
  }
  return undefined;
}

function scanSources(files: readonly { path: string; text: string }[]): Scan {
  const emitted = new Map<string, Site[]>();
  const opaque: Site[] = [];
  /** Forwarder name → index of the parameter that carries the event name. */
  const forwarders = new Map<string, number>();
  const calls: { call: ts.CallExpression; site: Site }[] = [];
  const add = (name: string, site: Site) => emitted.set(name, [...(emitted.get(name) ?? []), site]);

  for (const { path, text } of files) {
    const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node)) {
        const site = {
          file: path,
          line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
        };
        calls.push({ call: node, site });
        const callee = node.expression;
        if (
          ts.isPropertyAccessExpression(callee) &&
          (DISPATCH_METHODS as readonly string[]).includes(callee.name.text) &&
          isBusReceiver(callee.expression)
        ) {
          const event = node.arguments[0];
          const name = literalText(event);
          if (name !== undefined) add(name, site);
          else {
            const around = enclosingFunction(node);
            const index = event && ts.isIdentifier(event) ? (around?.params.indexOf(event.text) ?? -1) : -1;
            if (around && index >= 0) forwarders.set(around.name, index);
            else opaque.push(site);
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }

  for (const { call, site } of calls) {
    const name = calleeName(call);
    const index = name === undefined ? undefined : forwarders.get(name);
    if (index === undefined) continue;
    const event = literalText(call.arguments[index]);
    if (event !== undefined) add(event, site);
  }
  return { emitted, opaque };
}

const where = (sites: Site[]) => sites.map((s) => `${s.file}:${s.line}`);

describe("event emitters", () => {
  const { emitted, opaque } = scanSources(sourceFiles());

  it("scans the hook bus's real dispatch methods", () => {
    for (const method of DISPATCH_METHODS) expect(HookBus.prototype[method], method).to.be.a("function");
    // The scan finds the dispatches that exist at all; an empty result means it is looking at the wrong thing.
    expect(emitted.get("agent_start"), "agent_start").to.not.equal(undefined);
  });

  it("finds an emitter for every event that is not reserved", () => {
    const missing = eventNames.filter((name) => !eventCatalog[name].reserved && !emitted.has(name));
    expect(missing, "catalogued events nothing dispatches (mark them reserved, or emit them)").to.deep.equal(
      [],
    );
  });

  it("finds no emitter for a reserved event (drop the mark when its feature lands)", () => {
    const early = eventNames
      .filter((name) => eventCatalog[name].reserved && emitted.has(name))
      .map((name) => `${name} (${where(emitted.get(name)!).join(", ")})`);
    expect(early).to.deep.equal([]);
  });

  it("dispatches only catalogued events", () => {
    const unknown = [...emitted.keys()]
      .filter((name) => !eventNames.includes(name as never))
      .map((name) => `${name} (${where(emitted.get(name)!).join(", ")})`);
    expect(unknown).to.deep.equal([]);
  });

  it("names every dispatched event where the scan can read it", () => {
    expect(where(opaque), "bus dispatches with a computed event name").to.deep.equal([]);
  });
});

describe("event emitter scan", () => {
  const scan = (text: string) => scanSources([{ path: "x.ts", text }]);

  it("counts literal dispatches on the bus, not comments, strings or other emitters", () => {
    const { emitted, opaque } = scan(`
      // bus.emit("agent_end", {}) in a comment
      const doc = 'bus.emit("turn_end")';
      process.emit("warning", "x");
      await this.bus.gate("tool_call", event, ctx);
      await runtime.bus.emit(
        "agent_start", {}, ctx);
    `);
    expect([...emitted.keys()].sort()).to.deep.equal(["agent_start", "tool_call"]);
    expect(emitted.get("agent_start")).to.deep.equal([{ file: "x.ts", line: 6 }]);
    expect(opaque).to.deep.equal([]);
  });

  it("follows a helper that forwards its event parameter to the bus, and flags other computed names", () => {
    const { emitted, opaque } = scan(`
      function dispatch(bus: HookBus, event: string, payload: unknown) {
        return bus.emit(event, payload, ctx);
      }
      const send = (name: string) => this.bus.emit(name, {}, ctx);
      dispatch(bus, "session_tree", {});
      host.send("ui_prompt_end");
      bus.emit(names[0], {}, ctx);
    `);
    expect([...emitted.keys()].sort()).to.deep.equal(["session_tree", "ui_prompt_end"]);
    expect(opaque).to.deep.equal([{ file: "x.ts", line: 8 }]);
  });
});
