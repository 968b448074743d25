/**
 * Key names for terminal input. `parseKey` turns what a terminal sends for one key press into an id such as
 * `"ctrl+c"`, `"shift+tab"`, `"alt+x"` or `"ctrl+shift+up"`; `matchesKey` compares data with an id, modifiers in
 * any order. Understood: printable characters, control characters, ESC-prefixed alt keys, the legacy CSI/SS3
 * sequences for arrows, navigation and function keys (with the xterm modifier parameter), and the kitty keyboard
 * protocol's `CSI code;mods:event u` form with press, repeat and release events.
 */

const SPECIAL = [
  "escape",
  "esc",
  "enter",
  "return",
  "tab",
  "space",
  "backspace",
  "delete",
  "insert",
  "clear",
  "home",
  "end",
  "pageUp",
  "pageDown",
  "up",
  "down",
  "left",
  "right",
  "f1",
  "f2",
  "f3",
  "f4",
  "f5",
  "f6",
  "f7",
  "f8",
  "f9",
  "f10",
  "f11",
  "f12",
] as const;
type Letter = "a" | "b" | "c" | "d" | "e" | "f" | "g" | "h" | "i" | "j" | "k" | "l" | "m";
type Letter2 = "n" | "o" | "p" | "q" | "r" | "s" | "t" | "u" | "v" | "w" | "x" | "y" | "z";
type Digit = "0" | "1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9";
type SymbolKey =
  | "`"
  | "-"
  | "="
  | "["
  | "]"
  | "\\"
  | ";"
  | "'"
  | ","
  | "."
  | "/"
  | "!"
  | "@"
  | "#"
  | "$"
  | "%";
type SymbolKey2 = "^" | "&" | "*" | "(" | ")" | "_" | "+" | "|" | "~" | "{" | "}" | ":" | "<" | ">" | "?";
export type BaseKey = Letter | Letter2 | Digit | SymbolKey | SymbolKey2 | (typeof SPECIAL)[number];
type Modifier = "ctrl" | "shift" | "alt" | "super";
/** A key id: a base key, optionally after modifiers joined with `+` (`"ctrl+shift+p"`). */
export type KeyId = BaseKey | `${Modifier}+${string}`;
export type KeyEventType = "press" | "repeat" | "release";

const mod =
  <P extends string>(prefix: P) =>
  <K extends BaseKey>(key: K) =>
    `${prefix}+${key}` as `${P}+${K}`;

const SYMBOLS = {
  backtick: "`",
  hyphen: "-",
  equals: "=",
  leftbracket: "[",
  rightbracket: "]",
  backslash: "\\",
  semicolon: ";",
  quote: "'",
  comma: ",",
  period: ".",
  slash: "/",
  exclamation: "!",
  at: "@",
  hash: "#",
  dollar: "$",
  percent: "%",
  caret: "^",
  ampersand: "&",
  asterisk: "*",
  leftparen: "(",
  rightparen: ")",
  underscore: "_",
  plus: "+",
  pipe: "|",
  tilde: "~",
  leftbrace: "{",
  rightbrace: "}",
  colon: ":",
  lessthan: "<",
  greaterthan: ">",
  question: "?",
} as const;

/** Key ids by name, and builders for modified ids: `Key.ctrl("c")` is `"ctrl+c"`. */
export const Key = Object.freeze({
  ...(Object.fromEntries(SPECIAL.map((k) => [k, k])) as { readonly [K in (typeof SPECIAL)[number]]: K }),
  ...SYMBOLS,
  ctrl: mod("ctrl"),
  shift: mod("shift"),
  alt: mod("alt"),
  super: mod("super"),
  ctrlShift: mod("ctrl+shift"),
  shiftCtrl: mod("shift+ctrl"),
  ctrlAlt: mod("ctrl+alt"),
  altCtrl: mod("alt+ctrl"),
  shiftAlt: mod("shift+alt"),
  altShift: mod("alt+shift"),
  ctrlSuper: mod("ctrl+super"),
  superCtrl: mod("super+ctrl"),
  shiftSuper: mod("shift+super"),
  superShift: mod("super+shift"),
  altSuper: mod("alt+super"),
  superAlt: mod("super+alt"),
  ctrlShiftAlt: mod("ctrl+shift+alt"),
  ctrlShiftSuper: mod("ctrl+shift+super"),
});

