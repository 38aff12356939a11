/**
 * A GRPO-RoC stage of a run (docs/method.md §5, §7). Each step: draw prompts (seeded by the step number; more
 * rounds with dynamic sampling, the curriculum's order: prompt-draw.ts) →
 * rl-step.ts (rollouts → rewards, then RoC → update) → weight sync → store all 2G trajectories → metrics →
 * checkpoint. With `async` on, the next step's rollouts are generated while a step trains, at most
 * `maxStaleness` weight versions behind the trainer; TIS corrects the gap as it corrects the engine's numerics.
 */
import os from 'node:os';
import type { RlStage } from '../../contracts/recipe.ts';
import type { TokenRecord } from '../../contracts/trajectory.ts';
import { insertTrajectories } from '../../server/store/trajectories.ts';
import { mulberry32 } from '../engines/sampling.ts';
import { toTrajectoryInput } from '../rollout/to-store.ts';
import { stagePool } from './hard-filter.ts';
import { type GeneratedStep, type RlStepResult, type ScoredRollout, updateStep } from './rl-step.ts';
import { drawAndGenerate } from './prompt-draw.ts';
import { tokenRecord } from '../policy/token-record.ts';
import { batchStaleness } from './staleness.ts';
import { batchFigures } from './engine-figures.ts';
import type { TrainRun } from './run-state.ts';
import type { StepMetrics } from '../../contracts/metrics.ts';
import type { PhaseSpan } from '../../contracts/timeline.ts';

