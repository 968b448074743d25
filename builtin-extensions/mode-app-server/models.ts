/**
 * Models as an editor offers them: `model/list` (the usable ones, with their limits and thinking levels), a
 * thread's model and thinking level changed between turns (`thread/settings/update`, or `model` and `effort` on
 * `turn/start`), and the warning `thread/start` answers with when the thread has no model it can use.
 *
 * Usable means a request would carry what the provider needs: a key (from the environment or auth.json, which is
 * also where a subscription sign-in keeps it), or no key at all (a local server, a virtual model); a model the
 * signed-in account lacks (`ProviderConfig.usableModels`) is not usable (`getApiKeyAndHeaders` says why). The scripted
 * provider, a test double, is listed only when it is the model in use.
 */
import type { ModelInfo, ModelRuntime, ThinkingLevel } from "@knightcodeai/cli/kit";
import { invalidParams } from "./errors.js";

/** The scripted provider's name (builtin:scripted): a test double, never offered unless it is in use. */
const SCRIPTED_PROVIDER = "scripted";

export const THINKING_LEVELS: readonly ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh"];

export interface ListedModel {
  id: string;
  provider: string;
  model: string;
  displayName: string;
  contextWindow: number;
  maxTokens: number;
  reasoning: boolean;
  supportedEfforts: ThinkingLevel[];
  auth: "key" | "none" | "missing";
  missingKey?: string;
  usable: boolean;
  isDefault: boolean;
  current: boolean;
}

export function modelRef(model: Pick<ModelInfo, "provider" | "id">): string {
  return `${model.provider}/${model.id}`;
}

/**
 * The thinking levels a model takes: its own list where it has one (a catalogue model's level map, a routed
 * model's levels), else all of them for a reasoning model (providers map the top ones down), else off. pi's `max`
 * is not a level of this protocol and is left out.
 */
export function effortsOf(runtime: ModelRuntime | undefined, model: ModelInfo): ThinkingLevel[] {
  if (!runtime) return model.reasoning ? [...THINKING_LEVELS] : ["off"];
  const levels = runtime.thinkingLevels(model).filter((l): l is ThinkingLevel => l !== "max");
  return levels.length > 0 ? levels : ["off"];
}

async function describe(
  runtime: ModelRuntime,
  model: ModelInfo,
  inUse: ModelInfo | undefined,
  fallback: ModelInfo | undefined,
): Promise<ListedModel> {
  const same = (other: ModelInfo | undefined) =>
    other !== undefined && other.provider === model.provider && other.id === model.id;
  const current = same(inUse);
  let auth: ListedModel["auth"] = "none";
  let missingKey: string | undefined;
  if (model.provider !== "virtual") {
    const resolved = await runtime.getApiKeyAndHeaders(model);
    // A key the provider names but nobody set makes the model unusable, whatever headers the provider always
    // sends (GitHub Copilot's editor headers); headers alone are credentials only when no key is missing.
    if (!resolved.ok) auth = "missing";
    else if (resolved.apiKey) auth = "key";
    else if (resolved.missingKey) {
      auth = "missing";
      missingKey = resolved.missingKey;
    } else if (resolved.headers) auth = "key";
  }
  const usable = auth !== "missing" && (model.provider !== SCRIPTED_PROVIDER || current || same(fallback));
  return {
    id: modelRef(model),
    provider: model.provider,
    model: model.id,
    displayName: model.name ?? model.id,
    contextWindow: model.contextWindow,
    maxTokens: model.maxTokens,
    reasoning: model.reasoning,
    supportedEfforts: effortsOf(runtime, model),
    auth,
    ...(missingKey !== undefined ? { missingKey } : {}),
    usable,
    isDefault: same(fallback),
    current,
  };
}

/**
 * Every model the runtime knows, described. `inUse` is the thread's model, `fallback` the one a new thread gets
 * (the server session's, from the settings).
 */
