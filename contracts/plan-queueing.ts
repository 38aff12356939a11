/**
 * The planner's queueing arithmetic (pure): an M/M/c queue's waiting probability and latency, and the cores a
 * latency target needs (the sandbox's sizing in contracts/plan.ts's plan and the Plan panel).
 */
/**
 * Erlang C: the probability that a call waits, with arrival rate `lambda` (calls/s), service time `s` (s) and `c`
 * servers (cores). Computed by the stable recurrence over the Erlang B formula.
 */
export function erlangC(lambda: number, s: number, c: number): number {
  const a = lambda * s; // offered load in cores
  if (c <= a) return 1;
  let b = 1;
  for (let k = 1; k <= c; k++) b = (a * b) / (k + a * b);
  const rho = a / c;
  return b / (1 - rho + rho * b);
}

/** Mean latency (queue + service) of an M/M/c queue; Infinity when the cores cannot keep up. */
export function meanLatency(lambda: number, s: number, c: number): number {
  if (lambda <= 0) return s;
  if (c <= lambda * s) return Number.POSITIVE_INFINITY;
  return (erlangC(lambda, s, c) * s) / (c - lambda * s) + s;
}

/** The fewest cores whose mean latency is within `target` (at least 1; the service time alone when it exceeds it). */
export function coresForLatency(lambda: number, s: number, target: number): number {
  if (lambda <= 0) return 1;
  let c = Math.max(1, Math.ceil(lambda * s + 1e-9));
  const goal = Math.max(target, s * 1.0001);
  while (meanLatency(lambda, s, c) > goal && c < 1e7) c++;
  return c;
}
