/**
 * The per-step metric keys a run records and its pages read: written by the training loop (workers/train/rl-step.ts,
 * rl-stage.ts, sft-stage.ts) and by imports (server/imports/store-foreign.ts), read by the dashboard
 * (components/runs/dashboard.ts), compare and the planner's calibration (contracts/plan.ts). A writer's record is
 * checked against this list (`satisfies StepMetrics`), so a key renamed on one side fails the build on the other.
 * Evaluation results go under `eval/<benchmark>/<figure>` (EVAL_METRIC_PREFIX), named by the run's datasets.
 */

/** The policy update's own numbers, recorded under train/ (workers/train/rl-step.ts policyMetrics). */
export const POLICY_METRICS = [
  'loss',
  'clip_frac_low',
  'clip_frac_high',
  'dual_clip_frac',
  'approx_kl',
  'entropy',
  'grad_norm',
  'lr',
  'tokens_per_s',
  'mismatch_kl',
  'tis_mean_weight',
  'tis_truncated_frac',
  'tis_masked_frac',
  'tis_tokens',
] as const;
export type PolicyMetric = (typeof POLICY_METRICS)[number];

export const METRIC_KEYS = [
  // Rollouts of an RL step (or of an imported step).
  'rollout/accuracy',
  'rollout/accuracy_lo',
  'rollout/accuracy_hi',
  'rollout/tool_error_rate',
  'rollout/tool_error_rate_correct',
  'rollout/tool_error_rate_kept_correct',
  'rollout/response_length',
  'rollout/response_length_correct',
  'rollout/turns',
  'rollout/tool_calls',
  'rollout/no_tool_call_rate',
  'rollout/finish_length_rate',
  // GRPO-RoC's selection and the groups that carry a signal.
  'roc/groups_dropped',
  'roc/groups_kept',
  'roc/kept',
  'roc/p_err_positives',
  'roc/p_err_kept_positives',
  'sampling/groups_drawn',
  'sampling/groups_mixed',
  'sampling/gen_batches',
  'sampling/short',
  'curriculum/skipped',
  'curriculum/sometimes',
  'curriculum/unknown',
  // The update.
  ...POLICY_METRICS.map((k) => `train/${k}` as const),
  'train/tis_applied',
  'train/tis_coverage',
  'train/logprob_gap',
  'sft/loss',
  'sft/grad_norm',
  'sft/lr',
  // Where a step's time went, in seconds.
  'time/rollout',
  'time/reward',
  'time/roc',
  'time/train',
  'time/sync',
  'time/storage',
  'time/step',
  'time/trainer_idle',
  'time/engine_idle',
  'engine/busy_fraction',
  'engine/mean_batch',
  'engine/prefill_fraction',
  'sandbox/latency_ms',
  // Async RL.
  'async/staleness_mean',
  'async/staleness_max',
  'async/off_policy_token_share',
  // An imported step.
  'import/trajectories',
] as const;
export type MetricKey = (typeof METRIC_KEYS)[number];

/** An evaluation figure's key: `eval/<benchmark>/<figure>`. */
export const EVAL_METRIC_PREFIX = 'eval/';
export type EvalMetricKey = `${typeof EVAL_METRIC_PREFIX}${string}`;

/** One step's record, as a writer builds it. */
export type StepMetrics = Partial<Record<MetricKey | EvalMetricKey, number>>;
