/**
 * The text of a run's report (server/store/run-report.ts): a Markdown table, one row per stage and benchmark, that
 * the table of docs/recipes-and-training.md "The default recipe" is pasted from, and the paired difference from the first evaluation to the last.
 */
import { formatDifference, formatPercent, formatWithInterval } from '../contracts/intervals.ts';
import type { RunReport } from '../server/store/run-report.ts';

const secs = (s: number | null) => (s == null ? '–' : `${Math.round(s)} s`);

export function formatRunReport(r: RunReport): string {
  const lines = [
    `run ${r.name} (${r.runId}): ${r.status}, seed ${r.seed}, commit ${r.codeVersion}, wall ${secs(r.wallS)} (set-up ${secs(r.setupS)})`,
    '',
    '| stage | steps | wall (with its eval) | benchmark | pass@1 [95% CI] | pass@k [95% CI] | no call | tool errors | in correct | length |',
    '|---|--:|--:|---|--:|--:|--:|--:|--:|--:|',
  ];
  for (const s of r.stages) {
    const steps = s.endStep == null ? '–' : `${s.endStep - s.startStep} (→ ${s.endStep})`;
    const head = `| ${s.name}${s.starts > 1 ? ` (resumed ×${s.starts - 1})` : ''} | ${steps} | ${secs(s.wallS)}`;
    if (s.evals.length === 0) {
      lines.push(`${head} | – | – | – | – | – | – | – |`);
      continue;
    }
    for (const e of s.evals) {
      lines.push(
        `${head} | ${e.benchmark} (${e.problems} × ${e.k}) | ${formatWithInterval(e.pass1, e.pass1Ci)} | ${formatWithInterval(e.passK, e.passKCi)} | ${formatPercent(e.noToolCallRate)} | ${formatPercent(e.toolErrorRate)} | ${formatPercent(e.toolErrorRateCorrect)} | ${e.meanLength.toFixed(0)} |`,
      );
    }
  }
  const rl = r.stages.filter((s) => s.groups);
  if (rl.length) {
    // docs/method.md §5 "Dynamic sampling and the pass-rate curriculum": a group with all-equal rewards trains nothing.
    lines.push(
      '',
      '| stage | RL steps | groups drawn | with mixed rewards | kept after RoC | skipped by the curriculum | steps short of their groups | rollout tokens/s | mean decode batch | engine time prefilling |',
      '|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
    );
    for (const s of rl) {
      const g = s.groups!;
      lines.push(
        `| ${s.name} | ${g.steps} | ${g.drawn} | ${g.mixed} (${formatPercent(g.drawn ? g.mixed / g.drawn : 0)}) | ${g.kept} | ${g.skipped} | ${g.short} | ${g.rolloutTokensPerS == null ? '–' : g.rolloutTokensPerS.toFixed(1)} | ${g.meanBatch == null ? '–' : g.meanBatch.toFixed(1)} | ${g.prefillFraction == null ? '–' : formatPercent(g.prefillFraction)} |`,
      );
    }
  }
  for (const b of r.paired) {
    lines.push(
      '',
      b.paired
        ? `${b.benchmark}: step ${r.lastEvalStep} − step ${r.firstEvalStep} = ${formatDifference(b.paired)} on ${b.paired.problems} problems (paired bootstrap; ${b.paired.excludesZero ? 'excludes' : 'includes'} zero)`
        : `${b.benchmark}: no paired difference (${b.why})`,
    );
  }
  return lines.join('\n');
}
