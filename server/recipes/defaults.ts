/**
 * Built-in recipes. `embedded-arith` is the workbench's default (docs/method.md §7 scaled down): SFT → RL stage 1 →
 * RL stage 2 (longer response budget) → RL stage 3 (hard subset, optimiser reset), on the generated arith task and
 * the embedded transformer, sized to finish in about 15 minutes on a 2-core CPU. `micro` is a seconds-long recipe
 * for tests. Client-safe (no node: imports).
 */
import { parseRecipe, REPORT_DEFAULTS, type Recipe, type RecipeInput } from '../../contracts/recipe.ts';

/**
 * The knobs of embedded-arith in one place, to calibrate against the 15-minute budget. Cost is dominated by
 * SFT steps × batch and by RL steps × prompts × rollouts × (turns, response tokens) plus the stage-3 hard filter
 * (hardPool × hardK rollouts) and each evaluation (evalProblems × evalK rollouts).
 */
export const EMBEDDED_ARITH_KNOBS = {
  /** A Qwen3-architecture model from scratch (~0.3M parameters, docs/recipes-and-training.md "The default recipe"). */
  model: { arch: 'qwen3' as const, n_layer: 4, n_head: 4, n_embd: 64, block_size: 512 },
  /** SFT: 1 epoch × ⌈24000 / 8⌉ = 3000 steps (the report does 3 epochs; fresh generated demos serve the tiny model
   *  better than repeats). Qwen3 learns to copy numbers from the problem into its code only after ~1,500 steps at a
   *  high learning rate: with 2,000 steps its held-out pass@1 after SFT was 1.2%; with 3,000 the samples that call
   *  the tool are right 77% of the time. */
  sftDemos: 24000,
  sftEpochs: 1,
  sftBatch: 8,
  sftLr: 3e-3,
  /** Demo kinds. 30% are `direct` (a tool-worthy problem answered straight away, workers/tasks/demos.ts), as a
   *  non-reasoning SFT's data has solutions that just state their result: the SFT policy then answers about a quarter
   *  of the held-out problems without the tool, and is almost always wrong there (held-out pass@1 58%, pass@4 88%).
   *  That is the headroom RL closes: it learns from reward alone to call the tool (docs/recipes-and-training.md "The default recipe"). */
  sftShares: { tool: 0.45, recover: 0.15, no_tool: 0.1, direct: 0.3 },
  /** RL: 8 prompts × 2G = 8 rollouts (G = 4) per step. */
  rlPrompts: 8,
  rlRollouts: 8,
  rlKeep: 4,
  rlLr: 1e-4,
  rlWarmup: 2,
  /** Prompts are 162–206 characters, so prompt + response stays under block_size (512). */
  /** RL starts with fresh AdamW moments, as the report's RL starts from its SFT checkpoint: SFT's second moments
   *  (β2 = 0.999 remembers ~1,000 steps of SFT gradients) would scale RL's first updates down. Carried over, the
   *  three stages gained 8.6 points in one run; from the same SFT checkpoint with fresh moments, 14.9. */
  stage1: { steps: 16, maxResponseTokens: 240, maxTurns: 4, resetOptimizer: true },
  stage2: { steps: 12, maxResponseTokens: 300, maxTurns: 5 },
  /** Stage 3 resets AdamW's moments (report); the first steps after a reset move every weight by ~lr, so it warms up
   *  over 6 steps instead of 2 (with 2, held-out pass@1 fell from 82% to 77% in one run). */
  stage3: { steps: 12, maxResponseTokens: 300, maxTurns: 5, warmupSteps: 6 },
  rlPool: 2000,
  /** Stage 3 pool and the hard filter's k (report: 8). */
  hardPool: 128,
  hardK: 4,
  /** 256 held-out problems × 2 samples: the paired SFT → last-stage difference has a 95% interval of about ±3.5
   *  points (64 problems × 4 gave ±10 on pass@1 alone). An evaluation costs ~20 s; with k = 4, ~40 s, and the
   *  four of them pushed the recipe past 15 minutes on a slow hour of this machine (924 s). */
  evalProblems: 256,
  evalK: 2,
} as const;

