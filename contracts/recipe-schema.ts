/**
 * The recipe's shape (docs/method.md §5, §7, §8): its zod schemas, the report's and the embedded model's defaults,
 * and the types of a parsed recipe. contracts/recipe.ts adds the cross-field checks, the defaults' resolution and the
 * bounds (contracts/recipe-bounds.ts), and re-exports all of this; this file imports neither, so the bounds can name
 * the Recipe type without a loop.
 */
import { z } from 'zod';
import { NAME_RE, NAME_RULE } from './names.ts';
import { EngineDeviceSchema, EngineWeightsSchema, WeightSyncSchema } from './engine.ts';
import { EMBEDDED_DEFAULTS, REPORT_DEFAULTS } from './recipe-defaults.ts';

export * from './recipe-defaults.ts';

const nameField = z.string().regex(NAME_RE, NAME_RULE);

// ---- Data sources ------------------------------------------------------------------------------------------------

/** The generated task's problem families (workers/tasks/arith.ts). */
export const FAMILIES = [
  'product',
  'sum',
  'powmod',
  'mod',
  'choose',
  'arrange',
  'factorial',
  'count',
  'word',
  'easy',
] as const;
export type Family = (typeof FAMILIES)[number];
const DifficultySchema = z.union([z.literal(1), z.literal(2), z.literal(3)]);
export type Difficulty = z.output<typeof DifficultySchema>;

const seedField = z
  .number()
  .int()
  .min(0)
  .max(2 ** 31 - 1);
const familiesField = z.array(z.enum(FAMILIES)).min(1, 'give at least one family').optional();
const difficultyField = z
  .union([DifficultySchema, z.array(DifficultySchema).min(1, 'give at least one level')])
  .optional();

/** The generated embedded task (workers/tasks/arith.ts): n problems of a split, deterministic in the seed. */
const generatedSource = (split: 'train' | 'test') =>
  z.object({
    kind: z.literal('generated'),
    task: z.literal('arith').default('arith'),
    split: z.enum(['train', 'test']).default(split),
    n: z.number().int().min(1).max(1_000_000),
    seed: seedField.default(0),
    /** Default: every family but `easy`. */
    families: familiesField,
    /** One level or a list drawn per problem (default [1, 2, 3]). */
    difficulty: difficultyField,
  });

/** With a limit, which problems: the first ones, or spread evenly (a recipe's stored source and an evaluation). */
export const PickField = z.enum(['first', 'spread'], { error: 'pick must be "first" or "spread"' }).optional();

/** A stored (imported) dataset by name; latest version unless `version` is given. */
const storedSource = (split: 'all' | 'train' | 'test') =>
  z.object({
    kind: z.literal('stored'),
    name: nameField,
    version: z.number().int().min(1).optional(),
    split: z.enum(['all', 'train', 'test']).default(split),
    /** At most this many problems: the first ones in index order, or spread evenly over the split (`pick`). */
    limit: z.number().int().min(1).optional(),
    /** With `limit`: "first" (the default) or "spread" (every (size/limit)-th problem: a sample of every part of a
     *  dataset stored in order, e.g. one variant per generator). */
    pick: PickField,
  });

const sourceError = { error: 'kind must be "generated" or "stored"' };
/** RL prompts: the train split by default. */
export const PromptSourceSchema = z.discriminatedUnion(
  'kind',
  [generatedSource('train'), storedSource('train')],
  sourceError,
);
/** Evaluation problems: the held-out split by default. */
export const EvalSourceSchema = z.discriminatedUnion(
  'kind',
  [generatedSource('test'), storedSource('test')],
  sourceError,
);
export type PromptSource = z.output<typeof PromptSourceSchema>;

/** Share of each demonstration kind (normalised; workers/tasks/demos.ts DEFAULT_SHARES). */
const sharesField = z
  .object({
    tool: z.number().min(0).default(0.7),
    recover: z.number().min(0).default(0.15),
    no_tool: z.number().min(0).default(0.15),
    /** Tool-worthy problems answered straight away, no call (the imperfect part of a non-reasoning SFT). */
    direct: z.number().min(0).default(0),
  })
  .prefault({})
  .refine((s) => s.tool + s.recover + s.no_tool + s.direct > 0, 'shares must have a positive sum');

