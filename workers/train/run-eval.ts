/**
 * The evaluation inside a training run (docs/method.md §8): after every stage (and every `eval.everySteps` RL
 * steps), the policy's engine on the recipe's held-out sets. Generated sets are stored once per run.
 */
import { EvalSpecSchema } from '../../contracts/eval.ts';
import type { Recipe } from '../../contracts/recipe.ts';
import { runEvaluation } from '../eval/run.ts';
import { formatWithInterval } from '../../contracts/intervals.ts';
import type { TemplateSettings } from '../rollout/template.ts';
import { evalDatasetRef } from './data.ts';
import type { PolicySync } from '../policy/policy-sync.ts';
import type { TrainContext, TrainSummary } from './run-state.ts';

export function runEvaluator(
  ctx: TrainContext,
  recipe: Recipe,
  template: TemplateSettings,
  policy: PolicySync,
  exportDir: string,
  summary: TrainSummary,
) {
  let evalRefs: string[] | null = null;
  return async (step: number): Promise<void> => {
    const engine = policy.engine;
    if (!recipe.eval || !engine) return;
    if (!evalRefs) {
      evalRefs = [];
      for (const d of recipe.eval.datasets) evalRefs.push(await evalDatasetRef(ctx.db, d));
    }
    // One evaluation per dataset, with that dataset's split and limit: a stored set's held-out split only (a
    // dataset whose train split feeds the run must never be evaluated whole).
    const rows = [];
    for (const [i, d] of recipe.eval.datasets.entries()) {
      const spec = EvalSpecSchema.parse({
        engine: { kind: 'embedded', checkpoint: exportDir },
        datasets: [evalRefs[i]],
        split: d.kind === 'stored' ? d.split : 'all',
        ...(d.kind === 'stored' && d.limit ? { limit: d.limit, pick: d.pick } : {}),
        k: recipe.eval.k,
        temperature: recipe.eval.temperature,
        maxTokens: recipe.eval.maxTokens,
        maxTurns: recipe.eval.maxTurns,
        step,
        seed: recipe.seed,
        toolTimeoutS: recipe.tool.timeoutS,
      });
      rows.push(
        ...(await runEvaluation(
          {
            db: ctx.db,
            engine,
            sandbox: ctx.sandbox,
            verifier: ctx.verifier,
            runId: ctx.runId,
            signal: ctx.signal,
            template,
            log: (m) => ctx.log(`eval: ${m}`),
            metrics: ctx.metrics,
          },
          spec,
        )),
      );
    }
    summary.evals.push({ step, rows });
    // The event carries the summaries without each problem's score (that stays in the EvalResult row).
    await ctx.log(
      `eval at step ${step}: ${rows.map((r) => `${r.benchmark} pass@1 ${formatWithInterval(r.pass1, r.pass1Ci)}`).join(', ')}`,
      { type: 'eval', data: rows.map(({ perProblem: _, ...r }) => r) },
    );
  };
}
