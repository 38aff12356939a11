/**
 * The hard subset (docs/method.md §7 stage 3): run the current policy k times per problem and drop the problems it
 * solved k/k. Run once per stage and remembered in the run's folder, so a resumed stage trains on the same pool.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { RlStage } from '../../contracts/recipe.ts';
import { runRollouts } from '../rollout/agent.ts';
import { scoreTrajectory } from '../rollout/score.ts';
import { loadProblems, type TaskProblem } from './data.ts';
import type { TrainRun } from './run-state.ts';

/** Stage `i`'s problems: all of its data, or the hard subset. */
export async function stagePool(run: TrainRun, stage: RlStage, i: number): Promise<TaskProblem[]> {
  const { ctx } = run;
  const all = await loadProblems(ctx.db, stage.data);
  if (stage.dataFilter.kind !== 'hard') return all;
  const file = path.join(ctx.runDir, `stage-${i}-pool.json`);
  if (fs.existsSync(file)) {
    const ids = new Set(JSON.parse(fs.readFileSync(file, 'utf8')) as string[]);
    return all.filter((p) => ids.has(p.id));
  }
  const k = stage.dataFilter.k;
  await ctx.log(`hard-subset filter: ${all.length} problems × ${k} rollouts with the current policy`);
  const ts = await runRollouts(
    all.flatMap((p, g) =>
      Array.from({ length: k }, (_, j) => ({ id: `f${g}:${j}`, problem: p.question, seed: 900_000_000 + g * k + j })),
    ),
    {
      engine: run.policy.engine!,
      sandbox: ctx.sandbox,
      template: run.template,
      toolFormat: run.recipe.template.toolFormat,
      limits: { maxResponseTokens: stage.maxResponseTokens, maxTurns: stage.maxTurns },
      temperature: stage.temperature,
      tool: stage.tool,
      signal: ctx.signal,
    },
  );
  const solved = new Array(all.length).fill(0);
  for (let n = 0; n < ts.length; n++) {
    const g = Math.floor(n / k);
    if ((await scoreTrajectory(ts[n]!, all[g]!.answer, ctx.verifier, all[g]!.question)).correct) solved[g]++;
  }
  const kept = all.filter((_, g) => solved[g] < k);
  fs.writeFileSync(file, JSON.stringify(kept.map((p) => p.id)));
  await ctx.log(
    `hard-subset filter: kept ${kept.length} of ${all.length} (dropped ${all.length - kept.length} solved ${k}/${k})`,
    { type: 'filter', data: { kept: kept.length, total: all.length, k } },
  );
  return kept;
}
