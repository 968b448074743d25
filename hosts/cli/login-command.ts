/**
 * `knightcode login [provider]` and `knightcode logout [provider]`: sign in to a provider (a subscription through
 * one of its login methods, or an API key) and store the credential in `<agentDir>/auth.json` (mode 0600), or
 * remove it. The methods are the providers' own (`ProviderConfig.login`), so a session is opened (in memory) to
 * load the extensions that register them; nothing else runs.
 *
 *   knightcode login                      list the providers and their sign-in methods (a terminal asks)
 *   knightcode login <provider> [--method <n|words>]   sign in (a terminal asks which method when there are several)
 *   knightcode login <provider> --with-api-key         store the key read from stdin
 *   knightcode login --list               the stored credentials, keys masked
 *   knightcode logout [provider]
 *
 * Without a terminal, URLs, codes and questions go to stderr, and a pasted answer is read from stdin (its end
 * does not cancel a pasted code's question: the browser's answer, or the device code's approval, is still waited
 * for; a question only stdin can answer ends the sign-in at the end of stdin).
 */
import { createInterface, type Interface } from "node:readline";
import type { AgentSessionHandle, CredentialStore, ProviderLoginIO } from "@knightcodeai/cli";

export const LOGIN_USAGE = `Usage:
  knightcode login [provider] [--method <number|words>] [-e <extension>]
  knightcode login <provider> --with-api-key     (the key is read from stdin)
  knightcode login --list
  knightcode logout [provider]

Signs in to a provider (a subscription such as Claude Pro/Max or ChatGPT, or an API key) and keeps the
credential in auth.json of the agent folder (readable only by you). See docs/providers.md.
`;

interface Output {
  out(text: string): void;
  err(text: string): void;
}

interface Parsed {
  provider?: string;
  method?: string;
  withApiKey: boolean;
  list: boolean;
  extensions: string[];
}

function parse(argv: string[]): Parsed | string {
  const parsed: Parsed = { withApiKey: false, list: false, extensions: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === "--method" || arg === "-m") parsed.method = value();
    else if (arg === "--with-api-key") parsed.withApiKey = true;
    else if (arg === "--list") parsed.list = true;
    else if (arg === "-e" || arg === "--extension") parsed.extensions.push(value());
    else if (arg.startsWith("-")) return `unknown option ${arg}`;
    else if (parsed.provider === undefined) parsed.provider = arg;
    else return `unexpected ${arg}`;
  }
  return parsed;
}

const terminal = () => Boolean(process.stdin.isTTY && process.stderr.isTTY);

/** `knightcode login|logout ...`; returns the exit code. */
export async function loginCommand(command: "login" | "logout", argv: string[], io: Output): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    io.out(LOGIN_USAGE);
    return 0;
  }
  let parsed: Parsed | string;
  try {
    parsed = parse(argv);
  } catch (error) {
    parsed = (error as Error).message;
  }
  if (typeof parsed === "string") {
    io.err(`knightcode ${command}: ${parsed}\n${LOGIN_USAGE}`);
    return 2;
  }
  const { createAgentSession, errorMessage } = await import("@knightcodeai/cli");
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const lines = new LineReader();
  let handle: AgentSessionHandle | undefined;
  try {
    handle = await createAgentSession({
      cwd: process.cwd(),
      mode: "print",
      extensions: parsed.extensions,
      session: { inMemory: true },
      approve: false,
      warn: (message) => io.err(`knightcode: ${message}\n`),
    });
    const store = handle.credentials;
    if (command === "logout") return await logout(store, parsed, io, lines);
    if (parsed.list) return list(store, io);
    return await login(store, parsed, io, lines, controller.signal);
  } catch (error) {
    if (controller.signal.aborted) {
      io.err(`knightcode ${command}: cancelled\n`);
      return 130;
    }
    io.err(`knightcode ${command}: ${errorMessage(error)}\n`);
    return 1;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    lines.close();
    await handle?.dispose();
  }
}

function list(store: CredentialStore, io: Output): number {
  const stored = store.list();
  if (stored.length === 0) {
    io.out(`No credentials are stored in ${store.path}.\n`);
    return 0;
  }
  for (const c of stored) io.out(`${describe(c)}\n`);
  return 0;
}

function describe(
  c: { provider: string; type: string; masked?: string; expires?: number },
  withProvider = true,
): string {
  const type = c.type === "api_key" ? "API key" : c.type === "oauth" ? "subscription sign-in" : c.type;
  const expires =
    c.expires === undefined
      ? ""
      : c.expires > Date.now()
        ? `, token expires ${new Date(c.expires).toISOString()}`
        : ", token expired (renewed on the next request)";
  return `${withProvider ? `${c.provider}  ` : ""}${type}${c.masked ? ` ${c.masked}` : ""}${expires}`;
}

