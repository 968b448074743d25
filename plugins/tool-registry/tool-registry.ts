/**
 * The tool registry of one session: what `knightcode.registerTool()` and the active-tool methods delegate to.
 *
 * Ownership rules: the same extension registering a name again replaces its tool; a non-built-in extension
 * registering a built-in's name replaces the built-in (reported once as a notice); two non-built-in extensions
 * registering one name conflict, and the second registration fails naming both.
 */

import { createRequire } from "node:module";
import { Kind, type TSchema } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import { Errors } from "@sinclair/typebox/errors";
import { Check, Default } from "@sinclair/typebox/value";
import type { Ajv as AjvType, ValidateFunction } from "ajv";
import {
  type Disposable,
  type ExtensionInfo,
  errorMessage,
  KernelError,
  type RegistrationOptions,
  type ToolDeclaration,
  type ToolDefinition,
  type ToolExposure,
  type ToolInfo,
  type ToolLoadout,
  type ToolLoadoutEntry,
  type ToolRendererResolver,
  type ToolRenderers,
  type ToolService,
  toDisposable,
} from "../../kernel/index.js";

export interface RegisteredTool {
  definition: ToolDefinition<TSchema, unknown>;
  owner: ExtensionInfo;
  exposure: ToolExposure;
  /** Registered as a default (`{fallback: true}`): another extension's tool of the same name replaces it. */
  fallback: boolean;
}

export type ArgumentCheck = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

const TOOL_NAME = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;
/** Schema defaults are applied; unknown keywords from other dialects are tolerated. Loaded on first use. */
let ajvInstance: AjvType | undefined;
function ajv(): AjvType {
  const { Ajv } = createRequire(import.meta.url)("ajv") as typeof import("ajv");
  ajvInstance ??= new Ajv({ useDefaults: true, strict: false, allErrors: false });
  return ajvInstance;
}
const DECLARED: readonly ToolExposure[] = ["direct", "model-only"];

export class ToolRegistry implements ToolService {
  private readonly tools = new Map<string, RegisteredTool>();
  /** Defaults shadowed by a replacement, restored when the replacement goes away. */
  private readonly shadowed = new Map<string, RegisteredTool>();
  private readonly checks = new WeakMap<TSchema, TypeCheck<TSchema> | null>();
  /** How often each schema was checked without a compiled check (see `compiled`). */
  private readonly uses = new WeakMap<TSchema, number>();
  private readonly plainChecks = new WeakMap<object, ValidateFunction>();
  private readonly resolvers: { owner: ExtensionInfo; resolver: ToolRendererResolver }[] = [];
  private active = new Set<string>();
  private readonly listeners = new Set<() => void>();

  constructor(private readonly notice: (message: string) => void = () => {}) {}

  registerTool(
    owner: ExtensionInfo,
    definition: ToolDefinition<TSchema, unknown>,
    options: RegistrationOptions = {},
  ): Disposable {
    validateDefinition(owner, definition);
    const name = definition.name;
    const fallback = options.fallback === true;
    const existing = this.tools.get(name);
    if (existing && existing.owner.id !== owner.id) {
      if (existing.fallback === fallback) {
        throw new KernelError(
          "KC_ERR_TOOL_CONFLICT",
          `Tool "${name}" from ${owner.id} conflicts with the tool of the same name from ${existing.owner.id}. ` +
            (fallback
              ? "Both are registered as defaults; disable one of the two extensions."
              : "Disable one of the two extensions, rename the tool, or register the default one with { fallback: true }."),
        );
      }
      if (existing.fallback) {
        this.shadowed.set(name, existing);
        this.notice(`Tool "${name}" of ${existing.owner.id} is replaced by the one from ${owner.id}.`);
      } else {
        // A default that arrives after its replacement stays in the background.
        const entry: RegisteredTool = {
          definition,
          owner,
          exposure: definition.exposure ?? "direct",
          fallback,
        };
        this.shadowed.set(name, entry);
        return toDisposable(() => {
          if (this.shadowed.get(name) === entry) this.shadowed.delete(name);
        }, `${owner.id} tool ${name}`);
      }
    }
    const entry: RegisteredTool = { definition, owner, exposure: definition.exposure ?? "direct", fallback };
    this.tools.set(name, entry);
    if (entry.exposure === "hidden") this.active.delete(name);
    else if (DECLARED.includes(entry.exposure) && definition.defaultActive !== false && !existing)
      this.active.add(name);
    this.changed();
    return toDisposable(() => this.unregister(name, entry), `${owner.id} tool ${name}`);
  }

  registerToolRenderer(owner: ExtensionInfo, resolver: ToolRendererResolver): Disposable {
    const entry = { owner, resolver };
    this.resolvers.push(entry);
    this.resolvers.sort((a, b) => a.owner.order - b.owner.order);
    return toDisposable(() => {
      const index = this.resolvers.indexOf(entry);
      if (index >= 0) this.resolvers.splice(index, 1);
    }, `${owner.id} tool renderer`);
  }

