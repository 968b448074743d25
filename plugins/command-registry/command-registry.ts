/**
 * Commands and shortcuts registered by extensions, per session. `knightcode.registerCommand()` lands here.
 * A name registered again by the same extension replaces its command; the same name from two extensions keeps
 * both, the later one under `name:2`, `name:3`, ... so neither extension loses its command.
 */
import {
  type CommandDefinition,
  type CommandInfo,
  type CommandService,
  type Disposable,
  type ExtensionInfo,
  KernelError,
  type ShortcutDefinition,
  type SourceInfo,
  toDisposable,
} from "../../kernel/index.js";
import { sourceInfoOf } from "./source-info.js";

export interface RegisteredCommand extends CommandDefinition {
  name: string;
  owner: string;
  sourceInfo: SourceInfo;
}

const COMMAND_NAME = /^[a-zA-Z0-9][\w:.-]*$/;

export class CommandRegistry implements CommandService {
  private readonly commands = new Map<string, RegisteredCommand>();
  private readonly shortcuts = new Map<string, ShortcutDefinition & { owner: string }>();

  registerCommand(owner: ExtensionInfo, name: string, command: CommandDefinition): Disposable {
    if (!COMMAND_NAME.test(name)) {
      throw new KernelError("KC_ERR_INVALID_COMMAND", `${owner.id}: "${name}" is not a valid command name`);
    }
    if (typeof command?.handler !== "function") {
      throw new KernelError(
        "KC_ERR_INVALID_COMMAND",
        `${owner.id}: command "${name}" needs a handler function`,
      );
    }
    let key = name;
    for (let n = 2; this.commands.has(key) && this.commands.get(key)!.owner !== owner.id; n++)
      key = `${name}:${n}`;
    const entry: RegisteredCommand = {
      ...command,
      name: key,
      owner: owner.id,
      sourceInfo: { ...sourceInfoOf(owner), ...command.sourceInfo },
    };
    this.commands.set(key, entry);
    return toDisposable(() => {
      if (this.commands.get(key) === entry) this.commands.delete(key);
    }, `${owner.id} command /${key}`);
  }

  registerShortcut(owner: ExtensionInfo, key: string, shortcut: ShortcutDefinition): Disposable {
    const entry = { ...shortcut, owner: owner.id };
    this.shortcuts.set(key, entry);
    return toDisposable(() => {
      if (this.shortcuts.get(key) === entry) this.shortcuts.delete(key);
    }, `${owner.id} shortcut ${key}`);
  }

  getCommands(): CommandInfo[] {
    return [...this.commands.values()].map((c) => ({
      name: c.name,
      ...(c.description ? { description: c.description } : {}),
      source: c.source ?? "extension",
      owner: c.owner,
      sourceInfo: c.sourceInfo,
    }));
  }

  get(name: string): RegisteredCommand | undefined {
    return this.commands.get(name);
  }

  getShortcut(key: string): (ShortcutDefinition & { owner: string }) | undefined {
    return this.shortcuts.get(key);
  }

  getShortcuts(): { key: string; description?: string; owner: string }[] {
    return [...this.shortcuts.entries()].map(([key, s]) => ({
      key,
      ...(s.description ? { description: s.description } : {}),
      owner: s.owner,
    }));
  }
}