/**
 * SFT demonstrations: generated from the embedded task (workers/tasks/demos.ts sftDataset: train-split problems, a
 * mix of clean tool calls, a failed call then a fix, no-tool answers to easy problems and, optionally, direct answers to
 * tool-worthy ones), or made from a stored dataset's worked solutions (workers/tasks/gsm-demos.ts: the program from
 * GSM8K's calculator notes; no_tool demos give the solution's own reasoning).
 */
export const SftDataSchema = z.discriminatedUnion(
  'kind',
  [
    z.object({
      kind: z.literal('generated'),
      task: z.literal('arith').default('arith'),
      /** Number of demonstrations. */
      n: z.number().int().min(1).max(1_000_000),
      seed: seedField.default(1),
      shares: sharesField,
      families: familiesField,
      difficulty: difficultyField,
    }),
    z.object({
      kind: z.literal('stored'),
      /** A stored dataset whose problems carry a worked solution (metadata.solution), e.g. gsm8k-test-100. */
      name: nameField,
      version: z.number().int().min(1).optional(),
      split: z.enum(['all', 'train', 'test']).default('train'),
      /** Number of demonstrations (problems are reused when there are fewer). */
      n: z.number().int().min(1).max(1_000_000),
      seed: seedField.default(1),
      shares: sharesField,
    }),
  ],
  { error: 'kind must be "generated" (the embedded task) or "stored" (a dataset with worked solutions)' },
);
export type SftData = z.output<typeof SftDataSchema>;
/** Share of each SFT demonstration kind (workers/tasks/demos.ts). */
export type DemoShares = z.output<typeof SftDataSchema>['shares'];

// ---- Model, tokenizer, template, tool ----------------------------------------------------------------------------

export const ModelSchema = z.discriminatedUnion(
  'kind',
  [
    /** The embedded model: a small Hugging Face model of this architecture (workers/trainer/hf_model.py) with the char
     *  tokenizer, trained from scratch. */
    z.object({
      kind: z.literal('embedded'),
      arch: z.enum(['qwen3', 'qwen2', 'llama']).default('qwen3'),
      n_layer: z.number().int().min(1).max(48).default(EMBEDDED_DEFAULTS.model.n_layer),
      n_head: z.number().int().min(1).max(64).default(EMBEDDED_DEFAULTS.model.n_head),
      /** Key/value heads (grouped-query attention); default n_head. */
      n_kv_head: z.number().int().min(1).max(64).optional(),
      /** Qwen3: the starting gain of the per-head query/key norms (workers/trainer/hf_model.py build); default 1. */
      qk_norm_gain: z.number().positive().max(100).optional(),
      n_embd: z.number().int().min(8).max(8192).default(EMBEDDED_DEFAULTS.model.n_embd),
      /** Context length in tokens (characters): prompt + response + tool output must fit. */
      block_size: z.number().int().min(64).max(65_536).default(EMBEDDED_DEFAULTS.model.block_size),
    }),
    /** A model registered under the models folder by name (`npx toolsmith model list`): never a path. */
    z.object({
      kind: z.literal('model'),
      name: nameField,
    }),
  ],
  {
    error:
      'kind must be "embedded" or "model" (a registered model by name: npx toolsmith model import DIR --name NAME)',
  },
);
export type ModelSpec = z.output<typeof ModelSchema>;

export const TokenizerSchema = z.discriminatedUnion(
  'kind',
  [
    /** The embedded character vocabulary (workers/engines/tokenizer.ts EMBEDDED_VOCAB), for the embedded model. */
    z.object({ kind: z.literal('char') }),
    /** The named model's own tokenizer.json and chat template. */
    z.object({ kind: z.literal('model') }),
  ],
  { error: 'kind must be "char" (the embedded model) or "model" (the named model\'s own tokenizer)' },
);