  getActiveTools(): string[] {
    return [...this.active].filter((name) => this.tools.has(name));
  }

  /** Unknown names are ignored, as are hidden tools. */
  setActiveTools(names: string[]): void {
    this.active = new Set(
      names.filter((name) => this.tools.has(name) && this.tools.get(name)!.exposure !== "hidden"),
    );
    this.changed();
  }

  getAllTools(): ToolInfo[] {
    return [...this.tools.values()].map(({ definition, owner, exposure }) => ({
      name: definition.name,
      description: definition.description,
      parameters: definition.parameters,
      exposure,
      ...(definition.namespace ? { namespace: definition.namespace } : {}),
      ...(definition.annotations ? { annotations: definition.annotations } : {}),
      reachesTools: typeof definition.reachesTools === "function",
      owner: owner.id,
    }));
  }

  get(name: string): RegisteredTool | undefined {
    return this.tools.get(name);
  }

  /**
   * The tools declared to the model: active, not hidden, minus the declarations a `prepareLoadout` hook hides,
   * with the descriptions it replaces. Hooks run on every call, so they always see the current active set.
   */
  declarations(): ToolDeclaration[] {
    const active = this.getActiveTools().filter((name) => this.isDeclared(name));
    const hooks = active.map((name) => this.tools.get(name)!.definition).filter((d) => d.prepareLoadout);
    const descriptions: Record<string, string> = {};
    const hidden = new Set<string>();
    if (hooks.length > 0) {
      const loadout = this.loadout(active);
      for (const definition of hooks) {
        let result: ReturnType<NonNullable<typeof definition.prepareLoadout>>;
        try {
          result = definition.prepareLoadout!(loadout);
        } catch (error) {
          this.notice(`prepareLoadout of "${definition.name}" failed: ${errorMessage(error)}`);
          continue;
        }
        Object.assign(descriptions, result?.descriptions ?? {});
        for (const name of result?.hiddenDeclarations ?? []) hidden.add(name);
      }
    }
    return active
      .filter((name) => !hidden.has(name))
      .map((name) => {
        const { definition } = this.tools.get(name)!;
        return {
          name,
          description: descriptions[name] ?? definition.description,
          parameters: definition.parameters,
        };
      });
  }

  /** Declared to the model: active, and neither hidden nor callable-only. */
  isDeclared(name: string): boolean {
    const tool = this.tools.get(name);
    return !!tool && tool.exposure !== "hidden" && this.active.has(name);
  }

  /** Callable from other tools (`ctx.executeTool`): active direct tools, and codemode or deferred tools always. */
  isCallable(name: string): boolean {
    const tool = this.tools.get(name);
    if (!tool) return false;
    if (tool.exposure === "codemode" || tool.exposure === "deferred") return true;
    return tool.exposure === "direct" && this.active.has(name);
  }

  private loadout(declared: string[]): ToolLoadout {
    const entry = (name: string): ToolLoadoutEntry => {
      const { definition, exposure } = this.tools.get(name)!;
      return {
        name,
        description: definition.description,
        parameters: definition.parameters,
        ...(definition.outputSchema ? { outputSchema: definition.outputSchema } : {}),
        exposure,
        ...(definition.namespace ? { namespace: definition.namespace } : {}),
        ...(definition.promptGuidelines ? { promptGuidelines: definition.promptGuidelines } : {}),
      };
    };
    const all = [...this.tools.keys()];
    return {
      declared: declared.map(entry),
      callable: all.filter((name) => this.isCallable(name)).map(entry),
      all: all.map(entry),
    };
  }

  /** Tools in the active set (what the model may call). */
  isActive(name: string): boolean {
    return this.active.has(name) && this.tools.has(name);
  }

  /** Runs `prepareArguments`, applies schema defaults and validates; the error names the offending field. */
  checkArguments(name: string, raw: unknown): ArgumentCheck {
    const tool = this.tools.get(name);
    if (!tool) return { ok: false, error: `Tool "${name}" is not registered` };
    let args: unknown = raw;
    try {
      if (tool.definition.prepareArguments) args = tool.definition.prepareArguments(raw);
    } catch (error) {
      return { ok: false, error: `prepareArguments of "${name}" failed: ${errorMessage(error)}` };
    }
    const schema = tool.definition.parameters;
    if (args === undefined || args === null) args = {};
    if (!(Kind in schema)) return this.checkPlainSchema(name, schema, args);
    try {
      args = Default(schema, structuredClone(args));
    } catch (error) {
      return {
        ok: false,
        error: `The arguments of "${name}" could not be prepared: ${errorMessage(error)}`,
      };
    }
    const check = this.compiled(schema);
    // TypeBox checks only the kinds it knows; a schema with others (Type.Unsafe, a custom kind) is still JSON
    // Schema, which Ajv checks.
    if (check === null) return this.checkPlainSchema(name, schema, args);
    let valid: boolean;
    try {
      valid = check ? check.Check(args) : Check(schema, args);
    } catch {
      this.checks.set(schema, null);
      return this.checkPlainSchema(name, schema, args);
    }
    if (valid) return { ok: true, value: args as Record<string, unknown> };
    const errors = check ? check.Errors(args) : Errors(schema, args);
    const problems = [...errors].slice(0, 3).map((e) => `${e.path || "/"}: ${e.message}`);
    return { ok: false, error: `Invalid arguments for tool "${name}": ${problems.join("; ")}` };
  }

