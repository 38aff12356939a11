/**
 * The recipe designer's catalogues of one stage (SFT_FIELDS, RL_FIELDS) and of one evaluation dataset
 * (EVAL_SOURCE_FIELDS), paths relative to that object (field-def.ts says what an entry holds).
 */
import { EMBEDDED_DEFAULTS, REPORT_DEFAULTS, TIS_MODES } from '../../contracts/recipe.ts';
import { byModel, type Catalogue, difficultyField, familiesField, sourceFields, toolFields } from './field-def.ts';

const R = REPORT_DEFAULTS;
const E = EMBEDDED_DEFAULTS;

const stageCommon: Catalogue = {
  type: { label: 'Type', kind: 'fixed', help: 'sft or rl (set when the stage is added).' },
  name: {
    label: 'Stage name',
    kind: 'text',
    help: "Unique name of the stage (shown in the timeline and the run's events).",
  },
};

export const SFT_FIELDS: Catalogue = {
  ...stageCommon,
  'data.kind': {
    label: 'Demonstrations',
    kind: 'variant',
    options: ['generated', 'stored'],
    variants: { generated: { kind: 'generated', n: 1000 }, stored: { kind: 'stored', name: '', n: 300 } },
    help: "generated: demos made from train-split arith problems; stored: demos made from a dataset's worked solutions (GSM8K's calculator notes become the Python call), e.g. gsm8k-test-100.",
  },
  'data.name': {
    label: 'Dataset',
    kind: 'text',
    help: 'A stored dataset whose problems carry worked solutions (npx toolsmith dataset add gsm8k-test-100).',
  },
  'data.version': { label: 'Dataset version', kind: 'int', def: 'latest', help: 'Default: the latest version.' },
  'data.split': {
    label: 'Split',
    kind: 'select',
    options: ['train', 'test', 'all'],
    def: 'train',
    help: 'Split the demonstrations are made from (default train: never the evaluated problems).',
  },
  'data.task': { label: 'Task', kind: 'fixed', def: 'arith', help: 'The generated task (arith is the only one).' },
  'data.n': { label: 'Demonstrations', kind: 'int', help: 'Number of demonstrations.' },
  'data.seed': { label: 'Data seed', kind: 'int', def: '1', help: 'Seed of the generated demonstrations.' },
  'data.shares.tool': {
    label: 'Share: tool',
    kind: 'number',
    def: '0.7',
    help: 'Share of clean tool-call demos (normalised with the others).',
  },
  'data.shares.recover': {
    label: 'Share: recover',
    kind: 'number',
    def: '0.15',
    help: 'Share of demos where a call fails and the next one fixes it.',
  },
  'data.shares.no_tool': {
    label: 'Share: no tool',
    kind: 'number',
    def: '0.15',
    help: 'Share of demos that answer an easy problem without the tool.',
  },
  'data.shares.direct': {
    label: 'Share: direct',
    kind: 'number',
    def: '0',
    help: 'Share of demos that answer a tool-worthy problem straight away, without the tool (right answer, no working).',
  },
  'data.families': familiesField,
  'data.difficulty': difficultyField,
  epochs: {
    label: 'Epochs',
    kind: 'int',
    def: String(R.sft.epochs),
    help: 'Non-reasoning SFT: 3 epochs in the report (§7).',
  },
  lr: {
    label: 'Learning rate',
    kind: 'number',
    def: byModel(R.sft.lr, E.sft.lr),
    help: 'AdamW peak learning rate (report: 5e-6; embedded: 3e-3).',
  },
  warmupRatio: {
    label: 'Warm-up ratio',
    kind: 'number',
    def: String(R.sft.warmupRatio),
    help: 'Share of the steps warming up linearly (report: 4%).',
  },
  schedule: {
    label: 'Schedule',
    kind: 'select',
    options: ['cosine', 'constant'],
    def: R.sft.schedule,
    help: 'Learning-rate decay after warm-up (report: cosine).',
  },
  batch: {
    label: 'Batch',
    kind: 'int',
    def: byModel(R.sft.batch, E.sft.batch),
    help: 'Demonstrations per optimiser step (report: 128; embedded: 8).',
  },
  maxLength: {
    label: 'Max length',
    kind: 'int',
    def: byModel(R.sft.maxLength, 'block_size'),
    help: 'Longest tokenised demo kept; longer ones are dropped (embedded: block_size).',
  },
  maxSteps: {
    label: 'Max steps',
    kind: 'int',
    def: 'epochs × ⌈n / batch⌉',
    help: 'Stop after this many optimiser steps (tuning, tests).',
  },
};