/** How the trainer runs (workers/trainer/dist.py): ranks on this worker, device, micro-batching, LoRA. */
export const TrainerSchema = z.object({
  /** Ranks on the worker, started by it as one group that meets on loopback only (FSDP2; one per GPU, or gloo processes on CPU). */
  ranks: z.number().int().min(1).max(64).default(1),
  /** Machines the run spans (ranks each): more than 1 runs only on a Ray cluster (docs/scaling-out.md "Ray"). */
  nodes: z.number().int().min(1).max(1024).default(1),
  /** 'cuda' refuses to start without enough GPUs (one per rank); 'auto' uses them when present. */
  device: z.enum(['auto', 'cpu', 'cuda']).default('auto'),
  /**
   * Token budget per forward/backward (rows × padded length); gradients accumulate. Default: the budget that keeps one
   * round's logits within 1 GiB for the model's vocabulary (workers/trainer/batching.py default_token_budget).
   */
  microBatchTokens: z.number().int().min(64).optional(),
  gradientCheckpointing: z.boolean().default(false),
  /** LoRA through peft on a named model: only the adapter trains and is checkpointed; exports merge it. */
  lora: z
    .object({
      rank: z.number().int().min(1).max(1024).default(16),
      alpha: z.number().positive().default(32),
      dropout: z.number().min(0).max(0.9).default(0),
      targetModules: z
        .array(z.string().min(1))
        .min(1)
        .default(['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj']),
    })
    .nullable()
    .default(null),
});
export type TrainerSpec = z.output<typeof TrainerSchema>;

/** The engine that serves the policy's rollouts: the embedded ONNX engine, or OpenAI-compatible servers (vLLM, SGLang). */
export const RolloutEngineSchema = z.discriminatedUnion(
  'kind',
  [
    z.object({
      kind: z.literal('embedded'),
      /** How the trainer's ONNX export stores the weights the engine decodes with (contracts/engine.ts ENGINE_WEIGHTS). */
      weights: EngineWeightsSchema.default('float32'),
      /** Where it decodes (contracts/engine.ts ENGINE_DEVICES): 'cuda' needs a GPU and onnxruntime-node's CUDA provider. */
      device: EngineDeviceSchema.default('cpu'),
    }),
    z.object({
      kind: z.literal('openai'),
      urls: z.array(z.url({ error: 'expected an http(s) URL' })).min(1, 'give at least one server URL'),
      /** The served model id (default: the first one the first server's /v1/models lists). */
      model: z.string().min(1).optional(),
      /** Tokens the servers hold at once, all URLs together (the scheduler admits against it). */
      totalTokens: z
        .number()
        .int()
        .min(1)
        .default(1 << 20),
      timeoutMs: z.number().int().min(100).default(60_000),
      /** Pushing the trainer's weights after every update; training on these servers needs it (contracts/engine.ts). */
      weightSync: WeightSyncSchema.optional(),
    }),
    /**
     * Rollout servers the run starts on its Ray cluster as actors (a run launched on Ray only; docs/scaling-out.md "Ray"):
     * `serve-model` (Toolsmith's, on CPU: the embedded path's ONNX export), `sglang` or `vllm` (their documented
     * command lines, with GPU bundles). The trainer's weights reach them after every update through the run's
     * weight-sync folder (a shared mount): serve-model and SGLang by SGLang's reload route, vLLM by its own.
     */
    z.object({
      kind: z.literal('ray'),
      server: z.enum(['serve-model', 'sglang', 'vllm']).default('serve-model'),
      /** How many servers, one per node at most (serve-model: CPU nodes first; sglang/vllm: GPU nodes). */
      replicas: z.number().int().min(1).max(256).default(1),
      /** GPUs each server holds (its tensor-parallel size for sglang/vllm); 0 for serve-model. */
      gpusPerServer: z.number().int().min(0).max(8).default(0),
      totalTokens: z
        .number()
        .int()
        .min(1)
        .default(1 << 20),
      timeoutMs: z.number().int().min(100).default(60_000),
      /** Most milliseconds a reload may take on any one server. */
      syncTimeoutMs: z.number().int().min(1000).default(600_000),
    }),
  ],
  { error: 'kind must be "embedded", "openai" or "ray"' },
);