  /**
   * Tools that bring a plain JSON Schema rather than a TypeBox one (MCP servers, hand-written schemas) are
   * validated with Ajv, which implements the whole JSON Schema standard.
   */
  private checkPlainSchema(name: string, schema: TSchema, args: unknown): ArgumentCheck {
    let validate = this.plainChecks.get(schema);
    if (!validate) {
      try {
        validate = ajv().compile(schema);
      } catch (error) {
        return {
          ok: false,
          error: `Tool "${name}" has an invalid parameter schema: ${(error as Error).message}`,
        };
      }
      this.plainChecks.set(schema, validate);
    }
    const value = structuredClone(args);
    if (validate(value)) return { ok: true, value: value as Record<string, unknown> };
    const problems = (validate.errors ?? [])
      .slice(0, 3)
      .map((e) => `${e.instancePath || "/"}: ${e.message ?? "invalid"}`);
    return { ok: false, error: `Invalid arguments for tool "${name}": ${problems.join("; ")}` };
  }

  /** Renderers for a tool through the resolver chain (load order), then the tool's own. */
  getToolRenderers(toolName: string): ToolRenderers | undefined {
    const own = (): ToolRenderers | undefined => {
      const definition = this.tools.get(toolName)?.definition;
      if (!definition?.renderCall && !definition?.renderResult) return undefined;
      return {
        ...(definition.renderCall
          ? { renderCall: definition.renderCall as ToolRenderers["renderCall"] }
          : {}),
        ...(definition.renderResult
          ? { renderResult: definition.renderResult as ToolRenderers["renderResult"] }
          : {}),
      };
    };
    const chain = this.resolvers.map((r) => r.resolver);
    const at = (index: number): ToolRenderers | undefined =>
      index >= chain.length ? own() : chain[index]!(toolName, () => at(index + 1));
    return at(0);
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private unregister(name: string, entry: RegisteredTool): void {
    if (this.tools.get(name) !== entry) return;
    const previous = this.shadowed.get(name);
    if (previous) {
      this.shadowed.delete(name);
      this.tools.set(name, previous);
    } else {
      this.tools.delete(name);
      this.active.delete(name);
    }
    this.changed();
  }

  /**
   * The compiled check of a schema, null when TypeBox cannot check it (checkArguments falls back to Ajv), or
   * undefined for its first checks: compiling generates and compiles a function, which costs a run more than
   * checking the arguments of its first calls the interpreted way (TypeBox's `Value.Check`, the same rules), so a
   * schema is compiled when a session uses it the third time.
   */
  private compiled(schema: TSchema): TypeCheck<TSchema> | null | undefined {
    if (this.checks.has(schema)) return this.checks.get(schema);
    const uses = (this.uses.get(schema) ?? 0) + 1;
    this.uses.set(schema, uses);
    if (uses < COMPILE_AT_USE) return undefined;
    let check: TypeCheck<TSchema> | null = null;
    try {
      check = TypeCompiler.Compile(schema);
    } catch {
      // Remembered as null: checkArguments falls back to Ajv.
    }
    this.checks.set(schema, check);
    return check;
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}

/** The use of a tool's schema at which its check is compiled (see `ToolRegistry.compiled`). */
const COMPILE_AT_USE = 3;

function validateDefinition(owner: ExtensionInfo, definition: ToolDefinition<TSchema, unknown>): void {
  const problem = (message: string) => new KernelError("KC_ERR_INVALID_TOOL", `${owner.id}: ${message}`);
  if (!definition || typeof definition !== "object")
    throw problem("registerTool() needs a tool definition object");
  if (typeof definition.name !== "string" || !TOOL_NAME.test(definition.name)) {
    throw problem(`tool name ${JSON.stringify(definition.name)} must match ${TOOL_NAME}`);
  }
  if (typeof definition.description !== "string")
    throw problem(`tool "${definition.name}" needs a description`);
  if (!definition.parameters || typeof definition.parameters !== "object") {
    throw problem(`tool "${definition.name}" needs a TypeBox parameters schema`);
  }
  if (typeof definition.execute !== "function")
    throw problem(`tool "${definition.name}" needs an execute function`);
}