/** Run stage `i` from its `done`-th step; returns the run's step after it. */
export async function runRlStage(
  run: TrainRun,
  stage: RlStage,
  i: number,
  done: number,
  step: number,
): Promise<number> {
  // One piece: the stage's loop, read top to bottom as the file's header describes it (draw, generate, update, sync,
  // store, checkpoint), with the bookkeeping of async steps (engineAt, trainerAt, the generation ahead) in one place.
  const { ctx, recipe, policy } = run;
  if (done === 0) {
    await ctx.trainer.setOptim(
      { lr: stage.lr, warmup_steps: stage.warmupSteps, total_steps: null, schedule: 'constant' },
      stage.resetOptimizer,
    );
    if (stage.resetOptimizer) await ctx.log('optimiser state reset for this stage');
  }
  await policy.sync();
  const pool = await stagePool(run, stage, i);
  if (pool.length === 0) {
    await ctx.log(`stage "${stage.name}": no problems left after filtering; skipping it`, { level: 'warn' });
    return step + (stage.steps - done);
  }
  const cfg = {
    rolloutsPerPrompt: stage.rolloutsPerPrompt,
    keep: stage.keep,
    roc: {
      roc: stage.roc.enabled,
      positiveSelection: stage.roc.positiveSelection,
      minPerSign: stage.roc.minPerSign,
      dropEqualReward: stage.roc.dropEqualReward,
    },
    epsLow: stage.epsLow,
    epsHigh: stage.epsHigh,
    dualClip: stage.dualClip,
    tis: stage.tis,
    temperature: stage.temperature,
    maxResponseTokens: stage.maxResponseTokens,
    maxTurns: stage.maxTurns,
    tool: stage.tool,
    template: run.template,
    toolFormat: recipe.template.toolFormat,
  };
  // Off-policy by at most k weight versions (docs/method.md §5 "Asynchronous steps"): while step s trains, the
  // rollouts of step s + 1 are generated on the weights the engine has, k = 0 being the synchronous loop.
  const k = stage.async.enabled ? stage.async.maxStaleness : 0;
  // partialRollouts: the engine takes the new weights as soon as an update ends, between the turns of the
  // rollouts in flight (their later turns run on them); without it, only between two steps' generations.
  const partial = k > 0 && stage.async.partialRollouts;
  // The run step whose update the engine serves (policy.sync above brought it to the trainer's) and the trainer's.
  let engineAt = step;
  let trainerAt = step;
  // Engine weight version → the run step whose weights it served: each turn's staleness is read from its version.
  const versionStep = new Map<number, number>();
  const noteVersion = () => {
    const v = policy.engine?.weightVersion;
    if (typeof v === 'number') versionStep.set(v, trainerAt);
  };
  noteVersion();
  const sync = async (): Promise<number> => {
    const seconds = await policy.sync();
    engineAt = trainerAt;
    noteVersion();
    return seconds;
  };
  let lastGenerationEnd: number | null = null;
  // The engine here shares the trainer's cores while both work: each gets half (on 2 cores one thread each was
  // 1.35× the synchronous loop against 1.04× with the trainer's own policy, bench:async). Remote engines share none.
  const sharesCores = k > 0 && !ctx.policyEngine.versions;
  if (sharesCores) await ctx.trainer.setThreads(Math.max(1, Math.floor(os.availableParallelism() / 2)));
  const begin = (at: number): Generation => {
    const rng = mulberry32((recipe.seed * 1_000_003 + at) >>> 0);
    const t0 = performance.now();
    const engineIdle = lastGenerationEnd === null ? 0 : (t0 - lastGenerationEnd) / 1000;
    const busy0 = policy.computeMs;
    const batch0 = policy.batchCounters;
    const gen = drawAndGenerate(
      {
        engine: policy.engine!,
        // Pinned to the weights it starts on, unless its turns may move to newer ones.
        ...(partial ? {} : { weightVersion: policy.engine!.weightVersion }),
        tokenizer: run.tokenizer,
        sandbox: ctx.sandbox,
        verifier: ctx.verifier,
        signal: ctx.signal,
        onEvent: ctx.onEvent,
      },
      cfg,
      {
        db: ctx.db,
        runId: ctx.runId,
        pool,
        stage,
        // The curriculum reads the outcomes stored up to the step before, or with a look-ahead (which starts before
        // that step is stored) the one before that: never what timing happens to have stored, so a resumed step
        // draws what the uninterrupted run drew. Dynamic sampling's extra rounds run inside this generation, on the
        // weights it started on (or, with partial rollouts, newer ones, each turn tagged): staleness stays ≤ k.
        outcomesUpTo: at - 1 - (k > 0 ? 1 : 0),
        stepRng: rng,
        drawRng: mulberry32(((recipe.seed * 1_000_003 + at) ^ 0x5bd1e995) >>> 0),
        seedBase: ((recipe.seed * 7919 + at) % 100_000) * 100_000,
      },
    ).then((g) => {
      lastGenerationEnd = performance.now();
      // Share of the rollout phase the engine spent inside the model (the docs/method.md §6 utilisation), and how
      // full its batch stayed and how much of that time went to prefills, where it runs its own batches.
      const batch = policy.batchCounters;
      const computeS = (policy.computeMs - busy0) / 1000;
      return {
        ...g,
        engineBusy: computeS / Math.max(1e-9, g.timings.rollout),
        ...(batch && batch0 ? batchFigures(batch0, batch, computeS) : {}),
      };
    });
    // Awaited when its step trains; a stop rejects it while the step before still trains: not unhandled.
    gen.catch(() => {});
    return { step: at, rng, generatedAt: engineAt, gen, engineIdle };
  };
  let ahead: Generation | null = null;
  let s = step;
  for (let n = done + 1; n <= stage.steps; n++) {
    if (ctx.signal?.aborted) throw new Error('training stopped');
    s++;
    const t0 = performance.now();
    const mine = ahead?.step === s ? ahead : begin(s);
    ahead = null;
    const generated = await mine.gen;
    const trainerIdle = (performance.now() - t0) / 1000;
    let syncS = 0;
    const spans: PhaseSpan[] = []; // sync and storage; reward, RoC and training come with the step's result
    const timedSync = async () => {
      const start = Date.now();
      const seconds = await sync();
      spans.push({ name: 'sync', start, end: Date.now() });
      return seconds;
    };
    if (k > 0 && n < stage.steps) {
      // Step s + 1's batch trains after update s, on weights s versions on: within k of the engine's, else sync
      // first (the engine is idle now, the trainer not yet updating).
      if (s - engineAt > k) syncS += await timedSync();
      ahead = begin(s + 1);
    }
    const r = await updateStep({ trainer: ctx.trainer, tokenizer: run.tokenizer }, cfg, generated, mine.rng);
    trainerAt = s;
    policy.updated();
    if (k === 0) syncS += await timedSync();
    // Partial rollouts: the new weights go to the engine while the next step's rollouts run (hidden behind them).
    const pending = partial && ahead ? timedSync() : null;
    const storageStart = Date.now();
    const storageS = await storeStep(run, r, s, i);
    spans.push({ name: 'storage', start: storageStart, end: Date.now() });
    // Trained against the weights of step s - 1; each token was sampled on those of its turn's version.
    const staleness = batchStaleness(
      generated.rollouts.flatMap((x) =>
        x.trajectory.turns.map((t) => ({ tokens: t.tokens, weightVersion: t.weightVersion })),
      ),
      s - 1,
      (v) => versionStep.get(v),
      mine.generatedAt,
    );
    const hiddenSyncS = pending ? await pending : 0;
    await ctx.metrics(s, {
      ...r.metrics,
      'time/rollout': r.timings.rollout,
      'time/reward': r.timings.reward,
      'time/roc': r.timings.roc,
      'time/train': r.timings.train,
      'time/sync': syncS + hiddenSyncS,
      'time/storage': storageS,
      'time/step': (performance.now() - t0) / 1000,
      'time/trainer_idle': trainerIdle,
      'time/engine_idle': mine.engineIdle,
      'engine/busy_fraction': generated.engineBusy,
      ...(generated.meanBatch !== undefined ? { 'engine/mean_batch': generated.meanBatch } : {}),
      ...(generated.prefillFraction !== undefined ? { 'engine/prefill_fraction': generated.prefillFraction } : {}),
      'async/staleness_mean': staleness.mean,
      'async/staleness_max': staleness.max,
      'async/off_policy_token_share': staleness.offPolicyShare,
    } satisfies StepMetrics);
    await run.checkpoints.save(s, { stage: i, stageStep: n, stageDone: false });
    await ctx.progress({ step: s });
    await ctx.log(
      `step ${s} (${stage.name} ${n}/${stage.steps}): accuracy ${(100 * r.metrics['rollout/accuracy']!).toFixed(1)}%, tool errors ${(100 * r.metrics['rollout/tool_error_rate']!).toFixed(1)}%, kept ${r.metrics['roc/kept']}, ${stage.dynamicSampling.enabled || stage.curriculum.enabled ? `groups ${r.metrics['sampling/groups_drawn']} drawn / ${r.metrics['sampling/groups_mixed']} mixed / ${r.metrics['roc/groups_kept']} kept, ${r.metrics['curriculum/skipped']} skipped, ` : ''}${k > 0 ? `staleness ${staleness.mean.toFixed(2)} (max ${staleness.max}), ` : ''}${((performance.now() - t0) / 1000).toFixed(1)} s`,
      { type: 'step', data: { step: s, metrics: r.metrics, phases: [...r.spans, ...spans] } },
    );
    if (recipe.eval?.everySteps && n % recipe.eval.everySteps === 0 && n !== stage.steps) {
      // The evaluation uses the engine: the next step's rollouts finish first, then it evaluates step s's weights.
      if (ahead) await ahead.gen.catch(() => {});
      await sync();
      await run.evaluate(s);
    }
  }
  // Whatever follows (an evaluation, the next stage) starts from the trainer's weights, as after a synchronous step.
  if (k > 0) await policy.sync();
  if (sharesCores) await ctx.trainer.setThreads(null);
  return s;
}

/** A step's rollouts in flight: generated on the weights of run step `generatedAt`; `rng` goes on to its RoC. */
interface Generation {
  step: number;
  rng: () => number;
  generatedAt: number;
  gen: Promise<GeneratedStep & { engineBusy: number } & ReturnType<typeof batchFigures>>;
  /** Seconds the engine waited between the end of the previous generation and the start of this one. */
  engineIdle: number;
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
  await insertTrajectories(
    run.ctx.db,
    r.rollouts.map((x) => {
      const sel = byGroup[x.group]!.samples[x.sample]!;
      return toTrajectoryInput(
        x.trajectory,
        { reward: x.reward, correct: x.reward > 0, verdict: x.verdict },
        {
          runId: run.ctx.runId,
          step,
          stage,
          split: 'train',
          problemId: x.problem.id,
          groupId: `g${String(x.group).padStart(3, '0')}`,
          sampleIndex: x.sample,
          selected: sel.selected,
          selectReason: byGroup[x.group]!.dropped ? byGroup[x.group]!.reason : sel.reason,
          pErr: x.pErr,
          pFormat: x.pFormat,
        },
        tokensOf(run, x),
      );
    }),
  );
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