/** The prompt template's variants (workers/rollout/template.ts): the paper's full text, a shorter one, the embedded model's. */
export const TEMPLATE_VARIANTS = ['full', 'compact', 'minimal'] as const;
export type PromptVariant = (typeof TEMPLATE_VARIANTS)[number];

/** How a tool result is shown to the model (workers/sandbox/format.ts). */
export const ToolFormatSchema = z.object({
  style: z.enum(['paper', 'released']).default('paper'),
  /** Cut stdout and stderr each to this many characters (code-judge: 1000); null = no cut (paper). */
  maxFieldChars: z.number().int().min(1).nullable().default(null),
  /** Keep the first `head` and last `tail` characters of the whole text (verl: 128 + 128); null = off (paper). */
  middle: z
    .object({ head: z.number().int().min(0), tail: z.number().int().min(0) })
    .nullable()
    .default(null),
});
export type ToolFormat = z.input<typeof ToolFormatSchema>;

const tagField = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_-]{0,39}$/, 'use a tag name without brackets (letters, digits, "_", "-")');

/** workers/rollout/template.ts TemplateSettings (the fields a recipe sets) and workers/sandbox/format.ts ToolFormat. */
export const TemplateSchema = z.object({
  /** Default by model: `python` for the embedded model, the paper's `execute_python_code_with_standard_io` otherwise. */
  toolName: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'use a function name (letters, digits, "_")')
    .optional(),
  reasonTag: tagField.default('reason'),
  answerTag: tagField.default('answer'),
  /** Default by model: 'minimal' for the embedded model (its context is 512 characters), the paper's 'full' otherwise. */
  variant: z.enum(TEMPLATE_VARIANTS).optional(),
  toolFormat: ToolFormatSchema.prefault({}),
});

/** How the calls of one trajectory share state: `off` (the paper): a fresh interpreter per call; `replay`: each call
 *  first replays the trajectory's earlier successful calls quietly; `trajectory`: one interpreter for the whole
 *  trajectory (variables, imports, files in /tmp), its limits covering all its calls (docs/sandbox.md "Sessions").
 *  `true` and `false`, as recipes wrote it before, mean `replay` and `off`. */
export const TOOL_SESSION_MODES = ['off', 'replay', 'trajectory'] as const;
export type ToolSessionMode = (typeof TOOL_SESSION_MODES)[number];
export type ToolSession = boolean | ToolSessionMode;
export const toolSessionMode = (v: ToolSession | undefined): ToolSessionMode =>
  v === true ? 'replay' : v === false || v === undefined ? 'off' : v;

/** Sandbox limits per tool call (docs/method.md §3: the report's 4 s; 1 GiB is ours, code-judge gives 256 MB + 128 MB; one fresh interpreter per call unless `session`). */
export const ToolLimitsSchema = z.object({
  timeoutS: z.number().gt(0).max(600).default(4),
  memoryMb: z.number().int().min(64).max(65_536).default(1024),
  /** Keep interpreter state across the calls of one trajectory (off in the paper): TOOL_SESSION_MODES. */
  session: z
    .union([z.boolean(), z.enum(TOOL_SESSION_MODES, { error: `use one of: ${TOOL_SESSION_MODES.join(', ')}` })])
    .default(false),
  /** `trajectory` sessions: the session's time, its calls' wall-clock time added up (default 60 s). */
  sessionTimeS: z.number().gt(0).max(3600).optional(),
  /** Seed each call's random, numpy global generator and unseeded default_rng() from the trajectory's seed
   *  (seed × 1000 + turn, as its sampling), recorded with the call; off: fresh entropy in every call. */
  seedCalls: z.boolean().default(false),
});

