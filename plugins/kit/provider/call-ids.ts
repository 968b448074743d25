/**
 * Tool-call ids as APIs that restrict them want them (`^[a-zA-Z0-9_-]+$`, 64 characters at most: Anthropic's
 * Messages API, Gemini's function calls). Ids made by another provider are mapped: other characters become `_`, a
 * repeat gets `_2`, `_3`, ...; one id always maps to the same answer within a request, and two ids never to one.
 */
export class SafeCallIds {
  private readonly map = new Map<string, string>();
  private readonly used = new Set<string>();

  /** `fallback` stands for an id with no character left. */
  constructor(private readonly fallback = "call") {}

  get(id: string): string {
    const known = this.map.get(id);
    if (known) return known;
    const base = id.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64) || this.fallback;
    let safe = base;
    for (let n = 2; this.used.has(safe); n++) safe = `${base.slice(0, 58)}_${n}`;
    this.map.set(id, safe);
    this.used.add(safe);
    return safe;
  }
}
