/**
 * First run and models: what the first screen says without a model, `/login` and `/logout` (provider keys in
 * auth.json), `/scoped-models` (the `enabledModels` the cycling keys go through). `/model` itself is in
 * commands.ts; it offers the same usable models.
 */
import type { SessionController, UsableModel } from "@knightcodeai/cli/kit";
import { errorMessage } from "@knightcodeai/cli/kit";
import type { App } from "./app.js";

/** The setting `/scoped-models` saves (pi's name for it). */
export const SCOPED_MODELS_SETTING = "enabledModels";

const name = (m: UsableModel) => `${m.model.provider}/${m.model.id}`;

/**
 * What the first screen says when the session has no model: how to get one, naming the real files; or, when some
 * can be used already, how to pick one.
 */
export function noModelLines(session: SessionController): string[] {
  const usable = session.getUsableModels();
  if (usable.length > 0) {
    const some = usable.slice(0, 3).map(name).join(", ");
    return [
      `No model selected. ${usable.length} can be used (${some}${usable.length > 3 ? ", …" : ""}):`,
      "/model picks one; ctrl+p cycles through them.",
    ];
  }
  const dir = session.agentDir;
  return [
    "No model yet. To start, do one of these:",
    `  /login            sign in with a Claude or ChatGPT subscription, or store an API key, in ${dir}/auth.json`,
    "  set ANTHROPIC_API_KEY, OPENAI_API_KEY or GEMINI_API_KEY and start again",
    `  add a local server (llama.cpp, Ollama, vLLM) to ${dir}/models.json (see docs/providers.md)`,
    "Then /model picks the model.",
  ];
}

/** The items of a model picker: each usable model with why it can be used. */
export function modelItems(usable: UsableModel[]): { value: string; label: string; description: string }[] {
  return usable.map((u) => ({
    value: name(u),
    label: name(u),
    description: `${u.model.name ? `${u.model.name} · ` : ""}${u.access}`,
  }));
}

/** `/login [provider]`: stores a provider's API key (or runs one of its login methods) in auth.json. */
export async function login(app: App, args: string): Promise<void> {
  const store = app.session.credentials;
  const providers = store.providers();
  let provider = args.trim();
  if (provider && !providers.includes(provider)) {
    app.notice(`No provider "${provider}"; /login lists them (${providers.join(", ")})`, "error");
    return;
  }
  if (!provider) {
    const stored = new Set(store.list().map((c) => c.provider));
    const picked = await app.ui.pick(
      "Sign in to which provider?",
      providers.map((p) => ({
        value: p,
        label: p,
        ...(stored.has(p) ? { description: "a key is stored; a new one replaces it" } : {}),
      })),
      { filterable: providers.length > 8 },
    );
    if (!picked) return;
    provider = picked;
  }
  const methods = store.loginMethods(provider);
  let method = "api-key";
  if (methods.length > 0) {
    const picked = await app.ui.pick(`Sign in to ${provider}`, [
      ...methods.map((m, i) => ({ value: String(i), label: m.label })),
      { value: "api-key", label: "API key", description: `paste a key; saved in ${store.path}` },
    ]);
    if (!picked) return;
    method = picked;
  }
  try {
    if (method === "api-key") {
      const key = await app.ui.secret(
        `API key for ${provider}`,
        `saved in ${store.path}, readable only by you`,
      );
      if (key === undefined) return;
      if (!key.trim()) {
        app.notice("No key typed; nothing was saved", "warning");
        return;
      }
      store.saveApiKey(provider, key.trim());
    } else {
      const chosen = methods[Number(method)]!;
      const credential = await chosen.login({
        // A sign-in takes its question away (`signal`) when the browser answers first.
        input: (title, options) =>
          options?.secret
            ? app.ui.secret(title, options.placeholder)
            : app.ui.input(title, options?.placeholder, options?.signal ? { signal: options.signal } : {}),
        notify: (message) => app.notice(message, "info"),
      });
      if (!credential) return;
      store.save(provider, credential);
    }
  } catch (error) {
    app.notice(`Not saved: ${errorMessage(error)}`, "error");
    return;
  }
  const models = app.session.getUsableModels().filter((u) => u.model.provider === provider);
  let chosen = "";
  if (!app.session.getState().model && models[0]) {
    chosen = (await app.session.setModel(provider, models[0].model.id)) ? `; model ${name(models[0])}` : "";
  }
  const saved = store.list().find((c) => c.provider === provider);
  const what = saved?.type === "oauth" ? "sign-in" : "key";
  const masked = saved?.masked ? ` (${saved.masked})` : "";
  app.notice(`Signed in to ${provider}${masked}: ${what} saved in ${store.path}${chosen}`, "muted");
}