async function login(
  store: CredentialStore,
  parsed: Parsed,
  io: Output,
  lines: LineReader,
  signal: AbortSignal,
): Promise<number> {
  const providers = store.providers();
  let provider = parsed.provider;
  if (provider !== undefined && !providers.includes(provider)) {
    io.err(`knightcode login: no provider "${provider}" (known: ${providers.join(", ") || "none"})\n`);
    return 2;
  }
  if (provider === undefined) {
    const overview = providers
      .map((p) => {
        const methods = store.loginMethods(p).map((m) => m.label);
        return `  ${p}: ${[...methods, "API key"].join("; ")}`;
      })
      .join("\n");
    if (!terminal()) {
      io.err(`knightcode login: name a provider: knightcode login <provider>\n${overview}\n`);
      return 2;
    }
    io.err(`Providers and their sign-in methods:\n${overview}\n`);
    const answer = (await lines.ask("Provider: ", signal))?.trim();
    if (!answer) return 1;
    if (!providers.includes(answer)) {
      io.err(`knightcode login: no provider "${answer}"\n`);
      return 2;
    }
    provider = answer;
  }
  const methods = store.loginMethods(provider);
  const choices = [...methods.map((m) => m.label), "API key"];
  // What --method takes besides a number or words of a label: the ids the app-server uses too.
  const ids = [...methods.map((m) => m.id), "api-key"];
  let index: number | undefined;
  if (parsed.withApiKey) index = methods.length;
  else if (parsed.method !== undefined) {
    index = pickMethod(choices, ids, parsed.method);
    if (index === undefined) {
      io.err(`knightcode login: ${provider} has no method "${parsed.method}"\n${numbered(choices, ids)}`);
      return 2;
    }
  } else if (methods.length === 1 && !terminal()) index = 0;
  else if (methods.length === 0) index = 0;
  else if (!terminal()) {
    io.err(
      `knightcode login: ${provider} signs in several ways; choose one with --method:\n${numbered(choices, ids)}`,
    );
    return 2;
  } else {
    io.err(`Sign in to ${provider}:\n${numbered(choices, ids)}`);
    const answer = (await lines.ask("Method: ", signal))?.trim();
    index = answer ? pickMethod(choices, ids, answer) : undefined;
    if (index === undefined) {
      io.err("knightcode login: no such method\n");
      return 2;
    }
  }
  const loginIO: ProviderLoginIO = {
    notify: (message) => io.err(`${message}\n`),
    input: (title, options) => {
      const signals = [signal, ...(options?.signal ? [options.signal] : [])];
      // A question with its own signal races something else (a pasted code against the browser's answer): at the
      // end of a piped stdin it keeps waiting for that. Any other question has only stdin to answer it.
      return lines.ask(
        `${title}: `,
        AbortSignal.any(signals),
        options?.secret === true,
        options?.signal !== undefined && options.signal !== signal,
      );
    },
    signal,
  };
  let credential: { type: string; key: string; [field: string]: unknown } | undefined;
  if (index === methods.length) {
    const key = parsed.withApiKey
      ? await lines.readAll()
      : await lines.ask(`API key for ${provider} (not shown): `, signal, true);
    if (!key?.trim()) {
      io.err("knightcode login: no key was given; nothing was saved\n");
      return 1;
    }
    store.saveApiKey(provider, key.trim());
  } else {
    credential = await methods[index]!.login(loginIO);
    if (!credential) {
      io.err("knightcode login: cancelled; nothing was saved\n");
      return 1;
    }
    store.save(provider, credential);
  }
  const saved = store.list().find((c) => c.provider === provider);
  io.err(`Signed in to ${provider}: ${saved ? describe(saved, false) : "saved"}; in ${store.path}\n`);
  return 0;
}

function numbered(choices: string[], ids: string[]): string {
  return choices.map((c, i) => `  ${i + 1}. ${c} (${ids[i]})\n`).join("");
}

