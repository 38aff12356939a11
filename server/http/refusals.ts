/**
 * Refused anonymous requests (tRPC calls without a session or token, sign-in and link requests over a limit, links
 * asked for unknown emails) are counted here instead of being written to the database one row each, so anonymous
 * traffic cannot grow a table. Totals since start are kept for a metric; at most one summary line per interval goes
 * to the log, naming the counts by kind. tests/unit/sign-in-limits.test.ts.
 */
export interface RefusalOptions {
  intervalMs: number;
  log: (line: string) => void;
  /** Injectable for tests; defaults to an unref'd setTimeout. */
  schedule?: (fn: () => void, ms: number) => void;
}

export class RefusalCounter {
  private readonly totals = new Map<string, number>();
  private pending = new Map<string, number>();
  private scheduled = false;

  constructor(private readonly opts: RefusalOptions) {}

  count(kind: string, n = 1): void {
    this.totals.set(kind, (this.totals.get(kind) ?? 0) + n);
    this.pending.set(kind, (this.pending.get(kind) ?? 0) + n);
    if (this.scheduled) return;
    this.scheduled = true;
    const schedule =
      this.opts.schedule ??
      ((fn, ms) => {
        setTimeout(fn, ms).unref();
      });
    schedule(() => this.flush(), this.opts.intervalMs);
  }

  /** Counts since this process started, by kind. */
  totalsByKind(): Record<string, number> {
    return Object.fromEntries([...this.totals].sort(([a], [b]) => a.localeCompare(b)));
  }

  /** Log what was counted since the last line (nothing when nothing was), and allow the next line. */
  flush(): void {
    this.scheduled = false;
    if (this.pending.size === 0) return;
    const entries = [...this.pending].sort((a, b) => b[1] - a[1]);
    const total = entries.reduce((s, [, n]) => s + n, 0);
    this.pending = new Map();
    this.opts.log(
      `refused anonymous requests in the last ${Math.round(this.opts.intervalMs / 1000)} s: ${total} (${entries.map(([k, n]) => `${k} ${n}`).join(', ')})`,
    );
  }
}

// One per web process, kept on globalThis: Next may evaluate a module once per route bundle.
const holder = globalThis as unknown as { __toolsmithRefusals?: RefusalCounter };
export const refusals: RefusalCounter = (holder.__toolsmithRefusals ??= new RefusalCounter({
  intervalMs: 60_000,
  log: (line) => console.warn(`toolsmith: ${line}`),
}));