/** The short prompt of the small recipes: one system line naming the tool `python`, the paper's tags and format. */
const MINIMAL_PYTHON_TEMPLATE = {
  toolName: 'python',
  reasonTag: 'reason',
  answerTag: 'answer',
  variant: 'minimal' as const,
  toolFormat: { style: 'paper' as const, maxFieldChars: null, middle: null },
};
const SMALL_TOOL_LIMITS = { timeoutS: 4, memoryMb: 1024, session: false, seedCalls: false };

const K = EMBEDDED_ARITH_KNOBS;
const rlCommon = {
  type: 'rl' as const,
  promptsPerStep: K.rlPrompts,
  rolloutsPerPrompt: K.rlRollouts,
  keep: K.rlKeep,
  roc: { enabled: true, positiveSelection: 'weighted' as const, minPerSign: 2, dropEqualReward: true },
  epsLow: 0.2,
  epsHigh: 0.28,
  dualClip: null,
  lr: K.rlLr,
  warmupSteps: K.rlWarmup,
  temperature: 1.0,
};

export const EMBEDDED_ARITH_INPUT = {
  name: 'embedded-arith',
  description:
    'rStar2-Agent recipe scaled to the embedded character-level transformer and the generated arithmetic task: ' +
    'non-reasoning SFT (a third of whose tool-worthy demonstrations answer without the tool), then GRPO-RoC in three ' +
    'stages (longer budget, then the hard subset with the optimiser reset), which learn to call the tool. ' +
    'About 13 minutes on a 2-core CPU.',
  seed: 1,
  model: { kind: 'embedded', ...K.model },
  tokenizer: { kind: 'char' },
  template: MINIMAL_PYTHON_TEMPLATE,
  tool: SMALL_TOOL_LIMITS,
  stages: [
    {
      type: 'sft',
      name: 'sft',
      data: { kind: 'generated', task: 'arith', n: K.sftDemos, seed: 1, shares: K.sftShares },
      epochs: K.sftEpochs,
      lr: K.sftLr,
      warmupRatio: 0.04,
      schedule: 'cosine',
      batch: K.sftBatch,
      maxLength: K.model.block_size,
    },
    {
      ...rlCommon,
      name: 'rl-stage-1',
      data: { kind: 'generated', task: 'arith', split: 'train', n: K.rlPool, seed: 11 },
      ...K.stage1,
      dataFilter: { kind: 'all' },
    },
    {
      ...rlCommon,
      name: 'rl-stage-2',
      data: { kind: 'generated', task: 'arith', split: 'train', n: K.rlPool, seed: 12 },
      ...K.stage2,
      dataFilter: { kind: 'all' },
      resetOptimizer: false,
    },
    {
      ...rlCommon,
      name: 'rl-stage-3-hard',
      data: { kind: 'generated', task: 'arith', split: 'train', n: K.hardPool, seed: 13 },
      ...K.stage3,
      dataFilter: { kind: 'hard', k: K.hardK, dropSolved: true },
      resetOptimizer: true,
    },
  ],
  eval: {
    datasets: [{ kind: 'generated', task: 'arith', split: 'test', n: K.evalProblems, seed: 7 }],
    k: K.evalK,
    temperature: 0.6,
    maxTokens: K.stage2.maxResponseTokens,
    maxTurns: K.stage2.maxTurns,
    everySteps: null,
  },
} satisfies RecipeInput;

/** The default recipe, parsed (every default filled in). */
export const EMBEDDED_ARITH: Recipe = parseRecipe(EMBEDDED_ARITH_INPUT);

