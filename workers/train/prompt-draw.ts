/**
 * A step's prompts and their rollouts (docs/method.md §5 "Dynamic sampling and the pass-rate curriculum"): the
 * curriculum's order from the run's stored outcomes, then rounds of generation until the step has its groups with
 * mixed rewards or the cap. The decisions are the pure functions of workers/rl/curriculum.ts and
 * workers/rl/dynamic-sampling.ts; this file reads the outcomes and runs the rounds.
 */
import type { RlStage } from '../../contracts/recipe.ts';
import type { Database } from '../../server/db/client.ts';
import { listProblemOutcomes } from '../../server/store/trajectories.ts';
import { curriculumOrder, outcomesById } from '../rl/curriculum.ts';
import { isMixed, nextRoundSize, PromptDraw } from '../rl/dynamic-sampling.ts';
import type { Rng } from '../rl/sampling.ts';
import type { TaskProblem } from './data.ts';
import { generateStep, type GeneratedStep, type RlStepConfig, type RlStepDeps } from './rl-step.ts';

export interface DrawContext {
  db: Database;
  runId: string;
  pool: TaskProblem[];
  stage: Pick<RlStage, 'promptsPerStep' | 'dynamicSampling' | 'curriculum'>;
  /**
   * The last run step whose stored outcomes the curriculum reads. It must not depend on timing: rl-stage.ts gives
   * step − 1 in the synchronous loop and step − 2 with a look-ahead (whose draw starts before step − 1 is stored), so
   * a resumed step draws what the uninterrupted run drew.
   */
  outcomesUpTo: number;
  /** The step's stream: the first round's shuffle (as samplePrompts), then RoC. */
  stepRng: Rng;
  /** The curriculum's shuffle and the later rounds' draws: kept apart so RoC's stream does not depend on them. */
  drawRng: Rng;
  seedBase: number;
}

/** Draw and roll out a step's prompts: one round without dynamic sampling, up to maxGenBatches with it. */
export async function drawAndGenerate(
  deps: Omit<RlStepDeps, 'trainer'>,
  cfg: RlStepConfig,
  c: DrawContext,
): Promise<GeneratedStep> {
  const { stage } = c;
  let draw: PromptDraw<TaskProblem>;
  let tiers: NonNullable<GeneratedStep['sampling']>['tiers'] = null;
  if (stage.curriculum.enabled) {
    const rows = await listProblemOutcomes(c.db, {
      runId: c.runId,
      fromStep: c.outcomesUpTo - stage.curriculum.windowSteps + 1,
      toStep: c.outcomesUpTo,
    });
    const order = curriculumOrder(c.pool, outcomesById(rows), stage.curriculum.minSamples, c.drawRng);
    draw = PromptDraw.inOrder(order.order, order.skipFrom);
    tiers = order.counts;
  } else draw = new PromptDraw(c.pool);
  const target = stage.promptsPerStep;
  const maxRounds = stage.dynamicSampling.enabled ? stage.dynamicSampling.maxGenBatches : 1;
  const parts: GeneratedStep[] = [];
  let drawn = 0;
  let mixed = 0;
  for (;;) {
    const n = nextRoundSize({ target, drawn, mixed, rounds: parts.length, maxRounds, available: draw.available });
    if (n === 0) break;
    const prompts = draw.take(n, parts.length === 0 ? c.stepRng : c.drawRng);
    const part = await generateStep(deps, cfg, prompts, c.seedBase, drawn);
    for (let g = 0; g < prompts.length; g++)
      if (isMixed(part.rollouts.filter((r) => r.group === drawn + g).map((r) => r.reward))) mixed++;
    drawn += prompts.length;
    parts.push(part);
  }
  return {
    prompts: parts.flatMap((p) => p.prompts),
    rollouts: parts.flatMap((p) => p.rollouts),
    timings: {
      rollout: parts.reduce((a, p) => a + p.timings.rollout, 0),
      reward: parts.reduce((a, p) => a + p.timings.reward, 0),
    },
    spans: parts.flatMap((p) => p.spans),
    sampling: {
      target: stage.dynamicSampling.enabled ? target : null,
      rounds: parts.length,
      short: stage.dynamicSampling.enabled && mixed < target,
      skipped: tiers ? draw.skipped : 0,
      tiers,
    },
  };
}
