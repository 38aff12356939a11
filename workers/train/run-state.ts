/** What the stages of a training run share: the job's context and the run's parts (docs/method.md §7). */
import type { EventOptions } from '../../contracts/events.ts';
import type { EvalRow } from '../../contracts/eval.ts';
import type { Recipe } from '../../contracts/recipe.ts';
import type { Database } from '../../server/db/client.ts';
import type { Tokenizer } from '../engines/tokenizer.ts';
import type { PolicyEngineFactory } from '../engines/types.ts';
import type { Verifier } from '../reward/verifier.ts';
import type { RolloutEvent } from '../rollout/agent.ts';
import type { TemplateSettings } from '../rollout/template.ts';
import type { Sandbox } from '../sandbox/types.ts';
import type { Trainer } from '../trainer/types.ts';
import type { Checkpoints } from './checkpoints.ts';
import type { PolicySync } from '../policy/policy-sync.ts';

/** What the job handler hands the orchestrator: the processes it assembled and where to report. */
export interface TrainContext {
  db: Database;
  runId: string;
  trainer: Trainer;
  sandbox: Sandbox;
  verifier: Verifier;
  /** Builds the engine that serves the policy's rollouts (the orchestrator does not know which engine it is). */
  policyEngine: PolicyEngineFactory;
  /** The directory of a model registered by name (the models folder); throws a UserError for an unknown name. */
  modelDir(name: string): string;
  /** Where this run's checkpoints and exports live (data/runs/<runId>). */
  runDir: string;
  signal?: AbortSignal;
  log(message: string, opts?: EventOptions): Promise<void>;
  metrics(step: number, values: Record<string, number>): Promise<void>;
  progress(p: { stage?: number; stageName?: string; step?: number; totalSteps?: number }): Promise<void>;
  onEvent?: (e: RolloutEvent) => void;
}

/** One run in progress: the context, the recipe and what every stage uses. */
export interface TrainRun {
  ctx: TrainContext;
  recipe: Recipe;
  template: TemplateSettings;
  tokenizer: Tokenizer;
  policy: PolicySync;
  checkpoints: Checkpoints;
  /** Evaluate the policy at a step (a no-op without recipe.eval). */
  evaluate(step: number): Promise<void>;
}

export interface TrainSummary {
  steps: number;
  evals: { step: number; rows: EvalRow[] }[];
}