/** A recipe that runs in seconds (tests): ~30 SFT steps, then 2 RL steps of 2 prompts × 4 rollouts. */
export const MICRO_INPUT = {
  name: 'micro',
  description: 'Tiny smoke-test recipe: a few SFT steps and two RL steps.',
  seed: 1,
  stages: [
    { type: 'sft', name: 'sft', data: { kind: 'generated', n: 60, seed: 1 }, epochs: 2, batch: 4 },
    {
      type: 'rl',
      name: 'rl',
      data: { kind: 'generated', n: 16, seed: 2 },
      steps: 2,
      promptsPerStep: 2,
      rolloutsPerPrompt: 4,
      keep: 2,
      warmupSteps: 0,
      maxResponseTokens: 200,
      maxTurns: 2,
    },
  ],
  eval: { datasets: [{ kind: 'generated', n: 4, seed: 3 }], k: 2, maxTokens: 200, maxTurns: 2 },
} satisfies RecipeInput;

export const MICRO: Recipe = parseRecipe(MICRO_INPUT);

/**
 * The report's run (docs/method.md §5, §7, §8) for a real model: Qwen3-14B-Base after its non-reasoning SFT,
 * trained with GRPO-RoC in three stages on the integer-answer RL set, on 64 GPUs (8 nodes × 8). It validates
 * anywhere; launched where the model, the GPUs, the nodes, the datasets or the engines are missing, the worker's
 * preflight (contracts/preflight.ts) names each missing piece instead of starting. The SFT stage is not part of
 * it: the report's SFT data is not shipped here, so the recipe starts from a model already SFT'd (register it as
 * `qwen3-14b-sft` with `npx toolsmith model import DIR --name qwen3-14b-sft`). The RL set (`rstar2-rl-42k`, 42K
 * integer-answer problems) and AIME24 are stored datasets to import first (`npx toolsmith dataset import`).
 */
const R = REPORT_DEFAULTS;
const reportRl = {
  type: 'rl' as const,
  data: { kind: 'stored' as const, name: 'rstar2-rl-42k', split: 'train' as const },
  // 2G = 32 rollouts, G = 16 kept. Prompts per step: the paper's 512; the released scripts use 128.
  promptsPerStep: R.rl.promptsPerStep,
  rolloutsPerPrompt: R.rl.rolloutsPerPrompt,
  keep: R.rl.keep,
  roc: { enabled: true, positiveSelection: 'weighted' as const, minPerSign: 2, dropEqualReward: true },
  epsLow: R.rl.epsLow,
  epsHigh: R.rl.epsHigh,
  dualClip: null,
  lr: R.rl.lr,
  warmupSteps: R.rl.warmupSteps,
  temperature: 1.0,
};
export const RSTAR2_QWEN3_14B_INPUT = {
  name: 'rstar2-qwen3-14b',
  description:
    "The rStar2-Agent report's RL run: Qwen3-14B-Base (after non-reasoning SFT) trained with GRPO-RoC (2G = 32, G = 16, " +
    '512 prompts per step; the released scripts use 128), ε 0.2/0.28, lr 1e-6 after a 20-step warm-up, three stages ' +
    '(8K response and 10 turns; 12K and 10 turns; 12K and 15 turns on the hard subset with the optimiser reset), ' +
    'evaluated at temperature 0.6 with k = 16 and 30 turns. Needs 8 nodes × 8 GPUs and SGLang/vLLM rollout servers.',
  seed: 0,
  model: { kind: 'model', name: 'qwen3-14b-sft' },
  trainer: { ranks: 8, nodes: 8, device: 'cuda', gradientCheckpointing: true, microBatchTokens: 32_768 },
  // The report ran SGLang; weights reach it after every update through the shared weight-sync folder (docs/scaling-out.md "Weight sync").
  engine: { kind: 'openai', urls: ['http://rollout-0:30000/v1'], weightSync: { mode: 'sglang' } },
  template: { variant: 'full', toolName: 'execute_python_code_with_standard_io' },
  stages: [
    {
      ...reportRl,
      name: 'rl-stage-1-8k',
      steps: 300,
      maxResponseTokens: 8192,
      maxTurns: 10,
      dataFilter: { kind: 'all' },
      resetOptimizer: false,
    },
    {
      ...reportRl,
      name: 'rl-stage-2-12k',
      steps: 85,
      maxResponseTokens: 12_288,
      maxTurns: 10,
      dataFilter: { kind: 'all' },
      resetOptimizer: false,
    },
    {
      ...reportRl,
      name: 'rl-stage-3-hard',
      steps: 125,
      maxResponseTokens: 12_288,
      maxTurns: 15,
      dataFilter: { kind: 'hard', k: R.rl.hardK, dropSolved: true },
      resetOptimizer: true,
    },
  ],
  eval: {
    datasets: [{ kind: 'stored', name: 'aime24', split: 'test' }],
    k: R.eval.k,
    temperature: R.eval.temperature,
    maxTokens: R.eval.maxTokens,
    maxTurns: R.eval.maxTurns,
    everySteps: 50,
  },
} satisfies RecipeInput;

