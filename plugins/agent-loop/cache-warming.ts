/**
 * Idle prompt-cache refreshes. While a session is idle its provider's prompt cache expires; a refresh re-sends the
 * last request for one output token, so the next prompt hits the cache. Before each refresh the
 * `cache_warming_decision` handlers are asked (the last to answer wins); without an answer the `cacheWarming`
 * settings decide. Refreshes stop after `maxRefreshes` per idle period, after a failed refresh, and when a run
 * starts or the session goes away.
 */
import type { AssistantMessageStream, ExtensionContext, HookBus, ModelInfo } from "../../kernel/index.js";
import type { ModelRequest } from "../model-registry/model-service.js";
import type { CacheWarmingSettings } from "../settings/settings.js";

/** Custom entry type recording each refresh and its usage. */
export const CACHE_WARMING_ENTRY = "knightcode.cacheWarming";

export interface CacheWarmerConfig {
  bus: HookBus;
  context(): ExtensionContext;
  /** Absent settings turn refreshes off. */
  settings(): CacheWarmingSettings | undefined;
  model(): ModelInfo | undefined;
  /** True while a run is in progress. */
  busy(): boolean;
  /** False once the session stops taking requests (shutting down, disposed). */
  ready(): boolean;
  /** The last request again (system prompt, active branch, tools), without a signal or a token bound. */
  lastRequest(model: ModelInfo): ModelRequest;
  stream(request: ModelRequest): AssistantMessageStream;
  record(customType: string, data: unknown): void;
}

export class CacheWarmer {
  private timer: NodeJS.Timeout | undefined;
  private idleSince = 0;
  private refreshes = 0;

  constructor(private readonly config: CacheWarmerConfig) {}

  /** The session went idle after a run: refreshes may begin. */
  idle(): void {
    this.idleSince = Date.now();
    this.schedule();
  }

  /** A run starts: the pending refresh is dropped and the next idle period counts from zero. */
  runStarted(): void {
    this.cancel();
    this.refreshes = 0;
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    this.cancel();
    const settings = this.config.settings();
    if (!settings || !this.config.model() || this.refreshes >= settings.maxRefreshes) return;
    this.timer = setTimeout(() => void this.refresh(settings), settings.intervalMs);
    // A refresh is worth having, not worth keeping the process alive for.
    this.timer.unref();
  }

  private async refresh(settings: CacheWarmingSettings): Promise<void> {
    this.timer = undefined;
    const { bus, context } = this.config;
    const model = this.config.model();
    if (!model || this.config.busy() || !this.config.ready()) return;
    const decision = await bus.lastWins(
      "cache_warming_decision",
      { idleMs: Date.now() - this.idleSince, model },
      context(),
    );
    const action = decision?.action ?? (settings.enabled ? "warm" : "stop");
    if (action !== "warm" || this.config.busy() || !this.config.ready()) return;
    this.refreshes++;
    const result = await this.config.stream({ ...this.config.lastRequest(model), maxTokens: 1 }).result();
    // The request was made, so its usage is recorded even if a run started meanwhile; that run's end
    // schedules the next refresh.
    if (!this.config.ready()) return;
    this.config.record(CACHE_WARMING_ENTRY, {
      provider: result.provider,
      model: result.model,
      usage: result.usage,
      ...(result.errorMessage ? { error: result.errorMessage } : {}),
    });
    if (result.stopReason !== "error" && !this.config.busy()) this.schedule();
  }
}
