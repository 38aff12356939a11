/**
 * The recipe's defaults (docs/method.md §5, §7, §8): the report's values, the defaults of a named `model`, and the
 * scaled-down values of the embedded model. Re-exported by contracts/recipe-schema.ts and contracts/recipe.ts.
 */
/**
 * The report's settings (docs/method.md §5, §7, §8), for reference and as the defaults of a named `model`.
 * Where the report gives none, the comment says so and the value is ours.
 */
export const REPORT_DEFAULTS = {
  sft: {
    epochs: 3,
    lr: 5e-6,
    /** 4% of the steps. */
    warmupRatio: 0.04,
    schedule: 'cosine' as const,
    batch: 128,
    /** Not given (answers are kept ~1K tokens); ours. */
    maxLength: 8192,
  },
  rl: {
    /** Stage 1: 300, stage 2: 85, stage 3: 125. */
    steps: 300,
    /** Paper: 512; released scripts: 128. */
    promptsPerStep: 512,
    /** 2G = 32. */
    rolloutsPerPrompt: 32,
    /** G = 16 (half of 2G). */
    keep: 16,
    epsLow: 0.2,
    epsHigh: 0.28,
    /** Off in the paper; verl's dual-clip uses c = 3. */
    dualClip: null,
    /**
     * Not in the paper (its engine's numerics are not discussed); ours, after TRL (on by default) and verl: truncated
     * importance sampling per token with C = 2, because every engine here is one other than the trainer.
     */
    tis: { mode: 'token' as const, cap: 2 },
    lr: 1e-6,
    warmupSteps: 20,
    temperature: 1.0,
    /** Stage 1: 8K; stages 2 and 3: 12K. */
    maxResponseTokens: 8192,
    /** Not given for training; the evaluation's 30. */
    maxTurns: 30,
    /** Stage 3: run the policy 8× per problem, drop problems solved 8/8. */
    hardK: 8,
  },
  eval: { k: 16, temperature: 0.6, maxTokens: 30_000, maxTurns: 30 },
} as const;

/**
 * Scaled values for the embedded character-level Qwen3 (4 layers, 64 wide, 512-character context) that must
 * train in minutes on a CPU: bigger learning rates, tiny batches, a response budget that fits the context with the
 * minimal prompt (162–206 characters for the arith task), few turns.
 */
export const EMBEDDED_DEFAULTS = {
  model: { kind: 'embedded' as const, n_layer: 4, n_head: 4, n_embd: 64, block_size: 512 },
  sft: { lr: 3e-3, batch: 8 },
  rl: {
    steps: 16,
    promptsPerStep: 8,
    rolloutsPerPrompt: 8,
    lr: 1e-4,
    warmupSteps: 2,
    maxResponseTokens: 300,
    maxTurns: 4,
  },
  eval: { k: 4, maxTurns: 4 },
} as const;

/** The prompt budget the embedded defaults leave: maxLength / maxTokens default to block_size; responses to this less. */
export const EMBEDDED_PROMPT_RESERVE = 212;