export const RL_FIELDS: Catalogue = {
  ...stageCommon,
  ...sourceFields('data.', 'train'),
  steps: {
    label: 'Steps',
    kind: 'int',
    def: byModel(R.rl.steps, E.rl.steps),
    help: 'Optimiser steps, one fully on-policy update each (report: 300, 85, 125 in stages 1–3).',
  },
  promptsPerStep: {
    label: 'Prompts per step',
    kind: 'int',
    def: byModel(R.rl.promptsPerStep, E.rl.promptsPerStep),
    help: 'Questions per step (paper: 512; released scripts: 128).',
  },
  rolloutsPerPrompt: {
    label: 'Rollouts per prompt (2G)',
    kind: 'int',
    def: byModel(R.rl.rolloutsPerPrompt, E.rl.rolloutsPerPrompt),
    help: '2G: rollouts sampled per question (report: 2G = 32).',
  },
  keep: {
    label: 'Kept per group (G)',
    kind: 'int',
    def: 'half of 2G (all without RoC)',
    help: 'G: rollouts kept after Resample-on-Correct down-sampling (report: G = 16).',
  },
  'roc.enabled': {
    label: 'RoC on',
    kind: 'bool',
    def: 'true',
    help: 'Resample-on-Correct (§5); off = plain GRPO, keeping every rollout of a non-dropped group.',
  },
  'roc.positiveSelection': {
    label: 'Positive selection',
    kind: 'select',
    options: ['weighted', 'lowest'],
    def: 'weighted',
    help: 'Keep positives weighted by 1 / p_total (paper) or the lowest p_total (released code).',
  },
  'roc.minPerSign': {
    label: 'Min per sign',
    kind: 'int',
    def: '2',
    help: 'Keep at least this many positives and negatives where available (released code: 2).',
  },
  'roc.dropEqualReward': {
    label: 'Drop equal-reward groups',
    kind: 'bool',
    def: 'true',
    help: 'Drop groups whose rewards are all 0 or all 1: they carry no signal (released code).',
  },
  epsLow: {
    label: 'ε_low',
    kind: 'number',
    def: String(R.rl.epsLow),
    help: "ε_low = 0.2: lower clip of the ratio (1 − ε_low); the report's value.",
  },
  epsHigh: {
    label: 'ε_high',
    kind: 'number',
    def: String(R.rl.epsHigh),
    help: "ε_high = 0.28 (Clip-Higher): upper clip of the ratio; the report's value.",
  },
  dualClip: {
    label: 'Dual-clip c',
    kind: 'number',
    nullable: true,
    def: 'off',
    help: 'Dual-clip constant c > 1 on negative advantages (verl: 3); empty = off (paper).',
  },
  'tis.mode': {
    label: 'Mismatch correction (TIS)',
    kind: 'select',
    options: TIS_MODES,
    def: R.rl.tis.mode,
    help: "Truncated importance sampling on π_trainer / π_engine: token = min(ρ, C) per token, sequence = one capped weight per trajectory, mask = drop tokens with ρ outside [1/C, C], off. Needs the engine's log-probs; without them the step runs uncorrected.",
  },
  'tis.cap': {
    label: 'TIS cap C',
    kind: 'number',
    def: String(R.rl.tis.cap),
    help: 'C > 1: the largest weight (token, sequence) or the band [1/C, C] (mask); TRL and verl use 2–3.',
  },
  lr: {
    label: 'Learning rate',
    kind: 'number',
    def: byModel(R.rl.lr, E.rl.lr),
    help: 'AdamW learning rate, constant after warm-up (report: 1e-6; embedded: 1e-4).',
  },
  warmupSteps: {
    label: 'Warm-up steps',
    kind: 'int',
    def: byModel(R.rl.warmupSteps, E.rl.warmupSteps),
    help: 'Linear warm-up steps (report: 20).',
  },
  temperature: {
    label: 'Temperature',
    kind: 'number',
    def: String(R.rl.temperature),
    help: 'Rollout sampling temperature (report: 1.0).',
  },
  maxResponseTokens: {
    label: 'Max response tokens',
    kind: 'int',
    def: byModel(R.rl.maxResponseTokens, 'block_size − prompt'),
    help: 'Response budget per trajectory, tool tokens included (report: 8K in stage 1, 12K in stages 2–3).',
  },
  maxTurns: {
    label: 'Max turns',
    kind: 'int',
    def: byModel(R.rl.maxTurns, E.rl.maxTurns),
    help: 'Most assistant turns per rollout (paper: 10 in stages 1–2, 15 in stage 3; released code: 5).',
  },
  tool: {
    label: 'Own tool limits',
    kind: 'toggle',
    on: { timeoutS: 4, memoryMb: 1024, session: false, seedCalls: false },
    help: "Override the recipe's tool limits for this stage (default: the recipe's).",
  },
  ...toolFields('tool.', ' in this stage'),
  'dataFilter.kind': {
    label: 'Problems',
    kind: 'variant',
    options: ['all', 'hard'],
    variants: { all: { kind: 'all' }, hard: { kind: 'hard', k: R.rl.hardK } },
    help: 'all, or the hard subset: run the policy k× per problem and drop those solved k/k (report: stage 3).',
  },
  'dataFilter.k': {
    label: 'Hard filter k',
    kind: 'int',
    def: String(R.rl.hardK),
    help: 'Rollouts per problem for the hard filter (report: 8).',
  },
  'dataFilter.dropSolved': {
    label: 'Drop solved',
    kind: 'fixed',
    def: 'true',
    help: 'Problems solved k/k are dropped (always).',
  },
  resetOptimizer: {
    label: 'Reset optimiser',
    kind: 'bool',
    def: 'false',
    help: 'Fresh AdamW moments at the start of the stage (report: stage 3).',
  },
  'async.enabled': {
    label: 'Asynchronous steps',
    kind: 'bool',
    def: 'false',
    help: "Generate the next step's rollouts while this step trains (one-step off-policy; TIS corrects the lag). Off: the report's synchronous loop.",
  },
  'async.maxStaleness': {
    label: 'Max staleness',
    kind: 'int',
    def: '1',
    help: 'At most this many updates between the weights a batch was sampled with and the trainer that trains on it (0 = synchronous).',
  },
  'dynamicSampling.enabled': {
    label: 'Dynamic sampling',
    kind: 'bool',
    def: 'false',
    help: "Draw more prompts until the step has promptsPerStep groups with mixed rewards (DAPO; verl filter_groups). Off: the report's loop, equal-reward groups dropped and not replaced.",
  },
  'dynamicSampling.maxGenBatches': {
    label: 'Max generation rounds',
    kind: 'int',
    def: '4',
    help: 'Rounds of generation per step, the first included (verl max_num_gen_batches); short of its groups at the cap, the step trains what it has and reports it.',
  },
  'curriculum.enabled': {
    label: 'Pass-rate curriculum',
    kind: 'bool',
    def: 'false',
    help: "Draw first the problems the current policy solves sometimes (from this run's stored rollouts and evaluations), then untried ones; skip those solved always or never.",
  },
  'curriculum.minSamples': {
    label: 'Curriculum min outcomes',
    kind: 'int',
    def: '4',
    help: 'Outcomes a problem needs before "solved always" or "never" counts (fewer: untried).',
  },
  'curriculum.windowSteps': {
    label: 'Curriculum window (steps)',
    kind: 'int',
    def: '20',
    help: 'Only outcomes of the last this-many run steps estimate the pass rate: the current policy, not an old one.',
  },
  'async.partialRollouts': {
    label: 'Partial rollouts',
    kind: 'bool',
    def: 'false',
    help: 'Hand each update to the engine at once: rollouts in flight continue on the new weights from their next turn (each turn keeps its version).',
  },
};

export const EVAL_SOURCE_FIELDS: Catalogue = sourceFields('', 'test');

/** Which source fields a data source of each kind shows. */
export const SOURCE_KEYS = {
  generated: ['kind', 'task', 'split', 'n', 'seed', 'families', 'difficulty'],
  stored: ['kind', 'name', 'version', 'split', 'limit', 'pick'],
} as const;