interface ParsedKey {
  key: string;
  mods: Set<Modifier>;
  event: KeyEventType;
}

const CSI_LETTER: Record<string, string> = { A: "up", B: "down", C: "right", D: "left", H: "home", F: "end" };
const SS3: Record<string, string> = { ...CSI_LETTER, P: "f1", Q: "f2", R: "f3", S: "f4" };
const TILDE: Record<string, string> = {
  "1": "home",
  "2": "insert",
  "3": "delete",
  "4": "end",
  "5": "pageUp",
  "6": "pageDown",
  "7": "home",
  "8": "end",
  "11": "f1",
  "12": "f2",
  "13": "f3",
  "14": "f4",
  "15": "f5",
  "17": "f6",
  "18": "f7",
  "19": "f8",
  "20": "f9",
  "21": "f10",
  "23": "f11",
  "24": "f12",
};
// Code points the kitty protocol sends for keys that have no printable form.
const KITTY_CODES: Record<number, string> = {
  9: "tab",
  13: "enter",
  27: "escape",
  127: "backspace",
  32: "space",
};
const EVENTS: Record<string, KeyEventType> = { "1": "press", "2": "repeat", "3": "release" };

/** The xterm/kitty modifier parameter is 1 + a bit set: shift 1, alt 2, ctrl 4, super 8. */
function modifiers(param: string | undefined): Set<Modifier> {
  const bits = Math.max(0, (Number(param) || 1) - 1);
  const mods = new Set<Modifier>();
  if (bits & 1) mods.add("shift");
  if (bits & 2) mods.add("alt");
  if (bits & 4) mods.add("ctrl");
  if (bits & 8) mods.add("super");
  return mods;
}

function printable(ch: string, mods: Set<Modifier>): ParsedKey {
  if (ch === " ") return { key: "space", mods, event: "press" };
  if (/^[A-Z]$/.test(ch)) {
    mods.add("shift");
    return { key: ch.toLowerCase(), mods, event: "press" };
  }
  return { key: ch, mods, event: "press" };
}