export const RSTAR2_QWEN3_14B: Recipe = parseRecipe(RSTAR2_QWEN3_14B_INPUT);

/**
 * A real pretrained model on real problems, sized for a 2-core CPU (docs/real-models-and-datasets.md "A real model on real problems"):
 * SmolLM2-135M-Instruct (`npx toolsmith model fetch smollm2-135m-instruct`) with LoRA, non-reasoning SFT made from the
 * worked solutions of GSM8K's training-side originals (`dataset add gsm8k-test-100`), then GRPO-RoC in two stages on
 * the training-side variants (`dataset add gsm-symbolic-variants`), evaluated before SFT, after it and after each
 * stage on the held-out originals and samples of the held-out variants, champ-int and rg-arithmetic. Cost (measured on this 2-core machine): the ONNX engine decodes SmolLM2 at ~24
 * tokens/s whatever the batch, an SFT step of 4 demos takes ~5 s, an RL step ~2 minutes, an evaluation 3–5 minutes.
 * On a GPU, `trainer.device: "cuda"` is the one setting to change; the knobs below then scale up (more demos, prompts,
 * steps and samples, as in rstar2-qwen3-14b).
 */
export const SMOLLM2_GSM_KNOBS = {
  model: 'smollm2-135m-instruct',
  /** 400 demos × 1 epoch / batch 4 = 100 SFT steps (~9 minutes). */
  sftDemos: 400,
  sftBatch: 4,
  sftLr: 2e-4,
  /** As the embedded recipe's: a quarter answer a tool-worthy problem without working (the headroom RL can close). */
  sftShares: { tool: 0.5, recover: 0.1, no_tool: 0.15, direct: 0.25 },
  /** GRPO-RoC: 4 prompts × 2G = 6 rollouts, G = 4 kept (~100 s of decoding per step). */
  rlPrompts: 4,
  rlRollouts: 6,
  rlKeep: 4,
  rlLr: 2e-5,
  stage1: { steps: 5, maxResponseTokens: 160, maxTurns: 3 },
  stage2: { steps: 5, maxResponseTokens: 200, maxTurns: 3 },
  /** The 47 held-out originals, one sample each: ~3 minutes an evaluation (the start, with a rambling base model, ~5). */
  evalK: 1,
  /** The other held-out sets, spread over each (pick "spread"), sized to keep each evaluation within minutes: one
   *  held-out variant in 41 generators' 820 → 20; CHAMP's integer problems (out of distribution) → 12; the
   *  reasoning-gym arithmetic families' evaluation side (7 × ~50) → 21, 3 per family. */
  evalHeldOutVariants: 20,
  evalChamp: 12,
  evalArithmetic: 21,
  evalMaxTokens: 200,
} as const;

