/**
 * Reading plans out of the agent's replies: the numbered list under a "Plan:" heading, and the `[DONE:n]` markers
 * the agent writes as it finishes steps of an approved plan.
 */

/** A heading that starts the plan: `Plan:`, `## Plan`, `**Plan:**`, `Plan` alone on its line (any case). */
const HEADING = /^\s*(?:#{1,6}\s*)?(?:\*\*|__)?\s*plan\s*:?\s*(?:\*\*|__)?\s*:?\s*$/i;
/** A numbered item: `1. text` or `1) text`. */
const ITEM = /^\s*(\d{1,3})[.)]\s+(\S.*)$/;

export interface ExtractedPlan {
  /** The plan as the agent wrote it, from the heading to its last item (what the person reviews and edits). */
  text: string;
  /** Each item's text, in order, markdown emphasis removed. */
  steps: string[];
}

/**
 * The plan in a reply: the numbered items after the last "Plan:" heading (the latest plan wins when a reply holds
 * several). Indented lines under an item belong to it; a new heading after the items ends the plan. Undefined when
 * the reply has no heading followed by at least one numbered item.
 */
export function extractPlan(reply: string): ExtractedPlan | undefined {
  const lines = reply.split(/\r?\n/);
  for (let at = lines.length - 1; at >= 0; at--) {
    if (!HEADING.test(lines[at]!)) continue;
    const found = numberedItems(lines.slice(at + 1));
    if (found.steps.length > 0) {
      return { text: [lines[at]!.trim(), ...found.lines].join("\n"), steps: found.steps };
    }
  }
  return undefined;
}

/**
 * The steps of a plan as the person edited it: its numbered items wherever they are (a heading is not needed).
 * Text without numbered items is one step made of its first non-empty line.
 */
export function stepsOf(text: string): string[] {
  const items = numberedItems(text.split(/\r?\n/), false).steps;
  if (items.length > 0) return items;
  const first = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .find((l) => l !== "");
  return first ? [clean(first)] : [];
}

function numberedItems(lines: string[], stopAtHeading = true): { steps: string[]; lines: string[] } {
  const steps: string[] = [];
  const kept: string[] = [];
  let pendingBlank = 0;
  for (const line of lines) {
    const item = ITEM.exec(line);
    if (item) {
      steps.push(clean(item[2]!));
      for (; pendingBlank > 0; pendingBlank--) kept.push("");
      kept.push(line.trimEnd());
      continue;
    }
    if (line.trim() === "") {
      if (steps.length > 0) pendingBlank++;
      continue;
    }
    if (steps.length === 0) {
      // Text between the heading and the first item (an introduction) is allowed; a heading is not.
      if (stopAtHeading && /^\s*#/.test(line)) break;
      continue;
    }
    // Under an item: an indented line or a sub-bullet continues it; anything else ends the list.
    if (/^\s+\S/.test(line) || /^\s*[-*+]\s/.test(line)) {
      for (; pendingBlank > 0; pendingBlank--) kept.push("");
      kept.push(line.trimEnd());
      continue;
    }
    if (stopAtHeading) break;
  }
  return { steps, lines: kept };
}

/** An item's text without markdown emphasis or code ticks, and without a trailing colon. */
function clean(text: string): string {
  return text
    .replace(/\*\*|__|`/g, "")
    .replace(/\s+/g, " ")
    .trim()
    .replace(/:$/, "");
}

/** The step numbers (1-based) a reply marks done with `[DONE:n]`, in order of appearance. */
export function doneMarkers(reply: string): number[] {
  return [...reply.matchAll(/\[DONE:\s*(\d{1,3})\]/gi)].map((m) => Number(m[1]));
}