function decode(data: string): ParsedKey | undefined {
  const press = (key: string, ...m: Modifier[]): ParsedKey => ({ key, mods: new Set(m), event: "press" });
  if (data.length === 0) return undefined;
  if (data === "\x1b" || data === "\x1b\x1b") return press("escape");
  if (data === "\r" || data === "\n") return press("enter");
  if (data === "\t") return press("tab");
  if (data === "\x7f" || data === "\b") return press("backspace");
  if (data === "\x1b\r") return press("enter", "alt");
  if (data === "\x1b\x7f") return press("backspace", "alt");
  if (data === "\x00") return press("space", "ctrl");
  if (data.length === 1 && data.charCodeAt(0) < 0x20) {
    const code = data.charCodeAt(0);
    if (code <= 26) return press(String.fromCharCode(code + 96), "ctrl");
    return press({ 28: "\\", 29: "]", 30: "^", 31: "_" }[code] ?? "escape", "ctrl");
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal input and escape sequences are control characters
  const kitty = /^\x1b\[(\d+)(?::\d*)*(?:;(\d+)(?::(\d))?)?(?:;[\d:]*)?u$/.exec(data);
  if (kitty) {
    const code = Number(kitty[1]);
    const mods = modifiers(kitty[2]);
    const event = EVENTS[kitty[3] ?? "1"] ?? "press";
    const key = KITTY_CODES[code] ?? String.fromCodePoint(code).toLowerCase();
    return { key, mods, event };
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal input and escape sequences are control characters
  const csi = /^\x1b\[(?:(\d+)(?:;(\d+)(?::(\d))?)?)?([A-Z~])$/.exec(data);
  if (csi) {
    const [, num, modParam, eventParam, final] = csi;
    const key = final === "~" ? TILDE[num ?? ""] : final === "Z" ? "tab" : CSI_LETTER[final!];
    if (!key) return undefined;
    const mods = modifiers(modParam);
    if (final === "Z") mods.add("shift");
    return { key, mods, event: EVENTS[eventParam ?? "1"] ?? "press" };
  }
  // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal input and escape sequences are control characters
  const ss3 = /^\x1bO([A-DHFP-S])$/.exec(data);
  if (ss3) return press(SS3[ss3[1]!]!);
  // ESC followed by one key is that key with alt (how most terminals send meta).
  if (data.length === 2 && data[0] === "\x1b") {
    const inner = decode(data[1]!);
    if (inner) inner.mods.add("alt");
    return inner;
  }
  const chars = [...data];
  if (chars.length === 1) return printable(data, new Set());
  return undefined;
}

const ORDER: Modifier[] = ["ctrl", "shift", "alt", "super"];

/** The key id of one key press, release or repeat, or undefined for data that is not one key (a paste, say). */
export function parseKey(data: string): string | undefined {
  const parsed = decode(data);
  if (!parsed) return undefined;
  return [...ORDER.filter((m) => parsed.mods.has(m)), parsed.key].join("+");
}

const ALIASES: Record<string, string> = {
  esc: "escape",
  return: "enter",
  pageup: "pageUp",
  pagedown: "pageDown",
};

function parseId(id: string): { key: string; mods: Set<string> } {
  // "ctrl++" names the plus key: the last part is the key even when it is "+".
  const parts = id.endsWith("++") ? [...id.slice(0, -2).split("+"), "+"] : id.split("+");
  const raw = parts.pop() ?? "";
  const key = ALIASES[raw.toLowerCase()] ?? (raw.length === 1 ? raw.toLowerCase() : raw);
  return { key, mods: new Set(parts.map((p) => p.toLowerCase())) };
}

/** Whether `data` is the key `keyId` (modifiers in any order; `esc`/`escape` and `return`/`enter` are the same). */
export function matchesKey(data: string, keyId: KeyId | string): boolean {
  const parsed = decode(data);
  if (!parsed || parsed.event === "release") return false;
  const want = parseId(keyId);
  if (want.key !== parsed.key || want.mods.size !== parsed.mods.size) return false;
  for (const m of parsed.mods) if (!want.mods.has(m)) return false;
  return true;
}

/** Whether `data` is a key release (only the kitty keyboard protocol reports releases). */
export function isKeyRelease(data: string): boolean {
  return decode(data)?.event === "release";
}

/** Whether `data` is a key held down and repeating (kitty keyboard protocol). */
export function isKeyRepeat(data: string): boolean {
  return decode(data)?.event === "repeat";
}

/**
 * The character a kitty-protocol key event types (`CSI 97 u` is "a", with shift its shifted form), or undefined
 * when the event is a release, carries ctrl/alt/super, or is not a printable key.
 */
export function decodeKittyPrintable(data: string): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: terminal input and escape sequences are control characters
  const match = /^\x1b\[(\d+)(?::(\d*))?(?::\d*)?(?:;(\d+)(?::(\d))?)?u$/.exec(data);
  if (!match || match[4] === "3") return undefined;
  const mods = modifiers(match[3]);
  if (mods.has("ctrl") || mods.has("alt") || mods.has("super")) return undefined;
  const code = mods.has("shift") && match[2] ? Number(match[2]) : Number(match[1]);
  if (code < 0x20 || code === 0x7f || (code >= 57344 && code <= 63743)) return undefined;
  const ch = String.fromCodePoint(code);
  return mods.has("shift") && !match[2] ? ch.toUpperCase() : ch;
}
