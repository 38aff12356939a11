/**
 * The recipe (docs/method.md §5, §7, §8): what a training run does, as one zod schema shared by the UI (recipe editor,
 * inline errors) and the workers (run orchestrator). A recipe is the unit of reproducibility: a run freezes the
 * parsed recipe (every default filled in) into Run.recipeSpec.
 *
 *   model + tokenizer + template + tool limits, then an ordered list of stages:
 *     sft  — non-reasoning SFT on demonstrations (§7);
 *     rl   — GRPO-RoC (§5) on prompts, optionally on the hard subset (§7 stage 3) with the optimiser reset;
 *   and an optional periodic evaluation (§8).
 *
 * Defaults. Scale-free settings default to the report's values (ε_low/ε_high, RoC, temperatures, epochs, warm-up
 * share, schedule, eval k/turns, hard-filter k). Settings that depend on the model's size (learning rates, batch
 * sizes, rollouts, response budgets, turns) default by model kind: the report's for a named `model` (a Hugging Face
 * model registered under the models folder, REPORT_DEFAULTS) and scaled-down ones for the `embedded` model
 * (EMBEDDED_DEFAULTS: a small Qwen3 trained from scratch), whose context is `block_size` characters and whose
 * parameters number ~0.3M. The fields are optional in the input and the parse
 * fills them in (resolveDefaults), so the UI shows the resolved values.
 *
 * The schemas and types are contracts/recipe-schema.ts's (re-exported here); this file checks and resolves them.
 * A contract (contracts/): zod and types only, so the recipe editor bundles it. The workers take their shared
 * types from here (task families, template variants, tool format, RoC's positive selection).
 */
import { z } from 'zod';
import { zodIssuesText, parseUserInput } from './errors.ts';
import { checkRecipeBounds } from './recipe-bounds.ts';
import {
  EMBEDDED_DEFAULTS,
  EMBEDDED_PROMPT_RESERVE,
  type ModelSpec,
  type PromptSource,
  REPORT_DEFAULTS,
  type Recipe,
  type RecipeObject,
  RecipeObjectSchema,
  SftDataSchema,
  type Stage,
  type TemplateSpec,
} from './recipe-schema.ts';

export * from './recipe-schema.ts';

/** Cross-field checks, each naming the field it is about. */
function checkRecipe(r: RecipeObject, ctx: z.RefinementCtx): void {
  const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: 'custom', path, message });
  const blockSize = r.model.kind === 'embedded' ? r.model.block_size : null;
  if (r.model.kind === 'embedded' && r.model.n_head >= 1 && r.model.n_embd % r.model.n_head !== 0) {
    issue(
      ['model', 'n_embd'],
      `must be divisible by model.n_head (${r.model.n_embd} % ${r.model.n_head} = ${r.model.n_embd % r.model.n_head})`,
    );
  }
  if (r.model.kind === 'embedded' && r.model.n_kv_head != null && r.model.n_head % r.model.n_kv_head !== 0) {
    issue(['model', 'n_kv_head'], `must divide model.n_head (${r.model.n_head})`);
  }
  if (r.tokenizer && r.tokenizer.kind !== (r.model.kind === 'embedded' ? 'char' : 'model')) {
    issue(
      ['tokenizer', 'kind'],
      r.model.kind === 'embedded'
        ? 'the embedded model uses the char tokenizer'
        : 'a named model brings its own tokenizer: use "model" (or leave tokenizer out)',
    );
  }
  if (r.trainer.lora && r.model.kind === 'embedded') {
    issue(
      ['trainer', 'lora'],
      'LoRA adapts a pretrained model: name one (model.kind "model"); the embedded model trains from scratch',
    );
  }
  const names = new Set<string>();
  r.stages.forEach((s, i) => {
    if (names.has(s.name))
      issue(['stages', i, 'name'], `"${s.name}" is used by an earlier stage; stage names must be unique`);
    names.add(s.name);
    if (s.type === 'sft') {
      if (blockSize != null && s.maxLength != null && s.maxLength > blockSize)
        issue(['stages', i, 'maxLength'], `must be at most model.block_size (${blockSize})`);
      return;
    }
    const n = s.rolloutsPerPrompt ?? defaultsFor(r.model).rl.rolloutsPerPrompt;
    if (s.keep != null) {
      if (s.keep > n) issue(['stages', i, 'keep'], `must be at most rolloutsPerPrompt (${n})`);
      else if (s.roc.enabled && s.keep >= n)
        issue(
          ['stages', i, 'keep'],
          `must be less than rolloutsPerPrompt (${n}) with RoC on (RoC keeps G of 2G; turn roc.enabled off for plain GRPO)`,
        );
      else if (!s.roc.enabled && s.keep !== n)
        issue(
          ['stages', i, 'keep'],
          `plain GRPO (roc.enabled false) keeps every rollout: leave keep out or set it to rolloutsPerPrompt (${n})`,
        );
    }
    if (blockSize != null && s.maxResponseTokens != null && s.maxResponseTokens >= blockSize) {
      issue(
        ['stages', i, 'maxResponseTokens'],
        `must be less than model.block_size (${blockSize}): the prompt needs room too`,
      );
    }
    if (s.dynamicSampling.enabled && !s.roc.dropEqualReward) {
      issue(
        ['stages', i, 'dynamicSampling', 'enabled'],
        'dynamic sampling trains only the groups with mixed rewards: it needs roc.dropEqualReward true',
      );
    }
    if (s.dataFilter.kind === 'hard' && i === 0) {
      issue(
        ['stages', i, 'dataFilter'],
        'the hard subset needs a trained policy: put an SFT or RL stage before this one',
      );
    }
  });
  if (r.eval && blockSize != null && r.eval.maxTokens != null && r.eval.maxTokens >= blockSize) {
    issue(['eval', 'maxTokens'], `must be less than model.block_size (${blockSize}): the prompt needs room too`);
  }
}

