/**
 * Admission for the rollout scheduler (docs/method.md §6), pure. Each request reserves prompt + max response tokens
 * on one engine; a request is admitted only where the reservation fits the engine's free budget, and goes to the
 * engine with the most free budget. Requests are admitted in arrival order: when the oldest waiting request fits
 * nowhere, later ones wait too, so a long request is never starved by a stream of short ones.
 */
export interface EngineBudget {
  id: string;
  total: number;
  reserved: number;
}
export interface Waiting {
  id: string;
  tokens: number;
}
export interface Assignment {
  requestId: string;
  engineId: string;
  tokens: number;
}

export function admit(
  waiting: Waiting[],
  engines: EngineBudget[],
): { assignments: Assignment[]; engines: EngineBudget[] } {
  const state = engines.map((e) => ({ ...e }));
  const assignments: Assignment[] = [];
  for (const w of waiting) {
    let best: (typeof state)[number] | undefined;
    for (const e of state) {
      const free = e.total - e.reserved;
      if (free >= w.tokens && (!best || free > best.total - best.reserved)) best = e;
    }
    if (!best) break;
    best.reserved += w.tokens;
    assignments.push({ requestId: w.id, engineId: best.id, tokens: w.tokens });
  }
  return { assignments, engines: state };
}

/** Would this reservation fit on any engine even when it is idle? If not, it can never run. */
export function everFits(tokens: number, engines: EngineBudget[]): boolean {
  return engines.some((e) => e.total >= tokens);
}
