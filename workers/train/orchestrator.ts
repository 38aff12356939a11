/**
 * The "train" job (method.md §5, §7): a recipe's stages in order, every step stored, resumable.
 *
 * Steps are numbered across the run (SFT steps first, then RL steps), which is the x axis of every chart.
 * Durability: after each RL step (and every SFT_CHECKPOINT_EVERY SFT steps, and at each stage's end) the trainer
 * writes a checkpoint (weights, optimiser, RNG, step) and a Checkpoint row records it. Rows a crashed attempt wrote
 * after its last checkpoint (trajectories, tool calls, metrics, eval results) are deleted on resume, and the seeded
 * prompt/rollout streams depend only on the step number, so a resumed run neither skips nor duplicates a step.
 */
import type { EventOptions } from '../../contracts/events.ts';
import fs from 'node:fs';
import path from 'node:path';
import type { Database } from '../../server/db/client.ts';
import { newId } from '../../server/ids.ts';
import { stageSteps, totalSteps, type Recipe, type RlStage, type SftStage } from '../../contracts/recipe.ts';
import { insertTrajectories } from '../../server/store/trajectories.ts';
import { OnnxEngine } from '../engines/onnx-engine.ts';
import { mulberry32 } from '../engines/sampling.ts';
import { CharTokenizer, EMBEDDED_VOCAB, embeddedTokenizerSpec } from '../engines/tokenizer.ts';
import { runEvaluation } from '../eval/run.ts';
import { type EvalRow } from '../../contracts/eval.ts';
import { EvalSpecSchema } from '../../contracts/eval.ts';
import type { Verifier } from '../reward/verifier.ts';
import { runRollouts, type RolloutEvent } from '../rollout/agent.ts';
import { scoreTrajectory } from '../rollout/score.ts';
import { templateSettings, type TemplateSettings } from '../rollout/template.ts';
import { toTrajectoryInput } from '../rollout/to-store.ts';
import type { Sandbox } from '../sandbox/types.ts';
import { sftDataset, tokenizeDemo } from '../tasks/demos.ts';
import type { Family } from '../../contracts/recipe.ts';
import type { TrainerClient } from '../trainer/client.ts';
import { evalDatasetRef, loadProblems, type TaskProblem } from './data.ts';
import { rlStep } from './rl-step.ts';
import { runSft } from './sft.ts';

const SFT_CHECKPOINT_EVERY = 200;
/** Checkpoints kept on disk per run (the newest); rows for older ones stay, their files go. */
const KEEP_CHECKPOINT_FILES = 2;

export interface TrainContext {
  db: Database;
  runId: string;
  trainer: TrainerClient;
  sandbox: Sandbox;
  verifier: Verifier;
  /** Where this run's checkpoints and exports live (data/runs/<runId>). */
  runDir: string;
  signal?: AbortSignal;
  log(message: string, opts?: EventOptions): Promise<void>;
  metrics(step: number, values: Record<string, number>): Promise<void>;
  progress(p: { stage?: number; stageName?: string; step?: number; totalSteps?: number }): Promise<void>;
  onEvent?: (e: RolloutEvent) => void;
  /** Engine threads (default: onnxruntime's choice). */
  engineThreads?: number;
}

interface CkptMeta { stage: number; stageStep: number; stageDone: boolean }
interface Position { step: number; stage: number; stageStep: number; stageDone: boolean; path: string | null }

export interface TrainSummary { steps: number; evals: { step: number; rows: EvalRow[] }[] }

export function recipeTemplate(r: Recipe): TemplateSettings {
  return templateSettings({ toolName: r.template.toolName, reasonTag: r.template.reasonTag, answerTag: r.template.answerTag, variant: r.template.variant });
}

function recipeTokenizer(r: Recipe): { tok: CharTokenizer; vocab: string[] } {
  if (r.tokenizer.kind === 'file') {
    const spec = JSON.parse(fs.readFileSync(r.tokenizer.path, 'utf8'));
    return { tok: new CharTokenizer(spec), vocab: spec.vocab };
  }
  return { tok: new CharTokenizer(embeddedTokenizerSpec()), vocab: EMBEDDED_VOCAB };
}

/** The last checkpoint of the run, or the start. */
async function position(db: Database, runId: string): Promise<Position> {
  const c = await db.prisma.checkpoint.findFirst({ where: { runId }, orderBy: { step: 'desc' } });
  if (!c) return { step: 0, stage: 0, stageStep: 0, stageDone: false, path: null };
  const m = JSON.parse(c.metadata ?? '{}') as CkptMeta;
  return { step: c.step, stage: m.stage, stageStep: m.stageStep, stageDone: m.stageDone, path: c.path };
}

