/**
 * A GRPO-RoC stage of a run (docs/method.md §5, §7). Each step: sample prompts (seeded by the step number) →
 * rl-step.ts (rollouts → rewards → RoC → update) → weight sync → store all 2G trajectories → metrics → checkpoint.
 */
import type { RlStage } from '../../contracts/recipe.ts';
import type { TokenRecord } from '../../contracts/trajectory.ts';
import { insertTrajectories } from '../../server/store/trajectories.ts';
import { mulberry32 } from '../engines/sampling.ts';
import { toTrajectoryInput } from '../rollout/to-store.ts';
import { stagePool } from './hard-filter.ts';
import { rlStep, type RlStepResult, type ScoredRollout } from './rl-step.ts';
import { tokenRecord } from './token-record.ts';
import type { TrainRun } from './run-state.ts';

/** Run stage `i` from its `done`-th step; returns the run's step after it. */
export async function runRlStage(run: TrainRun, stage: RlStage, i: number, done: number, step: number): Promise<number> {
  const { ctx, recipe, policy } = run;
  if (done === 0) {
    await ctx.trainer.setOptim({ lr: stage.lr, warmup_steps: stage.warmupSteps, total_steps: null, schedule: 'constant' }, stage.resetOptimizer);
    if (stage.resetOptimizer) await ctx.log('optimiser state reset for this stage');
  }
  await policy.sync();
  const pool = await stagePool(run, stage, i);
  if (pool.length === 0) {
    await ctx.log(`stage "${stage.name}": no problems left after filtering; skipping it`, { level: 'warn' });
    return step + (stage.steps - done);
  }
  const cfg = {
    rolloutsPerPrompt: stage.rolloutsPerPrompt, keep: stage.keep,
    roc: { roc: stage.roc.enabled, positiveSelection: stage.roc.positiveSelection, minPerSign: stage.roc.minPerSign, dropEqualReward: stage.roc.dropEqualReward },
    epsLow: stage.epsLow, epsHigh: stage.epsHigh, dualClip: stage.dualClip, tis: stage.tis, temperature: stage.temperature,
    maxResponseTokens: stage.maxResponseTokens, maxTurns: stage.maxTurns, tool: stage.tool, template: run.template, toolFormat: recipe.template.toolFormat,
  };
  let s = step;
  for (let n = done + 1; n <= stage.steps; n++) {
    if (ctx.signal?.aborted) throw new Error('training stopped');
    s++;
    const t0 = performance.now();
    const rng = mulberry32((recipe.seed * 1_000_003 + s) >>> 0);
    const prompts = samplePrompts(pool, stage.promptsPerStep, rng);
    const busy0 = policy.computeMs;
    const r = await rlStep({ engine: policy.engine!, weightVersion: policy.engine!.weightVersion, tokenizer: run.tokenizer, sandbox: ctx.sandbox, verifier: ctx.verifier, trainer: ctx.trainer, signal: ctx.signal, onEvent: ctx.onEvent },
      cfg, prompts, ((recipe.seed * 7919 + s) % 100_000) * 100_000, rng);
    policy.updated();
    // Share of the rollout phase the engine spent inside the model (the docs/method.md §6 utilisation).
    const engineBusy = (policy.computeMs - busy0) / 1000 / Math.max(1e-9, r.timings.rollout);
    const syncS = await policy.sync();
    const storageS = await storeStep(run, r, s, i);
    await ctx.metrics(s, {
      ...r.metrics,
      'time/rollout': r.timings.rollout, 'time/reward': r.timings.reward, 'time/roc': r.timings.roc, 'time/train': r.timings.train,
      'time/sync': syncS, 'time/storage': storageS, 'time/step': (performance.now() - t0) / 1000, 'engine/busy_fraction': engineBusy,
    });
    await run.checkpoints.save(s, { stage: i, stageStep: n, stageDone: false });
    await ctx.progress({ step: s });
    await ctx.log(`step ${s} (${stage.name} ${n}/${stage.steps}): accuracy ${(100 * r.metrics['rollout/accuracy']!).toFixed(1)}%, tool errors ${(100 * r.metrics['rollout/tool_error_rate']!).toFixed(1)}%, kept ${r.metrics['roc/kept']}, ${((performance.now() - t0) / 1000).toFixed(1)} s`, { type: 'step', data: { step: s, metrics: r.metrics } });
    if (recipe.eval?.everySteps && n % recipe.eval.everySteps === 0 && n !== stage.steps) await run.evaluate(s);
  }
  return s;
}

/**
 * A rollout's token record: the one rl-step attached (with the trainer's old logprobs, TIS weights and clip states
 * for the trained-on ones), else the engine's side only. Read through a narrow type so this file does not depend
 * on when rl-step starts attaching it.
 */
const tokensOf = (run: TrainRun, x: ScoredRollout): TokenRecord =>
  x.tokens ?? tokenRecord(x.trajectory, run.tokenizer, null);

/** Store all 2G trajectories of a step (with their token records) and RoC's selection; returns the seconds it took. */
async function storeStep(run: TrainRun, r: RlStepResult, step: number, stage: number): Promise<number> {
  const t1 = performance.now();
  const byGroup = r.groups;
  await insertTrajectories(run.ctx.db, r.rollouts.map((x) => {
    const sel = byGroup[x.group]!.samples[x.sample]!;
    return toTrajectoryInput(x.trajectory, { reward: x.reward, correct: x.reward > 0, verdict: x.verdict }, {
      runId: run.ctx.runId, step, stage, split: 'train', problemId: x.problem.id, groupId: `g${String(x.group).padStart(3, '0')}`, sampleIndex: x.sample,
      selected: sel.selected, selectReason: byGroup[x.group]!.dropped ? byGroup[x.group]!.reason : sel.reason, pErr: x.pErr, pFormat: x.pFormat,
    }, tokensOf(run, x));
  }));
  return (performance.now() - t1) / 1000;
}

/** `n` distinct problems (all of them when the pool is smaller), by a partial Fisher–Yates shuffle. */
export function samplePrompts<T>(pool: T[], n: number, rng: () => number): T[] {
  const idx = pool.map((_, i) => i);
  const m = Math.min(n, pool.length);
  for (let i = 0; i < m; i++) {
    const j = i + Math.floor(rng() * (idx.length - i));
    [idx[i], idx[j]] = [idx[j]!, idx[i]!];
  }
  return idx.slice(0, m).map((i) => pool[i]!);
}
