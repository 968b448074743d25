/** Host modes registered by extensions. A later registration of a name replaces an earlier one (a user's mode
 * replacing a built-in), and disposing it brings the earlier one back. */
import {
  type Disposable,
  type ExtensionInfo,
  KernelError,
  type ModeDefinition,
  type ModeService,
  toDisposable,
} from "../../kernel/index.js";

export interface RegisteredMode extends ModeDefinition {
  name: string;
  owner: string;
}

const MODE_NAME = /^[a-z][a-z0-9-]*$/;

export class ModeRegistry implements ModeService {
  private readonly modes = new Map<string, RegisteredMode[]>();

  registerMode(owner: ExtensionInfo, name: string, mode: ModeDefinition): Disposable {
    if (!MODE_NAME.test(name))
      throw new KernelError("KC_ERR_INVALID_MODE", `${owner.id}: mode name "${name}" is invalid`);
    if (typeof mode?.run !== "function") {
      throw new KernelError("KC_ERR_INVALID_MODE", `${owner.id}: mode "${name}" needs a run function`);
    }
    const entry: RegisteredMode = { ...mode, name, owner: owner.id };
    this.modes.set(name, [...(this.modes.get(name) ?? []), entry]);
    return toDisposable(() => {
      const rest = (this.modes.get(name) ?? []).filter((m) => m !== entry);
      if (rest.length > 0) this.modes.set(name, rest);
      else this.modes.delete(name);
    }, `${owner.id} mode ${name}`);
  }

  get(name: string): RegisteredMode | undefined {
    return this.modes.get(name)?.at(-1);
  }

  list(): RegisteredMode[] {
    return [...this.modes.keys()].map((name) => this.get(name)!);
  }
}