/** The reward verifier's settings (docs/method.md §4; workers/reward/verifier.ts VerifyOptions). */
export const VerifierSettingsSchema = z.object({
  /** `answer` (the paper): the \boxed{} inside <answer>; `boxed` (the released code): the last \boxed{} anywhere. */
  mode: z.enum(['answer', 'boxed']).default('answer'),
  /** Tolerance for numbers that are not both integers (integers always compare exactly). */
  tolerance: z
    .object({ rel: z.number().min(0).max(0.1).default(1e-8), abs: z.number().min(0).max(0.1).default(1e-9) })
    .prefault({}),
  /** Time limit of each symbolic / sampling check, ms. */
  timeLimitMs: z.number().int().min(50).max(60_000).default(2000),
  /** sympy in the sandbox as the last resort, and its time limit, seconds. */
  sympy: z.boolean().default(true),
  sympyTimeLimitS: z.number().gt(0).max(60).default(5),
  /** Math-Verify in the sandbox as the authoritative last step: `fallback` (the released code) for every pair the
   *  fast path cannot settle, `always` for every pair, `off`; and its time limit per check, seconds. */
  mathVerify: z.enum(['fallback', 'always', 'off']).default('fallback'),
  mathVerifyTimeLimitS: z.number().gt(0).max(60).default(5),
});

// ---- Stages ------------------------------------------------------------------------------------------------------

const stageName = z.string().min(1, 'give the stage a name').max(100);
const lrField = z.number().gt(0, 'must be positive').max(1);

/** Non-reasoning SFT (docs/method.md §7). Steps = epochs × ⌈demos / batch⌉, capped by maxSteps. */
export const SftStageSchema = z.object({
  type: z.literal('sft'),
  name: stageName,
  data: SftDataSchema,
  epochs: z.number().int().min(1).max(1000).default(REPORT_DEFAULTS.sft.epochs),
  /** Report 5e-6; embedded 3e-3. */
  lr: lrField.optional(),
  /** Share of the steps spent warming up linearly (report: 4%). */
  warmupRatio: z.number().min(0).max(1).default(REPORT_DEFAULTS.sft.warmupRatio),
  schedule: z.enum(['cosine', 'constant']).default(REPORT_DEFAULTS.sft.schedule),
  /** Report 128; embedded 8. */
  batch: z.number().int().min(1).max(65_536).optional(),
  /** Longest tokenised demo kept (longer ones are dropped); embedded default: block_size. */
  maxLength: z.number().int().min(16).optional(),
  /** Stop after this many optimiser steps (tuning, tests). */
  maxSteps: z.number().int().min(1).optional(),
});

/** Which problems an RL stage trains on (docs/method.md §7 stage 3: the hard subset). */
export const DataFilterSchema = z.discriminatedUnion(
  'kind',
  [
    z.object({ kind: z.literal('all') }),
    /** Run the current policy k× per problem before the stage and drop the problems solved k/k. */
    z.object({
      kind: z.literal('hard'),
      k: z.number().int().min(1).max(256).default(REPORT_DEFAULTS.rl.hardK),
      dropSolved: z.literal(true).default(true),
    }),
  ],
  { error: 'kind must be "all" or "hard"' },
);

/**
 * Truncated importance sampling against the train–inference mismatch (docs/method.md §5 "TIS"): per token
 * w = min(π_old / π_rollout, cap) (`token`), one capped weight per sequence (`sequence`), weight 0 outside
 * [1/cap, cap] and 1 inside (`mask`), or none (`off`).
 */
export const TIS_MODES = ['off', 'token', 'sequence', 'mask'] as const;
export type TisMode = (typeof TIS_MODES)[number];
const TisSchema = z.object({
  mode: z
    .enum(TIS_MODES, { error: `mode must be one of ${TIS_MODES.join(', ')}` })
    .default(REPORT_DEFAULTS.rl.tis.mode),
  cap: z.number().gt(1, 'must be greater than 1').max(1e6).default(REPORT_DEFAULTS.rl.tis.cap),
});

/** How RoC picks the positives it keeps (workers/rl/grpo-roc.ts): by 1 / p_total (paper) or the lowest (released code). */
export const POSITIVE_SELECTIONS = ['weighted', 'lowest'] as const;
export type PositiveSelection = (typeof POSITIVE_SELECTIONS)[number];

