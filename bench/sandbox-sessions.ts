/** bench:sandbox's session rows: calls of tool.session "trajectory" sessions beside fresh calls on one pool. */
import { type Cell, expectOk, fmt, measure, type Outcome, pad, settle, type Snippet } from './sandbox-measure.ts';
import type { SandboxPool } from '../workers/sandbox/pool.ts';

export type SessionRow = { s: Snippet; c: number; fresh: Cell; session: Cell };
type SandboxResult = import('../workers/sandbox/types.ts').SandboxResult;
const outcome = (r: SandboxResult): Outcome => ({
  status: r.status,
  stdout: r.stdout,
  stderr: r.stderr,
  errorType: r.errorType,
  exitCode: r.exitCode,
});

/**
 * Session calls (tool.session "trajectory") beside fresh calls on the same pool, measured one after the other: c
 * sessions, each running its calls in turn, against c callers of fresh calls; then what a session's first call
 * costs (open, run print(1+1), end), one at a time.
 */
export async function measureSessions(
  pool: SandboxPool,
  snippets: Snippet[],
  scale: (n: number) => number,
): Promise<{ rows: SessionRow[]; open: Cell }> {
  const rows: SessionRow[] = [];
  for (const s of snippets) {
    for (const c of [1, Math.min(8, pool.opts.maxSessions)]) {
      const n = s.calls[c === 1 ? 1 : 16];
      await settle();
      const fresh = await measure(
        n,
        c,
        async () => outcome(await pool.run({ code: s.code })),
        (o) => s.check(o, 'pool'),
      );
      const free = Array.from({ length: c }, () => pool.openSession());
      await Promise.all(free.map((x) => x.run({ code: 'pass' })));
      await settle();
      // Each of the c callers takes a session of its own for each call (c callers, c sessions: one is always free).
      const session = await measure(
        n,
        c,
        async () => {
          const x = free.pop()!;
          try {
            return outcome(await x.run({ code: s.code }));
          } finally {
            free.push(x);
          }
        },
        (o) => s.check(o, 'pool'),
      );
      await Promise.all(free.map((x) => x.close()));
      rows.push({ s, c, fresh, session });
      console.log(
        `(${s.key}) ${s.name.padEnd(10)} c=${pad(String(c), 2)} n=${pad(String(n), 4)}  session ${pad(fmt(session.callsPerS), 7)}/s p50 ${pad(fmt(session.p50), 6)} p99 ${pad(fmt(session.p99), 7)} ms | fresh ${pad(fmt(fresh.callsPerS), 7)}/s p50 ${pad(fmt(fresh.p50), 6)} p99 ${pad(fmt(fresh.p99), 7)} ms${session.errors.length || fresh.errors.length ? ` FAILED: ${[...session.errors, ...fresh.errors].join('; ')}` : ''}`,
      );
    }
  }
  await settle();
  const open = await measure(
    scale(40),
    1,
    async () => {
      const x = pool.openSession();
      try {
        return outcome(await x.run({ code: 'print(1+1)' }));
      } finally {
        await x.close();
      }
    },
    expectOk('2\n'),
  );
  console.log(`a session's first call (open, print(1+1), end): p50 ${fmt(open.p50)} ms, p99 ${fmt(open.p99)} ms\n`);
  return { rows, open };
}

/** The sessions' table for docs/benchmarks.md. */
export function printSessions({ rows, open }: { rows: SessionRow[]; open: Cell }) {
  console.log('\n<!-- docs/benchmarks.md table (bench:sandbox, sessions) -->');
  console.log('```markdown');
  console.log(
    '| snippet | conc. | session calls/s | session p50 ms | session p99 ms | fresh calls/s | fresh p50 ms | fresh p99 ms | session ÷ fresh |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|',
  );
  for (const { s, c, fresh, session } of rows)
    console.log(
      `| (${s.key}) ${s.name}${session.errors.length || fresh.errors.length ? ' **FAILED**' : ''} | ${c} | ${fmt(session.callsPerS, 0)} | ${fmt(session.p50)} | ${fmt(session.p99)} | ${fmt(fresh.callsPerS, 0)} | ${fmt(fresh.p50)} | ${fmt(fresh.p99)} | ${fmt(session.callsPerS / fresh.callsPerS)}× |`,
    );
  console.log(`\nA session's first call (open, print(1+1), end): p50 ${fmt(open.p50)} ms, p99 ${fmt(open.p99)} ms.`);
  console.log('```');
}