function defaultsFor(model: ModelSpec) {
  if (model.kind === 'model') {
    const R = REPORT_DEFAULTS;
    return {
      sft: { lr: R.sft.lr, batch: R.sft.batch, maxLength: R.sft.maxLength },
      rl: {
        steps: R.rl.steps,
        promptsPerStep: R.rl.promptsPerStep,
        rolloutsPerPrompt: R.rl.rolloutsPerPrompt,
        lr: R.rl.lr,
        warmupSteps: R.rl.warmupSteps,
        maxResponseTokens: R.rl.maxResponseTokens,
        maxTurns: R.rl.maxTurns,
      },
      eval: { k: R.eval.k, maxTokens: R.eval.maxTokens, maxTurns: R.eval.maxTurns },
      template: { toolName: 'execute_python_code_with_standard_io', variant: 'full' as const },
    };
  }
  const E = EMBEDDED_DEFAULTS;
  const response = Math.max(1, Math.min(E.rl.maxResponseTokens, model.block_size - EMBEDDED_PROMPT_RESERVE));
  return {
    sft: { lr: E.sft.lr, batch: E.sft.batch, maxLength: model.block_size },
    rl: { ...E.rl, maxResponseTokens: response },
    eval: { k: E.eval.k, maxTokens: response, maxTurns: E.eval.maxTurns },
    template: { toolName: 'python', variant: 'minimal' as const },
  };
}

/** Fill the model-dependent defaults (see the file comment). */
function resolveDefaults(r: RecipeObject): Recipe {
  const d = defaultsFor(r.model);
  const stages: Stage[] = r.stages.map((s) => {
    if (s.type === 'sft')
      return { ...s, lr: s.lr ?? d.sft.lr, batch: s.batch ?? d.sft.batch, maxLength: s.maxLength ?? d.sft.maxLength };
    const rolloutsPerPrompt = s.rolloutsPerPrompt ?? d.rl.rolloutsPerPrompt;
    return {
      ...s,
      steps: s.steps ?? d.rl.steps,
      promptsPerStep: s.promptsPerStep ?? d.rl.promptsPerStep,
      rolloutsPerPrompt,
      keep: s.keep ?? (s.roc.enabled ? Math.floor(rolloutsPerPrompt / 2) : rolloutsPerPrompt),
      lr: s.lr ?? d.rl.lr,
      warmupSteps: s.warmupSteps ?? d.rl.warmupSteps,
      maxResponseTokens: s.maxResponseTokens ?? d.rl.maxResponseTokens,
      maxTurns: s.maxTurns ?? d.rl.maxTurns,
      tool: s.tool ?? r.tool,
    };
  });
  const template: TemplateSpec = {
    ...r.template,
    toolName: r.template.toolName ?? d.template.toolName,
    variant: r.template.variant ?? d.template.variant,
  };
  const { eval: ev, ...rest } = r;
  const tokenizer =
    r.tokenizer ?? (r.model.kind === 'embedded' ? { kind: 'char' as const } : { kind: 'model' as const });
  const out: Recipe = { ...rest, tokenizer, template, stages };
  if (ev)
    out.eval = {
      ...ev,
      k: ev.k ?? d.eval.k,
      maxTokens: ev.maxTokens ?? d.eval.maxTokens,
      maxTurns: ev.maxTurns ?? d.eval.maxTurns,
    };
  return out;
}

