/**
 * CLI flags registered by extensions. The host parses argv against the registered flags (so `--help` can show
 * them with their owner) and hands the values back; an extension reads only its own flags. Two extensions that
 * register one name conflict, with one exception, as for commands: a built-in extension's flag gives way to the same
 * flag of any other extension (pi's plan-mode example and `builtin:plan-mode` both register `--plan`), and gets it
 * back when that registration goes away; while it has given way, the built-in reads no value.
 */
import {
  type Disposable,
  type ExtensionInfo,
  type FlagDefinition,
  type FlagService,
  KernelError,
  toDisposable,
} from "../../kernel/index.js";

export interface RegisteredFlag extends FlagDefinition {
  name: string;
  owner: string;
}

const FLAG_NAME = /^[a-z][a-z0-9-]*$/;

export class FlagRegistry implements FlagService {
  private readonly flags = new Map<string, RegisteredFlag>();
  /** Built-in flags that gave way to another extension's flag of the same name. */
  private readonly displaced = new Map<string, RegisteredFlag>();
  private values: Record<string, boolean | string> = {};

  registerFlag(owner: ExtensionInfo, name: string, flag: FlagDefinition): Disposable {
    if (!FLAG_NAME.test(name)) {
      throw new KernelError(
        "KC_ERR_INVALID_FLAG",
        `${owner.id}: flag "${name}" must be lower-case kebab-case`,
      );
    }
    const entry: RegisteredFlag = { ...flag, name, owner: owner.id };
    const dispose = toDisposable(() => {
      if (this.displaced.get(name) === entry) {
        this.displaced.delete(name);
        return;
      }
      if (this.flags.get(name) !== entry) return;
      this.flags.delete(name);
      const waiting = this.displaced.get(name);
      if (waiting) {
        this.displaced.delete(name);
        this.flags.set(name, waiting);
      }
    }, `${owner.id} flag --${name}`);
    const existing = this.flags.get(name);
    const builtin = owner.origin === "builtin";
    if (existing && existing.owner !== owner.id) {
      const existingBuiltin = existing.owner.startsWith("builtin:");
      if (builtin && !existingBuiltin && !this.displaced.has(name)) {
        // Another extension's flag holds the name: the built-in one waits for it to go.
        this.displaced.set(name, entry);
        return dispose;
      }
      if (!builtin && existingBuiltin && !this.displaced.has(name)) this.displaced.set(name, existing);
      else {
        throw new KernelError(
          "KC_ERR_FLAG_CONFLICT",
          `${owner.id}: flag --${name} is already registered by ${existing.owner}`,
        );
      }
    }
    this.flags.set(name, entry);
    return dispose;
  }

  getFlag(owner: ExtensionInfo, name: string): boolean | string | undefined {
    const flag = this.flags.get(name);
    if (!flag || flag.owner !== owner.id) return undefined;
    return this.values[name] ?? flag.default;
  }

  /** The host sets parsed values once argv has been read. */
  setValues(values: Record<string, boolean | string>): void {
    this.values = { ...values };
  }

  list(): RegisteredFlag[] {
    return [...this.flags.values()];
  }
}
