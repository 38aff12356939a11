/** An SFT stage of a run (docs/method.md §7): demonstrations → trainer steps, checkpointed as it goes. */
import { type Family, type SftStage, stageSteps } from '../../contracts/recipe.ts';
import { sftDataset, tokenizeDemo } from '../tasks/demos.ts';
import { workedSftDataset } from '../tasks/gsm-demos.ts';
import { loadWorkedProblems } from './data.ts';
import { SFT_CHECKPOINT_EVERY } from './checkpoints.ts';
import type { TrainRun } from './run-state.ts';
import { runSft } from './sft.ts';
import type { StepMetrics } from '../../contracts/metrics.ts';

/** Run stage `i` from its `done`-th step; returns the run's step after it. */
export async function runSftStage(
  run: TrainRun,
  stage: SftStage,
  i: number,
  done: number,
  step: number,
): Promise<number> {
  const { ctx, recipe, policy, checkpoints } = run;
  if (done === 0) {
    const steps = stageSteps(stage);
    await ctx.trainer.setOptim(
      {
        lr: stage.lr,
        warmup_steps: Math.ceil(steps * stage.warmupRatio),
        total_steps: steps,
        schedule: stage.schedule,
      },
      false,
    );
  }
  const data = stage.data;
  const made =
    data.kind === 'stored'
      ? workedSftDataset(await loadWorkedProblems(ctx.db, data), {
          n: data.n,
          seed: data.seed,
          shares: data.shares,
          settings: run.template,
        })
      : sftDataset({
          n: data.n,
          seed: data.seed,
          shares: data.shares,
          families: data.families as Family[] | undefined,
          difficulty: data.difficulty,
          settings: run.template,
        });
  const all = made.map((d) => tokenizeDemo(d, run.tokenizer));
  const demos = all.filter((d) => d.ids.length <= stage.maxLength);
  if (demos.length < all.length && done === 0) {
    await ctx.log(
      `${all.length - demos.length} of ${all.length} demonstrations are longer than maxLength (${stage.maxLength} tokens) and are left out`,
    );
  }
  let s = step;
  let n = done;
  await runSft(ctx.trainer, demos, {
    epochs: stage.epochs,
    batch: stage.batch,
    seed: recipe.seed + i,
    maxSteps: stage.maxSteps,
    skip: done,
    signal: ctx.signal,
    onStep: async (m) => {
      s++;
      n++;
      policy.updated();
      await ctx.metrics(s, {
        'sft/loss': m.loss,
        'sft/grad_norm': m.grad_norm,
        'sft/lr': m.lr,
        'train/tokens_per_s': m.tokens_per_s,
      } satisfies StepMetrics);
      await ctx.progress({ step: s });
      if (n % SFT_CHECKPOINT_EVERY === 0) await checkpoints.save(s, { stage: i, stageStep: n, stageDone: false });
      if (n % 50 === 0)
        await ctx.log(
          `sft step ${n}/${stageSteps(stage)} loss ${m.loss.toFixed(3)} (${Math.round(m.tokens_per_s)} tokens/s)`,
        );
    },
  });
  return s;
}