const S = SMOLLM2_GSM_KNOBS;
const smolRl = {
  type: 'rl' as const,
  data: { kind: 'stored' as const, name: 'gsm-symbolic-variants', split: 'train' as const },
  promptsPerStep: S.rlPrompts,
  rolloutsPerPrompt: S.rlRollouts,
  keep: S.rlKeep,
  roc: { enabled: true, positiveSelection: 'weighted' as const, minPerSign: 2, dropEqualReward: true },
  epsLow: 0.2,
  epsHigh: 0.28,
  dualClip: null,
  lr: S.rlLr,
  warmupSteps: 1,
  temperature: 1.0,
  dataFilter: { kind: 'all' as const },
};

export const SMOLLM2_GSM_TOOL_INPUT = {
  name: 'smollm2-gsm-tool',
  description:
    'A pretrained model learns to use the Python tool on real math: SmolLM2-135M-Instruct (LoRA), non-reasoning SFT ' +
    "from GSM8K's worked solutions (calculator notes become the Python call), then GRPO-RoC in two stages on " +
    'GSM-Symbolic-style variants of the training-side problems; evaluated before SFT, after it and after each stage on ' +
    'the held-out GSM8K originals, a sample of the held-out variants, of CHAMP (out of distribution) and of ' +
    'reasoning-gym\'s arithmetic families. About an hour on a 2-core CPU; set trainer.device to "cuda" on a GPU. ' +
    'Needs `npx toolsmith model fetch smollm2-135m-instruct` and `dataset add` of gsm8k-test-100, ' +
    'gsm-symbolic-variants, champ-int and rg-arithmetic.',
  seed: 1,
  model: { kind: 'model', name: S.model },
  tokenizer: { kind: 'model' },
  trainer: { lora: { rank: 16, alpha: 32 } },
  template: MINIMAL_PYTHON_TEMPLATE,
  tool: SMALL_TOOL_LIMITS,
  stages: [
    {
      type: 'sft',
      name: 'sft',
      data: { kind: 'stored', name: 'gsm8k-test-100', split: 'train', n: S.sftDemos, seed: 1, shares: S.sftShares },
      epochs: 1,
      lr: S.sftLr,
      warmupRatio: 0.05,
      schedule: 'cosine',
      batch: S.sftBatch,
      maxLength: 640,
    },
    { ...smolRl, name: 'rl-stage-1', ...S.stage1, resetOptimizer: true },
    { ...smolRl, name: 'rl-stage-2', ...S.stage2, resetOptimizer: false },
  ],
  eval: {
    datasets: [
      { kind: 'stored', name: 'gsm8k-test-100', split: 'test' },
      { kind: 'stored', name: 'gsm-symbolic-variants', split: 'test', limit: S.evalHeldOutVariants, pick: 'spread' },
      { kind: 'stored', name: 'champ-int', split: 'all', limit: S.evalChamp, pick: 'spread' },
      { kind: 'stored', name: 'rg-arithmetic', split: 'test', limit: S.evalArithmetic, pick: 'spread' },
    ],
    k: S.evalK,
    temperature: 0.6,
    maxTokens: S.evalMaxTokens,
    maxTurns: 3,
    everySteps: null,
    atStart: true,
  },
} satisfies RecipeInput;

export const SMOLLM2_GSM_TOOL: Recipe = parseRecipe(SMOLLM2_GSM_TOOL_INPUT);

/**
 * A real pretrained model learning *when* to use the tool, on problems the tool settles (docs/real-models-and-datasets.md
 * "RL that teaches: smollm2-arith-tool"): SmolLM2-135M-Instruct with LoRA, non-reasoning SFT on reasoning-gym's
 * arithmetic families (training side of `dataset add rg-arithmetic`; each demo's call written from its family,
 * workers/tasks/rg-programs.ts) where a third of the demonstrations state the answer with no working, then one GRPO-RoC
 * stage with dynamic sampling and the pass-rate curriculum on the same training side; evaluated after SFT and after RL
 * on the whole held-out side (348 problems, none of them on the training side), so the paired difference is RL's.
 */
