/**
 * CLI flags registered by extensions. The host parses argv against the registered flags (so `--help` can show
 * them with their owner) and hands the values back; an extension reads only its own flags.
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
  private values: Record<string, boolean | string> = {};

  registerFlag(owner: ExtensionInfo, name: string, flag: FlagDefinition): Disposable {
    if (!FLAG_NAME.test(name)) {
      throw new KernelError(
        "KC_ERR_INVALID_FLAG",
        `${owner.id}: flag "${name}" must be lower-case kebab-case`,
      );
    }
    const existing = this.flags.get(name);
    if (existing && existing.owner !== owner.id) {
      throw new KernelError(
        "KC_ERR_FLAG_CONFLICT",
        `${owner.id}: flag --${name} is already registered by ${existing.owner}`,
      );
    }
    const entry: RegisteredFlag = { ...flag, name, owner: owner.id };
    this.flags.set(name, entry);
    return toDisposable(() => {
      if (this.flags.get(name) === entry) this.flags.delete(name);
    }, `${owner.id} flag --${name}`);
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