export async function listModels(
  runtime: ModelRuntime,
  inUse: ModelInfo | undefined,
  fallback: ModelInfo | undefined,
): Promise<ListedModel[]> {
  return Promise.all(runtime.getAvailable().map((m) => describe(runtime, m, inUse, fallback)));
}

/** What to tell a client whose thread has no usable model: what to configure. Undefined when all is well. */
export async function modelWarning(
  runtime: ModelRuntime | undefined,
  model: ModelInfo | undefined,
  agentDir: string,
): Promise<string | undefined> {
  const configure =
    `set ANTHROPIC_API_KEY or OPENAI_API_KEY, add a provider to ${agentDir}/models.json, ` +
    "or set defaultProvider and defaultModel in settings.json";
  if (!model) {
    const usable = runtime ? (await listModels(runtime, undefined, undefined)).filter((m) => m.usable) : [];
    if (usable.length === 0) return `No usable model is configured: turns will fail until you ${configure}`;
    return `No model is selected for this thread: pick one with thread/settings/update (model/list lists ${usable.length} usable)`;
  }
  if (!runtime) return undefined;
  const listed = await describe(runtime, model, model, undefined);
  if (listed.auth !== "missing") return undefined;
  return listed.missingKey
    ? `The model ${listed.id} has no key: set ${listed.missingKey} (or sign in), or pick another with thread/settings/update`
    : `The model ${listed.id} cannot be used (its provider is not registered): ${configure}`;
}

/** Finds a usable model by `provider/id` or a bare id; refuses with `invalidParams` (`reason: "model"`) otherwise. */
export async function pickModel(
  runtime: ModelRuntime,
  ref: string,
  inUse: ModelInfo | undefined,
  fallback: ModelInfo | undefined,
): Promise<ModelInfo> {
  const slash = ref.indexOf("/");
  const all = runtime.getAvailable();
  const matches =
    slash > 0
      ? all.filter((m) => m.provider === ref.slice(0, slash) && m.id === ref.slice(slash + 1))
      : all.filter((m) => m.id === ref);
  const listed = await Promise.all(matches.map((m) => describe(runtime, m, inUse, fallback)));
  const usable = matches.filter((_m, i) => listed[i]?.usable);
  if (usable.length === 1) return usable[0]!;
  if (usable.length > 1)
    throw invalidParams(
      `"${ref}" names several models (${usable.map(modelRef).join(", ")}); use provider/id`,
      {
        reason: "model",
      },
    );
  const refused = listed[0];
  if (refused?.missingKey)
    throw invalidParams(`The model ${refused.id} has no key: set ${refused.missingKey}`, { reason: "model" });
  if (refused) {
    // Why, when the runtime says (a provider that is not registered, a model the signed-in account lacks).
    const resolved = await runtime.getApiKeyAndHeaders(matches[0]!);
    const why = resolved.ok ? "" : `: ${resolved.error}`;
    throw invalidParams(`The model ${refused.id} cannot be used here${why}`, { reason: "model" });
  }
  const offered = (await listModels(runtime, inUse, fallback)).filter((m) => m.usable).map((m) => m.id);
  throw invalidParams(
    `Unknown model "${ref}". Usable: ${offered.slice(0, 20).join(", ") || "none"}${offered.length > 20 ? ", ..." : ""}`,
    { reason: "model" },
  );
}

/** Refuses a thinking level the model does not take (`invalidParams`, `reason: "effort"`). */
export function checkEffort(
  runtime: ModelRuntime | undefined,
  model: ModelInfo | undefined,
  effort: ThinkingLevel,
): void {
  const levels = model ? effortsOf(runtime, model) : [...THINKING_LEVELS];
  if (!levels.includes(effort))
    throw invalidParams(
      `${model ? modelRef(model) : "The model"} takes the thinking levels ${levels.join(", ")}, not "${effort}"`,
      { reason: "effort" },
    );
}
