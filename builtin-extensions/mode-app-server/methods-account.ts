/**
 * Provider credentials from a client (`account/*`, Codex's family for many providers): read them masked, store an
 * API key, run a provider's sign-in method, cancel it, remove a credential. Everything goes through the server's
 * own session's credential store (`SessionController.credentials`, auth.json), the one `knightcode login` uses.
 *
 * A sign-in runs the provider's `ProviderLoginMethod.login(io)` after the `account/login/start` response is
 * written: `io.notify` becomes `account/login/progress` and `io.input` a `ui/dialog` (with `loginId` instead of
 * `threadId`) to the connection that started it; the end is `account/login/completed` to every client, then
 * `account/updated` when something was stored. One sign-in per provider at a time; the initiator disconnecting
 * or `account/login/cancel` aborts it (`io.signal`).
 */
import { randomUUID } from "node:crypto";
import {
  type CredentialStore,
  errorMessage,
  type ProviderLoginIO,
  type ProviderLoginMethod,
} from "@knightcodeai/cli/kit";
import type { Connection } from "./connection.js";
import { installMethods, type MethodRow, method, type ServerContext } from "./context.js";
import { AppServerError, invalidParams } from "./errors.js";
import type { NotificationName } from "./protocol.js";
import type { AppServer } from "./server.js";

type CredentialWire = { type: string; masked?: string; expires?: number };

/** A sign-in running for one provider. */
interface RunningLogin {
  id: string;
  provider: string;
  connection: Connection;
  controller: AbortController;
}

/** The server's running sign-ins, by id and by provider. */
class Logins {
  readonly byId = new Map<string, RunningLogin>();
  readonly byProvider = new Map<string, RunningLogin>();

  add(login: RunningLogin): void {
    this.byId.set(login.id, login);
    this.byProvider.set(login.provider, login);
  }

  delete(login: RunningLogin): void {
    if (this.byId.get(login.id) === login) this.byId.delete(login.id);
    if (this.byProvider.get(login.provider) === login) this.byProvider.delete(login.provider);
  }
}

function credentialsOf(ctx: ServerContext): CredentialStore {
  const store = ctx.session?.credentials;
  if (!store)
    throw new AppServerError("internal", "This server has no session of its own to keep credentials with");
  return store;
}

function credentialWire(store: CredentialStore, provider: string): CredentialWire {
  const stored = store.list().find((c) => c.provider === provider);
  if (!stored) return { type: "none" };
  return {
    type: stored.type,
    ...(stored.masked !== undefined ? { masked: stored.masked } : {}),
    ...(stored.expires !== undefined ? { expires: stored.expires } : {}),
  };
}

/**
 * Whether a provider takes an API key: one that names a key does, and so does one with sign-in methods (what they
 * store is a key too); a provider with neither (a local server) takes none.
 */
function acceptsApiKey(store: CredentialStore, provider: string): boolean {
  return store.keyStatus(provider)?.needsKey !== false || store.loginMethods(provider).length > 0;
}

/** The first http(s) URL of a message, without the punctuation that ends a sentence. */
export function urlIn(message: string): string | undefined {
  const found = message.match(/https?:\/\/[^\s"'<>]+/);
  return found?.[0].replace(/[.,;:!?)\]]+$/, "");
}

function broadcast(ctx: ServerContext, name: NotificationName, params: Record<string, unknown>): void {
  for (const connection of ctx.threads.connections)
    if (connection.initialized && !connection.closed) connection.notify(name, params);
}

function requireProvider(store: CredentialStore, provider: string): void {
  const known = store.providers();
  if (!known.includes(provider))
    throw invalidParams(`No provider "${provider}" (known: ${known.join(", ") || "none"})`, {
      reason: "provider",
      provider,
    });
}

/**
 * A question of the sign-in, as a `ui/dialog` input to the connection that started it. `{}` declines it. An error
 * reply (a client that handles no dialogs) declines a plain question too, but leaves one that races something else
 * (its own signal: the paste prompt beside the browser, the device code's wait) open until that ends it, as a
 * piped stdin's end does for `knightcode login`.
 */
function ask(
  login: RunningLogin,
  title: string,
  options: { secret?: boolean; placeholder?: string; signal?: AbortSignal } | undefined,
): Promise<string | undefined> {
  const signal = options?.signal
    ? AbortSignal.any([login.controller.signal, options.signal])
    : login.controller.signal;
  if (signal.aborted || login.connection.closed) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let requestId: string | undefined;
    const finish = (value: string | undefined) => {
      signal.removeEventListener("abort", onAbort);
      resolve(value);
    };
    const onAbort = () => {
      // Taken away (the browser answered first, a cancel): withdrawn from the client, if it is still asked.
      if (requestId !== undefined) login.connection.withdraw(requestId);
      finish(undefined);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    requestId = login.connection.request(
      "ui/dialog",
      {
        loginId: login.id,
        kind: "input",
        title,
        ...(options?.placeholder !== undefined ? { placeholder: options.placeholder } : {}),
        ...(options?.secret ? { secret: true } : {}),
      },
      ({ result, error }) => {
        requestId = undefined;
        const racing = options?.signal !== undefined && options.signal !== login.controller.signal;
        if (error !== undefined && racing) return;
        const value = (result as { value?: unknown } | undefined)?.value;
        finish(typeof value === "string" ? value : undefined);
      },
    );
  });
}