/** One GRPO-RoC stage (docs/method.md §5, §7). */
export const RlStageSchema = z.object({
  type: z.literal('rl'),
  name: stageName,
  data: PromptSourceSchema,
  /** Optimiser steps (one update per step, fully on-policy). */
  steps: z.number().int().min(1).max(1_000_000).optional(),
  /** Prompts (questions) per step. */
  promptsPerStep: z.number().int().min(1).max(100_000).optional(),
  /** 2G: rollouts sampled per prompt (plain GRPO: G). */
  rolloutsPerPrompt: z.number().int().min(2, 'GRPO needs at least 2 rollouts per prompt').max(1024).optional(),
  /** G: rollouts kept per group; default half of rolloutsPerPrompt with RoC, all of them without. */
  keep: z.number().int().min(1).optional(),
  roc: z
    .object({
      /** false = plain GRPO (keep every rollout of a non-dropped group). */
      enabled: z.boolean().default(true),
      /** 'weighted' by 1 / p_total (paper) or the 'lowest' p_total (released code). */
      positiveSelection: z.enum(POSITIVE_SELECTIONS).default('weighted'),
      /** Keep at least this many of each sign where available (released code: 2). */
      minPerSign: z.number().int().min(0).default(2),
      /** Drop groups whose rewards are all equal (released code). */
      dropEqualReward: z.boolean().default(true),
    })
    .prefault({}),
  epsLow: z.number().min(0).max(1).default(REPORT_DEFAULTS.rl.epsLow),
  epsHigh: z.number().min(0).max(10).default(REPORT_DEFAULTS.rl.epsHigh),
  /** Dual-clip constant c > 1 on negative advantages (verl: 3); null = off (paper). */
  dualClip: z
    .number()
    .gt(1, 'must be greater than 1 (or null for off)')
    .nullable()
    .default(REPORT_DEFAULTS.rl.dualClip),
  /** Train–inference mismatch correction on the policy loss; needs the engine's log-probs (else the step runs without it). */
  tis: TisSchema.prefault({}),
  /** Report 1e-6 constant after warm-up; embedded 1e-4. */
  lr: lrField.optional(),
  /** Linear warm-up steps (report: 20; embedded: 2). */
  warmupSteps: z.number().int().min(0).optional(),
  temperature: z.number().min(0).max(5).default(REPORT_DEFAULTS.rl.temperature),
  /** Response budget per trajectory, tool tokens included (report 8K/12K; embedded: block_size − prompt). */
  maxResponseTokens: z.number().int().min(1).optional(),
  maxTurns: z.number().int().min(1).max(1000).optional(),
  /** This stage's tool limits (default: the recipe's `tool`). */
  tool: ToolLimitsSchema.optional(),
  dataFilter: DataFilterSchema.prefault({ kind: 'all' }),
  /** Fresh AdamW moments at the start of the stage (report: stage 3). */
  resetOptimizer: z.boolean().default(false),
  /**
   * One-step off-policy training (docs/method.md §5 "Asynchronous steps"): the next step's rollouts are generated
   * while this one trains, on weights at most `maxStaleness` updates old (0: the synchronous loop).
   */
  async: z
    .object({
      enabled: z.boolean().default(false),
      maxStaleness: z.number().int().min(0, 'must be 0 or more').max(8, 'at most 8').default(1),
      /** A trajectory in flight across an update continues on the new weights (between turns), its turns tagged. */
      partialRollouts: z.boolean().default(false),
    })
    .prefault({}),
  /**
   * Dynamic sampling (DAPO; verl `algorithm.filter_groups`, docs/method.md §5 "Dynamic sampling and the pass-rate
   * curriculum"): draw more prompts until the step has `promptsPerStep` groups with mixed rewards, in at most
   * `maxGenBatches` rounds of generation (the first included; verl `max_num_gen_batches`). Off by default: the
   * report's loop drops equal-reward groups and trains on the rest, and extra rounds cost rollout time.
   */
  dynamicSampling: z
    .object({
      enabled: z.boolean().default(false),
      maxGenBatches: z.number().int().min(1, 'must be at least 1 (the first round)').max(64, 'at most 64').default(4),
    })
    .prefault({}),
  /**
   * The pass-rate curriculum (same section): draw first the problems the current policy solves sometimes, estimated
   * from this run's stored rollouts and evaluation samples of the last `windowSteps` steps, then the untried ones;
   * those solved always or never (at least `minSamples` outcomes) are skipped while others remain. Off by default.
   */
  curriculum: z
    .object({
      enabled: z.boolean().default(false),
      minSamples: z.number().int().min(1, 'must be at least 1').max(4096).default(4),
      windowSteps: z.number().int().min(1, 'must be at least 1').max(1_000_000).default(20),
    })
    .prefault({}),
});