/** `/logout [provider]`: removes a stored credential from auth.json. */
export async function logout(app: App, args: string): Promise<void> {
  const store = app.session.credentials;
  const stored = store.list();
  if (stored.length === 0) {
    app.notice(`No key is stored in ${store.path}`, "muted");
    return;
  }
  let provider: string | undefined = args.trim();
  if (!provider) {
    provider = await app.ui.pick(
      "Remove the stored key of which provider?",
      stored.map((c) => ({
        value: c.provider,
        label: c.provider,
        description: `${c.type}${c.masked ? ` ${c.masked}` : ""}`,
      })),
    );
    if (!provider) return;
  }
  try {
    if (!store.remove(provider)) {
      app.notice(`No key is stored for "${provider}" in ${store.path}`, "error");
      return;
    }
  } catch (error) {
    app.notice(`Not removed: ${errorMessage(error)}`, "error");
    return;
  }
  const env = ` (a key in the environment or models.json still applies)`;
  app.notice(`Removed the key of ${provider} from ${store.path}${env}`, "muted");
}

/**
 * `/scoped-models`: choose the models the cycling keys go through, saved as `enabledModels` in settings.json.
 * Enter toggles a model; "Save" keeps the choice, esc leaves the setting as it was.
 */
export async function scopedModels(app: App): Promise<void> {
  const usable = app.session.getUsableModels();
  if (usable.length === 0) {
    app.notice("No model can be used yet: /login stores a key", "warning");
    return;
  }
  const saved = app.host?.settings.read().get(SCOPED_MODELS_SETTING);
  const scoped = new Set(app.session.getScopedModels().map(name));
  // Unset means all: start from none ticked, so ticking one narrows the keys to it.
  if (!Array.isArray(saved) || saved.length === 0) scoped.clear();
  let initial: string | undefined;
  for (;;) {
    const picked = await app.ui.pick(
      "Models the cycling keys go through (enter ticks; none ticked: all)",
      [
        {
          value: "\0save",
          label: "Save",
          description: app.host ? "in settings.json" : "not saved by this host",
        },
        ...usable.map((u) => ({
          value: name(u),
          label: `${scoped.has(name(u)) ? "[x]" : "[ ]"} ${name(u)}`,
          description: u.access,
        })),
      ],
      { ...(initial ? { initial } : {}), maxVisible: 12 },
    );
    if (!picked) return;
    if (picked !== "\0save") {
      if (!scoped.delete(picked)) scoped.add(picked);
      initial = picked;
      continue;
    }
    const value = scoped.size > 0 ? usable.map(name).filter((n) => scoped.has(n)) : undefined;
    if (!app.host) {
      app.notice("Not saved: this host keeps no settings", "warning");
      return;
    }
    try {
      app.host.settings.write({ scope: "global", key: SCOPED_MODELS_SETTING, value });
    } catch (error) {
      app.notice(`Not saved: ${errorMessage(error)}`, "error");
      return;
    }
    app.notice(
      value ? `Cycling through ${value.length}: ${value.join(", ")}` : "Cycling through every usable model",
      "muted",
    );
    return;
  }
}
