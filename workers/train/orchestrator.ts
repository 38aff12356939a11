/**
 * The "train" job's driver (docs/method.md §5, §7): a recipe's stages in order, every step stored, resumable.
 *
 * Steps are numbered across the run (SFT steps first, then RL steps), which is the x axis of every chart. Each stage
 * is its own function (sft-stage.ts, rl-stage.ts); checkpoints.ts makes the run durable, workers/policy/policy-sync.ts
 * keeps the engine on the trainer's weights, run-eval.ts evaluates after every stage. The seeded prompt/rollout
 * streams depend only on the step number, so a resumed run neither skips nor duplicates a step.
 */
import path from 'node:path';
import { stageSteps, totalSteps, type Recipe } from '../../contracts/recipe.ts';
import { HfTokenizer } from '../engines/hf-tokenizer.ts';
import { EMBEDDED_VOCAB } from '../engines/tokenizer.ts';
import type { LoadParams } from '../trainer/types.ts';
import { templateSettings, type TemplateSettings } from '../rollout/template.ts';
import { Checkpoints, type Position } from './checkpoints.ts';
import { PolicySync } from '../policy/policy-sync.ts';
import { runRlStage } from './rl-stage.ts';
import { runEvaluator } from './run-eval.ts';
import type { TrainContext, TrainRun, TrainSummary } from './run-state.ts';
import { runSftStage } from './sft-stage.ts';

export type { TrainContext, TrainSummary } from './run-state.ts';

export function recipeTemplate(r: Recipe): TemplateSettings {
  return templateSettings({
    toolName: r.template.toolName,
    reasonTag: r.template.reasonTag,
    answerTag: r.template.answerTag,
    variant: r.template.variant,
  });
}

/** Resume from the last checkpoint, start from the recipe's named model, or initialise the embedded model. */
async function startTrainer(ctx: TrainContext, recipe: Recipe, checkpoints: Checkpoints): Promise<Position> {
  const pos = await checkpoints.position();
  const t = recipe.trainer;
  const common: Omit<LoadParams, 'path'> = { device: t.device, gradient_checkpointing: t.gradientCheckpointing };
  if (pos.path) {
    await ctx.log(
      `resuming from the checkpoint at step ${pos.step} (stage ${pos.stage + 1}, ${pos.stageStep} steps into it)`,
      { type: 'resume' },
    );
    await checkpoints.rollBack(pos.step);
    await ctx.trainer.load({ path: pos.path, ...common });
  } else if (recipe.model.kind === 'model') {
    const lora = t.lora && {
      rank: t.lora.rank,
      alpha: t.lora.alpha,
      dropout: t.lora.dropout,
      target_modules: t.lora.targetModules,
    };
    await ctx.trainer.load({ path: ctx.modelDir(recipe.model.name), fresh: true, lora, ...common });
  } else {
    const { kind: _k, ...model } = recipe.model;
    await ctx.trainer.init({ model, vocab: EMBEDDED_VOCAB, seed: recipe.seed, ...common });
  }
  return pos;
}

export async function runTraining(ctx: TrainContext, recipe: Recipe): Promise<TrainSummary> {
  const template = recipeTemplate(recipe);
  const exportDir = path.join(ctx.runDir, 'export');
  const checkpoints = new Checkpoints(ctx.db, ctx.runId, ctx.trainer, ctx.runDir);
  const summary: TrainSummary = { steps: 0, evals: [] };
  const pos = await startTrainer(ctx, recipe, checkpoints);
  // The model's tokenizer as the trainer holds it: the same files every export carries to the engine.
  const tok = HfTokenizer.fromFiles(await ctx.trainer.tokenizerFiles());
  await ctx.progress({ totalSteps: totalSteps(recipe), step: pos.step });
  const weights = recipe.engine.kind === 'embedded' ? recipe.engine.weights : 'float32';
  const policy = new PolicySync(ctx.trainer, ctx.policyEngine, exportDir, weights);
  const run: TrainRun = {
    ctx,
    recipe,
    template,
    tokenizer: tok,
    policy,
    checkpoints,
    evaluate: runEvaluator(ctx, recipe, template, policy, exportDir, summary),
  };
  // Every stage ends with an evaluation, so the SFT checkpoint is the baseline each RL stage is compared with.
  const evaluateNow = async (step: number) => {
    if (recipe.eval) {
      await policy.sync();
      await run.evaluate(step);
    }
  };
  try {
    let step = pos.step;
    // The starting model's baseline, before any stage (again after a crash that came before the first checkpoint).
    if (recipe.eval?.atStart && pos.path === null) {
      await ctx.log('evaluating the starting model before the first stage');
      await evaluateNow(step);
    }
    for (let i = pos.stage; i < recipe.stages.length; i++) {
      const stage = recipe.stages[i]!;
      const resumed = i === pos.stage && pos.path !== null;
      if (resumed && pos.stageDone) {
        // The crash may have come during this stage's evaluation: finish it (stored benchmarks are skipped).
        await evaluateNow(step);
        continue;
      }
      const done = resumed ? pos.stageStep : 0;
      await ctx.progress({ stage: i, stageName: stage.name });
      await ctx.log(
        `stage ${i + 1}/${recipe.stages.length} "${stage.name}" (${stage.type}, ${stageSteps(stage)} steps)${done ? `, resuming after step ${done}` : ''}`,
        { type: 'stage', data: { stage: i, name: stage.name, type: stage.type, startStep: step - done } },
      );
      step =
        stage.type === 'sft'
          ? await runSftStage(run, stage, i, done, step)
          : await runRlStage(run, stage, i, done, step);
      await checkpoints.save(step, { stage: i, stageStep: stageSteps(stage), stageDone: true });
      await evaluateNow(step);
    }
    summary.steps = step;
    return summary;
  } finally {
    await policy.close();
  }
}