/** The recipe schema: input → checked → defaults resolved → within what a worker holds (contracts/recipe-bounds.ts). Output type: Recipe. */
export const RecipeSchema = RecipeObjectSchema.superRefine(checkRecipe)
  .transform(resolveDefaults)
  .superRefine((r, ctx) => {
    for (const b of checkRecipeBounds(r)) ctx.addIssue({ code: 'custom', path: b.path, message: b.message });
  });

/** Parse a recipe; a failure is a UserError naming each field path and the reason ("stages.1.keep: …"). */
export function parseRecipe(value: unknown): Recipe {
  return parseUserInput(RecipeSchema, value, 'recipe');
}

export interface RecipeIssue {
  path: string;
  message: string;
}

/** For the editor's inline errors: every issue with its dotted path ("stages.1.rolloutsPerPrompt"). */
export function validateRecipe(value: unknown): { ok: true; recipe: Recipe } | { ok: false; errors: RecipeIssue[] } {
  const r = RecipeSchema.safeParse(value);
  if (r.success) return { ok: true, recipe: r.data };
  return { ok: false, errors: r.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })) };
}

/** The issues as one line (same text parseRecipe throws, without the prefix). */
export function recipeIssuesText(errors: RecipeIssue[]): string {
  return zodIssuesText(errors.map((e) => ({ path: e.path ? e.path.split('.') : [], message: e.message })));
}

/** Optimiser steps of one stage (SFT: epochs × ⌈demos / batch⌉ capped by maxSteps, as workers/train/sft.ts sftSteps). */
export function stageSteps(s: Stage): number {
  if (s.type === 'rl') return s.steps;
  return Math.min(s.maxSteps ?? Infinity, s.epochs * Math.ceil(s.data.n / s.batch));
}

/** Total optimiser steps of a recipe (the run's progress bar). */
export function totalSteps(recipe: Recipe): number {
  return recipe.stages.reduce((a, s) => a + stageSteps(s), 0);
}

export interface StageBoundary {
  stage: number;
  name: string;
  type: string;
  startStep: number;
  endStep: number;
}

/**
 * Where each stage of a training recipe starts and ends on the run's global step axis (steps count from 1 across
 * stages, as the orchestrator numbers them): stage i covers startStep..endStep. [] for a run without stages; stops
 * at the first stage whose length cannot be told. Client-safe: the run page and the compare API both use it.
 */
export function stageBoundaries(spec: unknown): StageBoundary[] {
  const stages = (spec as { stages?: unknown } | null)?.stages;
  if (!Array.isArray(stages)) return [];
  const out: StageBoundary[] = [];
  let done = 0;
  for (const [i, s] of (stages as Stage[]).entries()) {
    let n: number;
    try {
      n = stageSteps(s);
    } catch {
      return out;
    }
    if (!Number.isFinite(n)) return out;
    out.push({
      stage: i,
      name: String(s.name ?? `stage ${i}`),
      type: String(s.type),
      startStep: done + 1,
      endStep: done + n,
    });
    done += n;
  }
  return out;
}

/** Every data source a recipe reads (for listing "datasets" and checking stored ones exist before a run). */
export function recipeDataSources(
  recipe: Recipe,
): { where: string; source: PromptSource | z.output<typeof SftDataSchema> }[] {
  const out: { where: string; source: PromptSource | z.output<typeof SftDataSchema> }[] = [];
  recipe.stages.forEach((s, i) => out.push({ where: `stages.${i}.data`, source: s.data }));
  recipe.eval?.datasets.forEach((d, i) => out.push({ where: `eval.datasets.${i}`, source: d }));
  return out;
}
