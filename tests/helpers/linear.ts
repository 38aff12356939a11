/**
 * How the work of a function grows with its input, as a ratio measured side by side: CPU time (this process's user
 * + system, not wall-clock) of `fn` on a 10× larger input over that on the smaller one, the best of several runs
 * each. Linear work gives about 10; quadratic about 100; cubic 1,000. Each input is built before timing.
 */
export function workRatio(
  fn: (s: string) => unknown,
  make: (n: number) => string,
  small = 10_000,
  factor = 10,
): number {
  const cost = (s: string) => {
    let reps = 1;
    let best = Infinity;
    for (let round = 0; round < 5; round++) {
      const t = process.cpuUsage();
      for (let k = 0; k < reps; k++) fn(s);
      const u = process.cpuUsage(t);
      const us = (u.user + u.system) / reps;
      best = Math.min(best, us);
      // Repeat fast calls so that a run is long against the clock's grain.
      if (us * reps < 20_000) reps = Math.min(1000, reps * 4);
    }
    return Math.max(best, 1);
  };
  const a = make(small);
  const b = make(small * factor);
  fn(a); // warm up (compile the patterns, tier up)
  return cost(b) / cost(a);
}
