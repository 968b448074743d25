/**
 * Commands and shortcuts registered by extensions, per session. `knightcode.registerCommand()` lands here.
 * A name registered again by the same extension replaces its command; the same name from two extensions keeps
 * both, the later one under `name:2`, `name:3`, ... so neither extension loses its command. One exception: when a
 * built-in extension's own command and a command of any other extension (a package's, a personal or project one,
 * `-e`) share a name, the other extension's command takes the plain name and the built-in one is `builtin:<name>`
 * (`/mcp` runs the package's, `/builtin:mcp` the built-in), whichever registered first; when the other command
 * goes away the built-in gets its name back. Prompt templates and skills are commands of built-in extensions too, so a
 * package's command of the same name wins over them as well, as on pi.
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

/** A command of a built-in extension: its own (`/compact`) or one it offers for the user's files (a prompt template). */
function isBuiltinCommand(owner: ExtensionInfo | RegisteredCommand): boolean {
  return "origin" in owner ? owner.origin === "builtin" : owner.owner.startsWith("builtin:");
}

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
    const builtin = isBuiltinCommand(owner);
    const holder = this.commands.get(name);
    let key = name;
    if (holder && holder.owner !== owner.id && builtin !== isBuiltinCommand(holder)) {
      // A command of the user's (a package, a personal or project extension) takes the plain name from a built-in
      // one, which stays reachable as `builtin:<name>`.
      if (builtin) key = `builtin:${name}`;
      else this.move(holder, `builtin:${name}`);
    }
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
      if (this.commands.get(entry.name) !== entry) return;
      this.commands.delete(entry.name);
      // The built-in command this one displaced gets its name back.
      const displaced = this.commands.get(`builtin:${name}`);
      if (entry.name === name && displaced && isBuiltinCommand(displaced)) this.move(displaced, name);
    }, `${owner.id} command /${key}`);
  }

  /** Re-keys a registered command (its disposer follows it through `entry.name`). */
  private move(entry: RegisteredCommand, key: string): void {
    this.commands.delete(entry.name);
    entry.name = key;
    this.commands.set(key, entry);
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