export const StageSchema = z.discriminatedUnion('type', [SftStageSchema, RlStageSchema], {
  error: 'type must be "sft" or "rl"',
});

/** Periodic evaluation (docs/method.md §8): pass@1 averaged over k samples per problem. */
export const RecipeEvalSchema = z.object({
  datasets: z.array(EvalSourceSchema).min(1, 'give at least one dataset'),
  /** Samples per problem (report 16; embedded 4). */
  k: z.number().int().min(1).max(1024).optional(),
  temperature: z.number().min(0).max(5).default(REPORT_DEFAULTS.eval.temperature),
  /** Response budget (report 30K; embedded: block_size − prompt). */
  maxTokens: z.number().int().min(1).optional(),
  /** Report 30; embedded 4. */
  maxTurns: z.number().int().min(1).max(1000).optional(),
  /** Evaluate every N RL steps (counted across stages); null = only after each stage. */
  everySteps: z.number().int().min(1).nullable().default(null),
  /** Also evaluate the starting model before the first stage (a pretrained model's baseline with the tool template). */
  atStart: z.boolean().default(false),
});

// ---- The recipe --------------------------------------------------------------------------------------------------

export const RecipeObjectSchema = z.object({
  name: nameField,
  description: z.string().max(10_000).default(''),
  seed: seedField.default(0),
  model: ModelSchema.prefault({ kind: 'embedded' }),
  /** Default: char for the embedded model, the model's own for a named one. */
  tokenizer: TokenizerSchema.optional(),
  trainer: TrainerSchema.prefault({}),
  engine: RolloutEngineSchema.prefault({ kind: 'embedded' }),
  template: TemplateSchema.prefault({}),
  tool: ToolLimitsSchema.prefault({}),
  verifier: VerifierSettingsSchema.prefault({}),
  stages: z.array(StageSchema).min(1, 'give at least one stage'),
  eval: RecipeEvalSchema.optional(),
  /** A ceiling the run's plan (contracts/plan.ts) must stay under, checked before it starts. */
  budget: z
    .object({
      gpuHours: z.number().positive('must be positive').optional(),
      storageGB: z.number().positive('must be positive').optional(),
    })
    .optional(),
});

type Filled<T, K extends keyof T> = Omit<T, K> & { [P in K]-?: NonNullable<T[P]> };
export type SftStage = Filled<z.output<typeof SftStageSchema>, 'lr' | 'batch' | 'maxLength'>;
export type RlStage = Filled<
  z.output<typeof RlStageSchema>,
  | 'steps'
  | 'promptsPerStep'
  | 'rolloutsPerPrompt'
  | 'keep'
  | 'lr'
  | 'warmupSteps'
  | 'maxResponseTokens'
  | 'maxTurns'
  | 'tool'
>;
export type Stage = SftStage | RlStage;
export type RecipeEval = Filled<z.output<typeof RecipeEvalSchema>, 'k' | 'maxTokens' | 'maxTurns'>;
export type TemplateSpec = Filled<z.output<typeof TemplateSchema>, 'toolName' | 'variant'>;
export type RecipeObject = z.output<typeof RecipeObjectSchema>;
/** A parsed recipe: every default filled in (what a run freezes). */
export type Recipe = Omit<RecipeObject, 'stages' | 'eval' | 'template' | 'tokenizer'> & {
  template: TemplateSpec;
  stages: Stage[];
  eval?: RecipeEval;
  tokenizer: z.output<typeof TokenizerSchema>;
};
/** What a person writes: most fields optional. */
export type RecipeInput = z.input<typeof RecipeObjectSchema>;
