/**
 * What stops a run that would otherwise go on for ever. A model that answers every request with the same
 * malformed tool call gets the same error back each time and tries again; one that makes the same successful call
 * on every request learns nothing new either. Two streaks count, each reaching `doomLoop.threshold`: the same call
 * (same tool, same arguments) failing in that many turns in a row, whatever else those turns did, and the same call
 * made that many times in a row, failing or not, with no other call between. Then a session without a UI ends the
 * run with an error and one with a UI asks the person whether to go on. `maxTurns` (the CLI's `--max-turns`) ends a run that wants
 * another turn after that many. One guard watches one prompt's run, across its retries and continuations.
 */
import type { ExtensionContext, ToolCall } from "../../kernel/index.js";
import type { DoomLoopSettings } from "../settings/settings.js";
import type { ToolOutcome } from "./tool-runner.js";

export interface LoopGuardConfig {
  doomLoop(): DoomLoopSettings;
  maxTurns: number | undefined;
  context(): ExtensionContext;
}

/** Longest argument text an error message quotes. */
const QUOTE_LIMIT = 200;

export class LoopGuard {
  private turns = 0;
  /** Turns in a row each failing call (by its key) failed in. */
  private streaks = new Map<string, number>();
  /** The last call made (by its key) and how many times in a row it was made. */
  private repeated: { key: string; count: number } | undefined;

  constructor(private readonly config: LoopGuardConfig) {}

  /**
   * Called after a turn that another turn will follow, with the turn's calls and their outcomes. Resolves the
   * error that ends the run, or undefined to go on. May ask the person (the dialog closes when `signal` aborts).
   */
  async beforeNextTurn(
    calls: readonly ToolCall[],
    outcomes: readonly ToolOutcome[],
    signal: AbortSignal,
  ): Promise<string | undefined> {
    this.turns++;
    const looping = this.watch(calls, outcomes);
    if (looping) {
      const stop = await this.decide(looping, signal);
      if (stop) return stop;
    }
    const max = this.config.maxTurns;
    if (max !== undefined && this.turns >= max) {
      return `Stopped after ${max} turn${max === 1 ? "" : "s"}: the run reached its turn limit (--max-turns ${max}) and still wanted to go on.`;
    }
    return undefined;
  }

  /** Updates the streaks; the call that reached the threshold, if one did. */
  private watch(calls: readonly ToolCall[], outcomes: readonly ToolOutcome[]): Looping | undefined {
    const settings = this.config.doomLoop();
    if (!settings.enabled) return undefined;
    const failedNow = new Map<string, { call: ToolCall; error: string }>();
    for (const outcome of outcomes) {
      if (!outcome.isError) continue;
      const call = calls.find((c) => c.id === outcome.toolCallId);
      if (!call) continue;
      failedNow.set(callKey(call), { call, error: resultText(outcome) });
    }
    const streaks = new Map<string, number>();
    let looping: Looping | undefined;
    for (const [key, failure] of failedNow) {
      const count = (this.streaks.get(key) ?? 0) + 1;
      streaks.set(key, count);
      if (count >= settings.threshold && !looping) looping = { ...failure, count, failed: true };
    }
    this.streaks = streaks;
    for (const call of calls) {
      const key = callKey(call);
      const count = this.repeated?.key === key ? this.repeated.count + 1 : 1;
      this.repeated = { key, count };
      if (count >= settings.threshold && !looping) {
        const outcome = outcomes.find((o) => o.toolCallId === call.id);
        looping = {
          call,
          error: outcome ? resultText(outcome) : "",
          count,
          failed: outcome?.isError === true,
        };
      }
    }
    return looping;
  }

  private async decide(looping: Looping, signal: AbortSignal): Promise<string | undefined> {
    const what = `${looping.call.name} ${clip(stableJson(looping.call.arguments))}`;
    const summary = looping.failed
      ? `The same tool call failed ${looping.count} times in a row: ${what} (${clip(looping.error)})`
      : `The same tool call was made ${looping.count} times in a row with the same arguments: ${what}`;
    const ctx = this.config.context();
    if (!ctx.hasUI) {
      return `${summary}. The run was stopped so the model does not repeat it for ever; the doomLoop settings change this.`;
    }
    const goOn = await ctx.ui.confirm(
      looping.failed
        ? "The model keeps repeating a failing tool call"
        : "The model keeps repeating the same tool call",
      `${summary}. Let it go on?`,
      { signal },
    );
    if (signal.aborted) return undefined;
    if (!goOn) return `${summary}. Stopped at your request.`;
    // Asked again only once the call has been repeated as many times more.
    this.streaks.delete(callKey(looping.call));
    this.repeated = undefined;
    return undefined;
  }
}

/** A call that reached the threshold: how often, and whether its last result was an error. */
interface Looping {
  call: ToolCall;
  error: string;
  count: number;
  failed: boolean;
}

function callKey(call: ToolCall): string {
  return `${call.name}\u0000${stableJson(call.arguments)}`;
}

/** JSON with object keys sorted, so arguments that differ only in key order count as the same. */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : v,
  );
}

function resultText(outcome: ToolOutcome): string {
  return outcome.result.content
    .map((c) => (c.type === "text" ? c.text : `[${c.type}]`))
    .join(" ")
    .trim();
}

function clip(text: string): string {
  const flat = text.replace(/\s+/g, " ");
  return flat.length > QUOTE_LIMIT ? `${flat.slice(0, QUOTE_LIMIT)}…` : flat;
}
