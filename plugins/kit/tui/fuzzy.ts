/**
 * Fuzzy matching for pickers: every query character must appear in order (case-insensitive). Lower scores are
 * better: a match at the start of the text or of a word, and consecutive characters, score lower; gaps score
 * higher. Space-separated query words must each match.
 */

export interface FuzzyMatch {
  matches: boolean;
  score: number;
}

export function fuzzyMatch(query: string, text: string): FuzzyMatch {
  const q = query.toLowerCase();
  const t = text.toLowerCase();
  if (q.length === 0) return { matches: true, score: 0 };
  let score = 0;
  let last = -1;
  for (const ch of q) {
    const at = t.indexOf(ch, last + 1);
    if (at < 0) return { matches: false, score: Number.POSITIVE_INFINITY };
    const boundary = at === 0 || /[\s\-_./:]/.test(t[at - 1]!);
    score += at === last + 1 ? 0 : boundary ? 1 : 2 + (at - last - 1) * 0.1;
    last = at;
  }
  if (t.startsWith(q)) score -= 2;
  else if (t.includes(q)) score -= 1;
  return { matches: true, score: score + t.length * 0.001 };
}

/** The items whose text matches every word of the query, best first; the query "" keeps every item in order. */
export function fuzzyFilter<T>(items: T[], query: string, getText: (item: T) => string): T[] {
  const words = query.trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return [...items];
  const scored: { item: T; score: number; index: number }[] = [];
  items.forEach((item, index) => {
    const text = getText(item);
    let score = 0;
    for (const word of words) {
      const m = fuzzyMatch(word, text);
      if (!m.matches) return;
      score += m.score;
    }
    scored.push({ item, score, index });
  });
  return scored.sort((a, b) => a.score - b.score || a.index - b.index).map((s) => s.item);
}