export const SMOLLM2_ARITH_KNOBS = {
  /** 480 demos × 1 epoch / batch 4 = 120 SFT steps (~10 minutes here). */
  sftDemos: 480,
  sftBatch: 4,
  sftLr: 3e-4,
  /** A third answer without working: the policy after SFT guesses where the tool would settle it (what RL can fix). */
  sftShares: { tool: 0.55, recover: 0.1, no_tool: 0, direct: 0.35 },
  /** 8 prompts × 8 rollouts, 4 kept per group by RoC; up to 2 rounds of dynamic sampling (130–230 s a step here). */
  rlPrompts: 8,
  rlRollouts: 8,
  rlKeep: 4,
  rlSteps: 16,
  rlLr: 5e-5,
  maxTokens: 192,
} as const;

const A = SMOLLM2_ARITH_KNOBS;
const rgTrain = { kind: 'stored' as const, name: 'rg-arithmetic', split: 'train' as const };

export const SMOLLM2_ARITH_TOOL_INPUT = {
  name: 'smollm2-arith-tool',
  description:
    "RL that teaches on a real model: SmolLM2-135M-Instruct (LoRA) after non-reasoning SFT on reasoning-gym's " +
    'arithmetic families (a third of the demonstrations answer without working) learns by GRPO-RoC, with dynamic ' +
    'sampling and the pass-rate curriculum, to settle such problems with the Python tool; evaluated after SFT and ' +
    'after RL on all 348 held-out problems (paired). About an hour on a 2-core CPU. Needs ' +
    '`npx toolsmith model fetch smollm2-135m-instruct` and `npx toolsmith dataset add rg-arithmetic`.',
  seed: 1,
  model: { kind: 'model', name: S.model },
  tokenizer: { kind: 'model' },
  trainer: { lora: { rank: 16, alpha: 32 } },
  // int8 weights (onnxruntime's MatMulNBits): 72 tokens/s at batch 1 where float32 is bound near 50 by reading its
  // 538 MB once per token, and faster at batch 16 too; 0.06 nats of mismatch per token, which TIS/MIS correct.
  engine: { kind: 'embedded', weights: 'int8' },
  template: MINIMAL_PYTHON_TEMPLATE,
  tool: SMALL_TOOL_LIMITS,
  stages: [
    {
      type: 'sft',
      name: 'sft',
      data: { ...rgTrain, n: A.sftDemos, seed: 1, shares: A.sftShares },
      epochs: 1,
      lr: A.sftLr,
      warmupRatio: 0.05,
      schedule: 'cosine',
      batch: A.sftBatch,
      maxLength: 512,
    },
    {
      ...smolRl,
      name: 'rl',
      data: rgTrain,
      promptsPerStep: A.rlPrompts,
      rolloutsPerPrompt: A.rlRollouts,
      keep: A.rlKeep,
      lr: A.rlLr,
      steps: A.rlSteps,
      maxResponseTokens: A.maxTokens,
      maxTurns: 3,
      resetOptimizer: true,
      dynamicSampling: { enabled: true, maxGenBatches: 2 },
      curriculum: { enabled: true },
    },
  ],
  eval: {
    datasets: [{ kind: 'stored', name: 'rg-arithmetic', split: 'test' }],
    k: 1,
    temperature: 0.6,
    maxTokens: A.maxTokens,
    maxTurns: 3,
    everySteps: null,
    atStart: false,
  },
} satisfies RecipeInput;

export const SMOLLM2_ARITH_TOOL: Recipe = parseRecipe(SMOLLM2_ARITH_TOOL_INPUT);

/** Recipes seeded into a new database (seedDefaultRecipes). */
export const BUILTIN_RECIPES: readonly RecipeInput[] = [
  EMBEDDED_ARITH_INPUT,
  SMOLLM2_GSM_TOOL_INPUT,
  SMOLLM2_ARITH_TOOL_INPUT,
  RSTAR2_QWEN3_14B_INPUT,
];
