import { checks, runChecks, type CheckDeps } from '../diagnostics/checks.ts';
import { SandboxPool } from '../sandbox/pool.ts';
import type { JobHandler } from '../types.ts';

/** A one-interpreter pool for the isolation check. */
export const checkDeps: CheckDeps = { startSandboxPool: () => SandboxPool.start({ size: 1, log: () => {} }) };

const MARK = { ok: '\u001b[32m✔\u001b[0m', warn: '\u001b[33m!\u001b[0m', fail: '\u001b[31m✘\u001b[0m' };

/**
 * "diagnostics" job: runs the environment checks, streaming one event per check (the terminal pane shows them)
 * and one metric step per check (its duration, for the chart). The report is the job's result.
 */
export const diagnostics: JobHandler = async (ctx) => {
  await ctx.log(`diagnostics on ${ctx.workerId}`, { type: 'log' });
  await ctx.progress({ step: 0, totalSteps: checks(ctx.db, checkDeps).length });
  const report = await runChecks(ctx.db, checkDeps, async (r, i) => {
    if (ctx.signal.aborted) throw new Error('diagnostics stopped');
    await ctx.log(`${MARK[r.status]} ${r.name.padEnd(18)} ${r.detail}${r.fix ? `  → fix: ${r.fix}` : ''}`, {
      type: 'diagnostic',
      level: r.status === 'fail' ? 'error' : r.status === 'warn' ? 'warn' : 'info',
      data: r,
    });
    // Step n = the n-th check, so the chart's x axis and the run's "step n / total" agree.
    await ctx.metrics(i + 1, { check_ms: r.ms, checks_ok: r.status === 'ok' ? 1 : 0 });
    await ctx.progress({ step: i + 1 });
  });
  const failed = report.checks.filter((c) => c.status === 'fail').length;
  await ctx.log(failed === 0 ? 'all checks passed' : `${failed} check(s) failed: see the fixes above`, {
    type: 'log',
    level: failed ? 'warn' : 'info',
  });
  return report;
};
