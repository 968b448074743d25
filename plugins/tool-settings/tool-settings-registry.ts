/**
 * The `tools.json` entries a session's extensions declare (`knightcode.registerToolSettings`): what `/tools` and the
 * app-server's `tool/settings/*` list and may change. The extension that owns a feature declares it (the permission
 * gate, `ask_user`), so a replacement declares the same name and the listing follows it. Of two declarations of one
 * name, the newest is in force; when it goes away, the earlier one comes back.
 */
import {
  type Disposable,
  type ExtensionInfo,
  KernelError,
  type ToolSettingsDefinition,
  type ToolSettingsService,
  toDisposable,
} from "../../kernel/index.js";

const NAME = /^[a-z][a-z0-9_-]{0,63}$/;

export interface DeclaredToolSettings {
  name: string;
  definition: ToolSettingsDefinition;
  owner: ExtensionInfo;
}

export class ToolSettingsRegistry implements ToolSettingsService {
  private readonly entries: DeclaredToolSettings[] = [];

  registerToolSettings(owner: ExtensionInfo, name: string, definition: ToolSettingsDefinition): Disposable {
    if (!NAME.test(name)) {
      throw new KernelError(
        "KC_ERR_INVALID_TOOL",
        `${owner.id}: tool settings name "${name}" must be lower case letters, digits, "-" or "_"`,
      );
    }
    if (typeof definition?.description !== "string" || typeof definition.enabledByDefault !== "boolean") {
      throw new KernelError(
        "KC_ERR_INVALID_TOOL",
        `${owner.id}: tool settings "${name}" need a description and enabledByDefault`,
      );
    }
    const entry: DeclaredToolSettings = {
      name,
      definition: Object.freeze({ ...definition, settings: Object.freeze({ ...definition.settings }) }),
      owner,
    };
    this.entries.push(entry);
    return toDisposable(() => {
      const at = this.entries.indexOf(entry);
      if (at >= 0) this.entries.splice(at, 1);
    }, `${owner.id} tool settings ${name}`);
  }

  /** The declarations in force, one per name, in the order they were first declared. */
  list(): DeclaredToolSettings[] {
    const byName = new Map<string, DeclaredToolSettings>();
    for (const entry of this.entries) byName.set(entry.name, entry);
    return [...byName.values()];
  }

  get(name: string): DeclaredToolSettings | undefined {
    return this.list().find((e) => e.name === name);
  }
}