/** Remove what a crashed attempt stored after the checkpoint it resumes from. */
async function rollBack(db: Database, runId: string, step: number) {
  await db.prisma.toolCall.deleteMany({ where: { runId, step: { gt: step } } });
  await db.prisma.trajectory.deleteMany({ where: { runId, step: { gt: step } } });
  await db.prisma.metricPoint.deleteMany({ where: { runId, step: { gt: step } } });
  await db.prisma.evalResult.deleteMany({ where: { runId, step: { gt: step } } });
}

export async function runTraining(ctx: TrainContext, recipe: Recipe): Promise<TrainSummary> {
  const { db, runId, trainer } = ctx;
  const template = recipeTemplate(recipe);
  const toolFormat = recipe.template.toolFormat;
  const { tok, vocab } = recipeTokenizer(recipe);
  const exportDir = path.join(ctx.runDir, 'export');
  fs.mkdirSync(path.join(ctx.runDir, 'checkpoints'), { recursive: true });
  const total = totalSteps(recipe);
  const summary: TrainSummary = { steps: 0, evals: [] };

  let pos = await position(db, runId);
  if (pos.path) {
    await ctx.log(`resuming from the checkpoint at step ${pos.step} (stage ${pos.stage + 1}, ${pos.stageStep} steps into it)`, { type: 'resume' });
    await rollBack(db, runId, pos.step);
    await trainer.load({ path: pos.path });
  } else if (recipe.model.kind === 'checkpoint') {
    await trainer.load({ path: recipe.model.path, reset_optimizer: true });
  } else {
    const { kind: _k, ...model } = recipe.model;
    await trainer.init({ model: { ...model, vocab_size: vocab.length }, vocab, seed: recipe.seed });
  }
  await ctx.progress({ totalSteps: total, step: pos.step });

  let engine: OnnxEngine | null = null;
  // Whether the trainer holds weights the engine has not loaded: stage ends, evaluations and RL stage starts all ask
  // for a sync, and only the first after an update needs the export and reload.
  let stale = true;
  const sync = async () => {
    if (engine && !stale) return 0;
    const t0 = performance.now();
    await trainer.exportOnnx(exportDir);
    if (engine) await engine.reload(exportDir);
    else engine = await OnnxEngine.load(exportDir, { maxBatch: 32, threads: ctx.engineThreads });
    stale = false;
    return (performance.now() - t0) / 1000;
  };
  const checkpoint = async (step: number, meta: CkptMeta) => {
    const file = path.join(ctx.runDir, 'checkpoints', `step-${String(step).padStart(7, '0')}.pt`);
    const r = await trainer.save(file);
    await db.prisma.checkpoint.upsert({
      where: { runId_stage_step: { runId, stage: meta.stage, step } },
      create: { id: newId('ck_'), runId, stage: meta.stage, step, path: file, sizeBytes: r.bytes, metadata: JSON.stringify(meta) },
      update: { path: file, sizeBytes: r.bytes, metadata: JSON.stringify(meta) },
    });
    const files = fs.readdirSync(path.join(ctx.runDir, 'checkpoints')).filter((f) => /^step-\d+\.pt$/.test(f)).sort();
    for (const f of files.slice(0, -KEEP_CHECKPOINT_FILES)) fs.rmSync(path.join(ctx.runDir, 'checkpoints', f), { force: true });
  };
  let evalRefs: string[] | null = null; // generated eval sets are stored once per run, not once per evaluation
  const evaluate = async (step: number) => {
    if (!recipe.eval || !engine) return;
    if (!evalRefs) {
      evalRefs = [];
      for (const d of recipe.eval.datasets) evalRefs.push(await evalDatasetRef(db, d));
    }
    const refs = evalRefs;
    const spec = EvalSpecSchema.parse({
      engine: { kind: 'embedded', checkpoint: exportDir }, datasets: refs, k: recipe.eval.k, temperature: recipe.eval.temperature,
      maxTokens: recipe.eval.maxTokens, maxTurns: recipe.eval.maxTurns, step, seed: recipe.seed, toolTimeoutS: recipe.tool.timeoutS,
    });
    const rows = await runEvaluation({
      db, engine, sandbox: ctx.sandbox, verifier: ctx.verifier, runId, signal: ctx.signal, template,
      log: (m) => ctx.log(`eval: ${m}`), metrics: ctx.metrics,
    }, spec);
    summary.evals.push({ step, rows });
    await ctx.log(`eval at step ${step}: ${rows.map((r) => `${r.benchmark} pass@1 ${(100 * r.pass1).toFixed(1)}%`).join(', ')}`, { type: 'eval', data: rows });
  };

  try {
    let step = pos.step;
    for (let i = pos.stage; i < recipe.stages.length; i++) {
      const stage = recipe.stages[i]!;
      const resumed = i === pos.stage && pos.path !== null;
      if (resumed && pos.stageDone) {
        // The crash may have come during this stage's evaluation: finish it (stored benchmarks are skipped).
        if (recipe.eval) { await sync(); await evaluate(step); }
        continue;
      }
      const done = resumed ? pos.stageStep : 0;
      await ctx.progress({ stage: i, stageName: stage.name });
      await ctx.log(`stage ${i + 1}/${recipe.stages.length} "${stage.name}" (${stage.type}, ${stageSteps(stage)} steps)${done ? `, resuming after step ${done}` : ''}`, { type: 'stage', data: { stage: i, name: stage.name, type: stage.type, startStep: step - done } });
      if (stage.type === 'sft') step = await sftStage(stage, i, done, step);
      else step = await rlStage(stage, i, done, step);
      await checkpoint(step, { stage: i, stageStep: stageSteps(stage), stageDone: true });
      // Every stage ends with an evaluation, so the SFT checkpoint is the baseline each RL stage is compared with.
      if (recipe.eval) {
        await sync();
        await evaluate(step);
      }
    }
    summary.steps = step;
    return summary;
  } finally {
    await (engine as OnnxEngine | null)?.close();
  }

  async function sftStage(stage: SftStage, i: number, done: number, step: number): Promise<number> {
    if (done === 0) {
      const steps = stageSteps(stage);
      await trainer.setOptim({ lr: stage.lr, warmup_steps: Math.ceil(steps * stage.warmupRatio), total_steps: steps, schedule: stage.schedule }, false);
    }
    const demos = sftDataset({
      n: stage.data.n, seed: stage.data.seed, shares: stage.data.shares, families: stage.data.families as Family[] | undefined,
      difficulty: stage.data.difficulty, settings: template,
    }).map((d) => tokenizeDemo(d, tok)).filter((d) => d.ids.length <= stage.maxLength);
    let s = step;
    let n = done;
    await runSft(trainer, demos, {
      epochs: stage.epochs, batch: stage.batch, seed: recipe.seed + i, maxSteps: stage.maxSteps, skip: done, signal: ctx.signal,
      onStep: async (m) => {
        s++; n++;
        stale = true;
        await ctx.metrics(s, { 'sft/loss': m.loss, 'sft/grad_norm': m.grad_norm, 'sft/lr': m.lr, 'train/tokens_per_s': m.tokens_per_s });
        await ctx.progress({ step: s });
        if (n % SFT_CHECKPOINT_EVERY === 0) await checkpoint(s, { stage: i, stageStep: n, stageDone: false });
        if (n % 50 === 0) await ctx.log(`sft step ${n}/${stageSteps(stage)} loss ${m.loss.toFixed(3)} (${Math.round(m.tokens_per_s)} tokens/s)`);
      },
    });
    return s;
  }

  async function rlStage(stage: RlStage, i: number, done: number, step: number): Promise<number> {
    if (done === 0) {
      await trainer.setOptim({ lr: stage.lr, warmup_steps: stage.warmupSteps, total_steps: null, schedule: 'constant' }, stage.resetOptimizer);
      if (stage.resetOptimizer) await ctx.log('optimiser state reset for this stage');
    }
    await sync();
    const pool = await stagePool(stage, i);
    if (pool.length === 0) {
      await ctx.log(`stage "${stage.name}": no problems left after filtering; skipping it`, { level: 'warn' });
      return step + (stage.steps - done);
    }
    const cfg = {
      rolloutsPerPrompt: stage.rolloutsPerPrompt, keep: stage.keep,
      roc: { roc: stage.roc.enabled, positiveSelection: stage.roc.positiveSelection, minPerSign: stage.roc.minPerSign, dropEqualReward: stage.roc.dropEqualReward },
      epsLow: stage.epsLow, epsHigh: stage.epsHigh, dualClip: stage.dualClip, temperature: stage.temperature,
      maxResponseTokens: stage.maxResponseTokens, maxTurns: stage.maxTurns, tool: stage.tool, template, toolFormat,
    };
    let s = step;
    for (let n = done + 1; n <= stage.steps; n++) {
      if (ctx.signal?.aborted) throw new Error('training stopped');
      s++;
      const t0 = performance.now();
      const rng = mulberry32((recipe.seed * 1_000_003 + s) >>> 0);
      const prompts = samplePrompts(pool, stage.promptsPerStep, rng);
      const busy0 = (engine as OnnxEngine | null)?.computeMs ?? 0;
      const r = await rlStep({ engine: engine!, tokenizer: tok, sandbox: ctx.sandbox, verifier: ctx.verifier, trainer, signal: ctx.signal, onEvent: ctx.onEvent },
        cfg, prompts, ((recipe.seed * 7919 + s) % 100_000) * 100_000, rng);
      stale = true;
      // Share of the rollout phase the engine spent inside the model (the method.md §6 utilisation).
      const engineBusy = (((engine as OnnxEngine | null)?.computeMs ?? 0) - busy0) / 1000 / Math.max(1e-9, r.timings.rollout);
      const syncS = await sync();
      const t1 = performance.now();
      const byGroup = r.groups;
      await insertTrajectories(db, r.rollouts.map((x) => {
        const sel = byGroup[x.group]!.samples[x.sample]!;
        return toTrajectoryInput(x.trajectory, { reward: x.reward, correct: x.reward > 0, verdict: x.verdict }, {
          runId, step: s, stage: i, split: 'train', problemId: x.problem.id, groupId: `g${String(x.group).padStart(3, '0')}`, sampleIndex: x.sample,
          selected: sel.selected, selectReason: byGroup[x.group]!.dropped ? byGroup[x.group]!.reason : sel.reason, pErr: x.pErr, pFormat: x.pFormat,
        });
      }));
      const storageS = (performance.now() - t1) / 1000;
      await ctx.metrics(s, {
        ...r.metrics,
        'time/rollout': r.timings.rollout, 'time/reward': r.timings.reward, 'time/roc': r.timings.roc, 'time/train': r.timings.train,
        'time/sync': syncS, 'time/storage': storageS, 'time/step': (performance.now() - t0) / 1000, 'engine/busy_fraction': engineBusy,
      });
      await checkpoint(s, { stage: i, stageStep: n, stageDone: false });
      await ctx.progress({ step: s });
      await ctx.log(`step ${s} (${stage.name} ${n}/${stage.steps}): accuracy ${(100 * r.metrics['rollout/accuracy']!).toFixed(1)}%, tool errors ${(100 * r.metrics['rollout/tool_error_rate']!).toFixed(1)}%, kept ${r.metrics['roc/kept']}, ${((performance.now() - t0) / 1000).toFixed(1)} s`, { type: 'step', data: { step: s, metrics: r.metrics } });
      if (recipe.eval?.everySteps && n % recipe.eval.everySteps === 0 && n !== stage.steps) await evaluate(s);
    }
    return s;
  }

  /** The stage's problems; the hard filter (k rollouts each, drop those solved k/k) is run once and remembered. */
  async function stagePool(stage: RlStage, i: number): Promise<TaskProblem[]> {
    const all = await loadProblems(db, stage.data);
    if (stage.dataFilter.kind !== 'hard') return all;
    const file = path.join(ctx.runDir, `stage-${i}-pool.json`);
    if (fs.existsSync(file)) {
      const ids = new Set(JSON.parse(fs.readFileSync(file, 'utf8')) as string[]);
      return all.filter((p) => ids.has(p.id));
    }
    const k = stage.dataFilter.k;
    await ctx.log(`hard-subset filter: ${all.length} problems × ${k} rollouts with the current policy`);
    const ts = await runRollouts(all.flatMap((p, g) => Array.from({ length: k }, (_, j) => ({ id: `f${g}:${j}`, problem: p.question, seed: 900_000_000 + g * k + j }))), {
      engine: engine!, sandbox: ctx.sandbox, template, toolFormat, limits: { maxResponseTokens: stage.maxResponseTokens, maxTurns: stage.maxTurns },
      temperature: stage.temperature, tool: stage.tool, signal: ctx.signal,
    });
    const solved = new Array(all.length).fill(0);
    for (let n = 0; n < ts.length; n++) {
      const g = Math.floor(n / k);
      if ((await scoreTrajectory(ts[n]!, all[g]!.answer, ctx.verifier)).correct) solved[g]++;
    }
    const kept = all.filter((_, g) => solved[g] < k);
    fs.writeFileSync(file, JSON.stringify(kept.map((p) => p.id)));
    await ctx.log(`hard-subset filter: kept ${kept.length} of ${all.length} (dropped ${all.length - kept.length} solved ${k}/${k})`, { type: 'filter', data: { kept: kept.length, total: all.length, k } });
    return kept;
  }
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