/** A method by its number, or the one label that contains all the given words. */
/** A method by its number, its id, or words of its label that fit one method only. */
function pickMethod(choices: string[], ids: string[], given: string): number | undefined {
  const byId = ids.indexOf(given.trim().toLowerCase());
  if (byId >= 0) return byId;
  const n = Number(given);
  if (/^\d+$/.test(given) && n >= 1 && n <= choices.length) return n - 1;
  const words = given.toLowerCase().split(/\s+/).filter(Boolean);
  const matches = choices
    .map((label, i) => ({ label: label.toLowerCase(), i }))
    .filter(({ label }) => words.every((w) => label.includes(w)));
  return matches.length === 1 ? matches[0]!.i : undefined;
}

async function logout(
  store: CredentialStore,
  parsed: Parsed,
  io: Output,
  lines: LineReader,
): Promise<number> {
  const stored = store.list();
  let provider = parsed.provider;
  if (provider === undefined) {
    if (stored.length === 0) {
      io.out(`No credentials are stored in ${store.path}.\n`);
      return 0;
    }
    const listing = stored.map((c) => `  ${describe(c)}\n`).join("");
    if (!terminal()) {
      io.err(`knightcode logout: name the provider: knightcode logout <provider>\n${listing}`);
      return 2;
    }
    io.err(`Stored credentials:\n${listing}`);
    provider = (await lines.ask("Remove which provider's? ", new AbortController().signal))?.trim();
    if (!provider) return 1;
  }
  if (!store.remove(provider)) {
    io.err(`knightcode logout: no credential is stored for "${provider}" in ${store.path}\n`);
    return 1;
  }
  io.err(
    `Signed out of ${provider}: its credential was removed from ${store.path} (a key in the environment or models.json still applies)\n`,
  );
  return 0;
}

/**
 * Lines from stdin, one question at a time. At the end of input a question resolves undefined (the person gave up
 * in a terminal; a pipe has no more answers), except a piped question that races something else (`racing`: a
 * pasted code against the browser's answer), which stays open so the sign-in keeps waiting for the browser or the
 * device approval, whose own time limits end it.
 */
class LineReader {
  private rl: Interface | undefined;
  private buffered: string[] = [];
  private waiting: ((line: string | undefined) => void) | undefined;
  private ended = false;
  private waitingRaces = false;

  private open(): void {
    if (this.rl) return;
    this.rl = createInterface({ input: process.stdin, terminal: false });
    this.rl.on("line", (line) => {
      const waiter = this.waiting;
      this.waiting = undefined;
      if (waiter) waiter(line);
      else this.buffered.push(line);
    });
    this.rl.on("close", () => {
      this.ended = true;
      const waiter = this.waiting;
      this.waiting = undefined;
      if (waiter && (process.stdin.isTTY || !this.waitingRaces)) waiter(undefined);
    });
  }

  ask(prompt: string, signal: AbortSignal, secret = false, racing = false): Promise<string | undefined> {
    if (signal.aborted) return Promise.resolve(undefined);
    if (secret && process.stdin.isTTY) return readSecret(prompt, signal);
    process.stderr.write(prompt);
    this.open();
    const ready = this.buffered.shift();
    if (ready !== undefined) return Promise.resolve(ready);
    if (this.ended) {
      if (process.stdin.isTTY || !racing) return Promise.resolve(undefined);
      // Resolved by the signal only: the race's other side ends it.
      return new Promise((resolve) =>
        signal.addEventListener("abort", () => resolve(undefined), { once: true }),
      );
    }
    return new Promise((resolve) => {
      const onAbort = () => {
        if (this.waiting === settle) this.waiting = undefined;
        resolve(undefined);
      };
      const settle = (line: string | undefined) => {
        signal.removeEventListener("abort", onAbort);
        resolve(line);
      };
      this.waiting = settle;
      this.waitingRaces = racing;
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** All of stdin (`--with-api-key`). */
  async readAll(): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString("utf8");
  }

  close(): void {
    this.rl?.close();
  }
}

/** A line typed in the terminal without echo; ctrl-c or esc gives up. */
function readSecret(prompt: string, signal: AbortSignal): Promise<string | undefined> {
  const stdin = process.stdin;
  process.stderr.write(prompt);
  return new Promise((resolve) => {
    let text = "";
    const finish = (value: string | undefined) => {
      stdin.off("data", onData);
      signal.removeEventListener("abort", onAbort);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write("\n");
      resolve(value);
    };
    const onAbort = () => finish(undefined);
    const onData = (data: Buffer) => {
      for (const ch of data.toString("utf8")) {
        if (ch === "\r" || ch === "\n") return finish(text);
        if (ch === "\u0003" || ch === "\u001b") return finish(undefined);
        if (ch === "\u007f" || ch === "\b") text = text.slice(0, -1);
        else if (ch >= " ") text += ch;
      }
    };
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on("data", onData);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
