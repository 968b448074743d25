/**
 * Moving the active leaf within one session file (`ctx.navigateTree()`, the SDK handle, RPC `navigate_tree`,
 * `/tree`). The next entry then starts a sibling branch; the branch that was left stays in the file.
 *
 * `session_before_tree` handlers may cancel, change the summariser's instructions or the label, or supply the summary
 * of the branch being left. KnightCode itself never asks a model here: the default summariser is an extension that
 * answers this event like any other, so without one a navigation with `summarize: true` writes no summary.
 */
import type {
  BranchSummaryEntry,
  ExtensionContext,
  HandlerOwner,
  HookBus,
  NavigateTreeOptions,
  SessionBeforeTreeResult,
  SessionEntry,
  TreePreparation,
} from "../../kernel/index.js";
import { KernelError } from "../../kernel/index.js";
import type { SessionLog } from "./session-log.js";

export interface TreeNavigationDeps {
  bus: HookBus;
  context: () => ExtensionContext;
  session: SessionLog;
  /** Navigation waits for the run in progress: moving the leaf under it would split its turn across branches. */
  waitForIdle: () => Promise<void>;
}

export interface TreeNavigationResult {
  cancelled: boolean;
  /** The active leaf afterwards (unchanged when cancelled). */
  leafId: string | null;
  summaryEntry?: BranchSummaryEntry;
}

/** The navigation in progress per session, so the host's abort (Ctrl+C, RPC `abort`) can stop a slow summary. */
const inProgress = new WeakMap<SessionLog, AbortController>();

/** Aborts the navigation in progress on `session` (its `session_before_tree` signal); false when there is none. */
export function abortTreeNavigation(session: SessionLog): boolean {
  const controller = inProgress.get(session);
  controller?.abort();
  return controller !== undefined;
}

export async function navigateTree(
  deps: TreeNavigationDeps,
  targetId: string,
  options: NavigateTreeOptions = {},
): Promise<TreeNavigationResult> {
  const { session } = deps;
  if (typeof targetId !== "string" || !session.getEntry(targetId)) {
    throw new KernelError("KC_ERR_UNKNOWN_ENTRY", `No entry ${String(targetId)} in this session`);
  }
  await deps.waitForIdle();
  const oldLeafId = session.getLeafId();
  if (targetId === oldLeafId) {
    // Already there: nothing moves and no event fires, but a label asked for is still set.
    if (options.label) session.appendLabel(targetId, options.label);
    return { cancelled: false, leafId: session.getLeafId() };
  }

  const preparation: TreePreparation = {
    targetId,
    oldLeafId,
    ...branchToLeave(session, oldLeafId, targetId),
    userWantsSummary: options.summarize === true,
    ...(options.customInstructions !== undefined ? { customInstructions: options.customInstructions } : {}),
    ...(options.replaceInstructions !== undefined
      ? { replaceInstructions: options.replaceInstructions }
      : {}),
    ...(options.label !== undefined ? { label: options.label } : {}),
  };
  let summaryOwner: HandlerOwner | undefined;
  const controller = new AbortController();
  inProgress.set(session, controller);
  const decision = await deps.bus
    .gate("session_before_tree", { preparation, signal: controller.signal }, deps.context(), {
      failClosed: () => ({ cancel: true }),
      // Every result is looked at here, deciding or not, so that instructions and a label a handler returns reach
      // the handlers after it (the default summariser among them) through `preparation`. A malformed summary
      // throws, which the bus reports against that extension and counts as a cancel.
      isDecision: (result, owner) => {
        if (result.cancel === true) return true;
        applyOverrides(preparation, result, owner);
        if (!preparation.userWantsSummary || result.summary === undefined) return false;
        summaryOwner = owner;
        return true;
      },
    })
    .finally(() => {
      if (inProgress.get(session) === controller) inProgress.delete(session);
    });
  // An aborted navigation stays put even if a handler still answered with a summary.
  if (decision?.cancel || controller.signal.aborted) return { cancelled: true, leafId: oldLeafId };

  session.branch(targetId);
  let summaryEntry: BranchSummaryEntry | undefined;
  const fromExtension = summaryOwner !== undefined && summaryOwner.origin !== "builtin";
  if (decision?.summary) {
    summaryEntry = session.appendBranchSummary(
      targetId,
      decision.summary.summary,
      decision.summary.details,
      fromExtension,
    ) as BranchSummaryEntry;
  }
  if (preparation.label) session.appendLabel(summaryEntry?.id ?? targetId, preparation.label);
  const leafId = session.getLeafId();
  await deps.bus.emit(
    "session_tree",
    { newLeafId: leafId, oldLeafId, ...(summaryEntry ? { summaryEntry, fromExtension } : {}) },
    deps.context(),
  );
  return { cancelled: false, leafId, ...(summaryEntry ? { summaryEntry } : {}) };
}

/** The entries of the old branch that the target's path does not share, oldest first, and where the paths meet. */
function branchToLeave(
  session: SessionLog,
  oldLeafId: string | null,
  targetId: string,
): Pick<TreePreparation, "commonAncestorId" | "entriesToSummarize"> {
  if (oldLeafId === null) return { commonAncestorId: null, entriesToSummarize: [] };
  const targetPath = new Set(session.getBranch(targetId).map((entry) => entry.id));
  const oldPath = session.getBranch(oldLeafId);
  let meet = oldPath.length;
  while (meet > 0 && !targetPath.has(oldPath[meet - 1]!.id)) meet--;
  const entriesToSummarize: SessionEntry[] = oldPath.slice(meet);
  return { commonAncestorId: meet > 0 ? oldPath[meet - 1]!.id : null, entriesToSummarize };
}

function applyOverrides(
  preparation: TreePreparation,
  result: SessionBeforeTreeResult,
  owner: HandlerOwner,
): void {
  const summary = result.summary as { summary?: unknown } | undefined;
  if (summary !== undefined && (typeof summary !== "object" || typeof summary?.summary !== "string")) {
    throw new TypeError(
      `${owner.id}: session_before_tree returned a summary without a string "summary" field`,
    );
  }
  if (result.customInstructions !== undefined) preparation.customInstructions = result.customInstructions;
  if (result.replaceInstructions !== undefined) preparation.replaceInstructions = result.replaceInstructions;
  if (result.label !== undefined) preparation.label = result.label;
}