/** Runs a sign-in to its end: the credential stored, then `account/login/completed` and `account/updated`. */
async function run(
  ctx: ServerContext,
  logins: Logins,
  store: CredentialStore,
  login: RunningLogin,
  method: ProviderLoginMethod,
): Promise<void> {
  const { connection, controller, provider } = login;
  const onClose = () => controller.abort();
  // Gone already (between the response and now): the sign-in ends at once instead of waiting for nobody.
  if (connection.closed) controller.abort();
  else connection.onClose.push(onClose);
  const io: ProviderLoginIO = {
    notify: (message) => {
      const url = urlIn(message);
      if (!controller.signal.aborted)
        connection.notify("account/login/progress", {
          loginId: login.id,
          provider,
          message,
          ...(url ? { url } : {}),
        });
    },
    input: (title, options) => ask(login, title, options),
    signal: controller.signal,
  };
  let error: string | undefined;
  try {
    const credential = await method.login(io);
    if (controller.signal.aborted) error = "The sign-in was cancelled; nothing was saved";
    else if (!credential) error = "The sign-in was given up; nothing was saved";
    else store.save(provider, credential);
  } catch (failure) {
    error = controller.signal.aborted
      ? "The sign-in was cancelled; nothing was saved"
      : errorMessage(failure);
  } finally {
    logins.delete(login);
    const at = connection.onClose.indexOf(onClose);
    if (at >= 0) connection.onClose.splice(at, 1);
  }
  broadcast(ctx, "account/login/completed", {
    loginId: login.id,
    provider,
    success: error === undefined,
    ...(error !== undefined ? { error } : {}),
  });
  if (error === undefined)
    broadcast(ctx, "account/updated", { provider, credential: credentialWire(store, provider) });
}

function accountMethods(logins: Logins): MethodRow[] {
  return [
    method("account/read", (ctx) => {
      const store = credentialsOf(ctx);
      const providers = store.providers().map((provider) => {
        const status = store.keyStatus(provider);
        const needsKey = status?.needsKey ?? true;
        const running = logins.byProvider.get(provider);
        return {
          provider,
          credential: credentialWire(store, provider),
          needsKey,
          acceptsApiKey: acceptsApiKey(store, provider),
          ...(status?.keyVariable !== undefined ? { keyVariable: status.keyVariable } : {}),
          ...(status?.source !== undefined ? { keySource: status.source } : {}),
          loginMethods: store.loginMethods(provider).map((m) => ({ id: m.id, label: m.label })),
          ...(running ? { loginInProgress: running.id } : {}),
        };
      });
      return { providers, path: store.path };
    }),

    method("account/login/start", (ctx, params, call) => {
      const store = credentialsOf(ctx);
      const { provider } = params;
      requireProvider(store, provider);
      if ((params.apiKey === undefined) === (params.method === undefined))
        throw invalidParams(
          "Give either apiKey (to store a key) or method (to sign in), not both or neither",
          {
            reason: "params",
          },
        );
      const running = logins.byProvider.get(provider);
      if (running)
        throw new AppServerError(
          "loginInProgress",
          `A sign-in to ${provider} is already running (loginId ${running.id}): wait for account/login/completed or cancel it with account/login/cancel`,
          { provider, loginId: running.id },
        );
      if (params.apiKey !== undefined) {
        if (!acceptsApiKey(store, provider))
          throw invalidParams(`${provider} takes no key: its models are usable without one`, {
            reason: "apiKey",
          });
        const key = params.apiKey.trim();
        if (key === "") throw invalidParams("The API key is empty; nothing was saved", { reason: "apiKey" });
        store.saveApiKey(provider, key);
        call.afterResponse(() =>
          broadcast(ctx, "account/updated", { provider, credential: credentialWire(store, provider) }),
        );
        return { type: "apiKey" as const };
      }
      const methods = store.loginMethods(provider);
      const chosen = methods.find((m) => m.id === params.method);
      if (!chosen)
        throw invalidParams(
          methods.length === 0
            ? `${provider} has no sign-in method; store an API key with {provider, apiKey}`
            : `${provider} has no sign-in method "${params.method}" (its methods: ${methods.map((m) => m.id).join(", ")})`,
          { reason: "method", methods: methods.map((m) => m.id) },
        );
      const login: RunningLogin = {
        id: randomUUID(),
        provider,
        connection: call.connection,
        controller: new AbortController(),
      };
      logins.add(login);
      // Started once the response is written, so the client knows the loginId its progress and dialogs carry.
      call.afterResponse(() => {
        void run(ctx, logins, store, login, chosen).catch((error) =>
          ctx.log(`account/login/start (${provider}): ${errorMessage(error)}`),
        );
      });
      return { type: "signIn" as const, loginId: login.id };
    }),

    method("account/login/cancel", (_ctx, params) => {
      const login = logins.byId.get(params.loginId);
      if (!login) return { status: "notFound" as const };
      login.controller.abort();
      return { status: "cancelled" as const };
    }),

    method("account/logout", (ctx, params, call) => {
      const store = credentialsOf(ctx);
      const { provider } = params;
      // A credential of a provider no extension registers any more can still be removed.
      if (!store.list().some((c) => c.provider === provider)) requireProvider(store, provider);
      const removed = store.remove(provider);
      if (removed)
        call.afterResponse(() =>
          broadcast(ctx, "account/updated", { provider, credential: { type: "none" } }),
        );
      return { removed };
    }),
  ];
}

export function registerAccountMethods(server: AppServer): void {
  installMethods(server, accountMethods(new Logins()));
}
