import type { Recipe } from './recipe-schema.ts';

/**
 * How big a recipe may be: what one worker can hold. A step keeps every trajectory of the step in memory with its
 * token arrays (ids, engine log-probs, masks) until the update, so prompts × rollouts and their response budget
 * bound the worker's memory; the schema's per-field maxima alone allow 100,000 prompts × 1,024 rollouts, which
 * exhausts any worker. Checked on the parsed recipe (defaults filled in) by RecipeSchema, so recipes.validate,
 * save and launch all refuse the same recipes with the same message. docs/deploying-and-security.md "Recipe bounds"
 * lists this table.
 */
export interface RecipeLimit {
  /** The field (pattern) it bounds, as the error names it. */
  field: string;
  limit: number;
  /** What is counted, for the error message. */
  what: string;
  why: string;
}

export const RECIPE_LIMITS = {
  stages: {
    field: 'stages',
    limit: 20,
    what: 'stages',
    why: 'each stage is a separate schedule, checkpoint and evaluation; more is a sweep, not a recipe',
  },
  embeddedTrajectoriesPerStep: {
    field: 'stages.N.promptsPerStep × rolloutsPerPrompt (× dynamicSampling.maxGenBatches)',
    limit: 4096,
    what: 'trajectories per step (embedded model)',
    why: 'the embedded worker keeps every trajectory of a step in memory, with its token arrays, and runs them on its own CPU',
  },
  modelTrajectoriesPerStep: {
    field: 'stages.N.promptsPerStep × rolloutsPerPrompt (× dynamicSampling.maxGenBatches)',
    limit: 65_536,
    what: 'trajectories per step (named model)',
    why: 'the worker keeps every trajectory of a step in memory until the update (the report runs 512 × 32 = 16,384)',
  },
  tokensPerStep: {
    field: 'stages.N.promptsPerStep × rolloutsPerPrompt × maxResponseTokens',
    limit: 2 ** 28,
    what: 'response tokens per step',
    why: 'each response token is held as an id, a log-prob and a mask until the update (~2.5 GB at the limit)',
  },
  responseTokens: {
    field: 'stages.N.maxResponseTokens, eval.maxTokens',
    limit: 131_072,
    what: 'response tokens per trajectory',
    why: 'no supported model has a longer context',
  },
  turns: {
    field: 'stages.N.maxTurns, eval.maxTurns',
    limit: 256,
    what: 'turns per trajectory',
    why: 'each turn is a generation and a sandboxed tool call kept in the trajectory (the report uses 10-30)',
  },
  evalTrajectories: {
    field: 'eval: k × problems',
    limit: 262_144,
    what: 'trajectories per evaluation',
    why: 'an evaluation keeps its trajectories in memory to score pass@k (the report: 30 AIME problems × 16)',
  },
  hardFilterTrajectories: {
    field: 'stages.N.dataFilter.k × problems',
    limit: 1_048_576,
    what: 'rollouts of the hard-subset filter',
    why: 'the filter runs the policy k times on every problem before the stage',
  },
  sftTokens: {
    field: 'stages.N.data.n × maxLength',
    limit: 2 ** 28,
    what: 'SFT demonstration tokens',
    why: 'the demonstrations are tokenised and held in memory for the whole stage',
  },
} as const satisfies Record<string, RecipeLimit>;

export interface BoundIssue {
  path: (string | number)[];
  message: string;
}

const fmt = (n: number) => n.toLocaleString('en-US');
const over = (l: RecipeLimit, value: number, how: string) =>
  `${how} = ${fmt(value)} ${l.what}, over the limit of ${fmt(l.limit)}: ${l.why}`;

/** Problems a data source yields, when the recipe says (a stored dataset without `limit` is not known here). */
function problemsOf(source: { kind: string; n?: number; limit?: number }): number | null {
  if (source.kind === 'generated') return source.n ?? null;
  return source.limit ?? null;
}

/** Every bound a parsed recipe breaks, each naming its field, the limit and why. [] when it fits. */
export function checkRecipeBounds(r: Recipe): BoundIssue[] {
  const L = RECIPE_LIMITS;
  const out: BoundIssue[] = [];
  if (r.stages.length > L.stages.limit)
    out.push({
      path: ['stages'],
      message: `${r.stages.length} stages, over the limit of ${L.stages.limit}: ${L.stages.why}`,
    });
  const perStep = r.model.kind === 'embedded' ? L.embeddedTrajectoriesPerStep : L.modelTrajectoriesPerStep;
  r.stages.forEach((s, i) => {
    if (s.type === 'sft') {
      const tokens = s.data.n * s.maxLength;
      if (tokens > L.sftTokens.limit)
        out.push({
          path: ['stages', i, 'data', 'n'],
          message: over(L.sftTokens, tokens, `${fmt(s.data.n)} demos × maxLength ${fmt(s.maxLength)}`),
        });
      return;
    }
    const trajectories = s.promptsPerStep * s.rolloutsPerPrompt;
    const how = `promptsPerStep ${fmt(s.promptsPerStep)} × rolloutsPerPrompt ${fmt(s.rolloutsPerPrompt)}`;
    // Dynamic sampling holds up to maxGenBatches rounds of at most promptsPerStep groups each (dynamic-sampling.ts).
    const rounds = s.dynamicSampling.enabled ? s.dynamicSampling.maxGenBatches : 1;
    if (trajectories > perStep.limit)
      out.push({ path: ['stages', i, 'promptsPerStep'], message: over(perStep, trajectories, how) });
    else if (trajectories * rounds > perStep.limit)
      out.push({
        path: ['stages', i, 'dynamicSampling', 'maxGenBatches'],
        message: over(perStep, trajectories * rounds, `${how} × dynamicSampling.maxGenBatches ${fmt(rounds)}`),
      });
    else if (trajectories * rounds * s.maxResponseTokens > L.tokensPerStep.limit) {
      out.push({
        path: ['stages', i, 'maxResponseTokens'],
        message: over(
          L.tokensPerStep,
          trajectories * rounds * s.maxResponseTokens,
          `${how}${rounds > 1 ? ` × dynamicSampling.maxGenBatches ${fmt(rounds)}` : ''} × maxResponseTokens ${fmt(s.maxResponseTokens)}`,
        ),
      });
    }
    if (s.maxResponseTokens > L.responseTokens.limit)
      out.push({
        path: ['stages', i, 'maxResponseTokens'],
        message: `${fmt(s.maxResponseTokens)} is over the limit of ${fmt(L.responseTokens.limit)} ${L.responseTokens.what}: ${L.responseTokens.why}`,
      });
    if (s.maxTurns > L.turns.limit)
      out.push({
        path: ['stages', i, 'maxTurns'],
        message: `${fmt(s.maxTurns)} is over the limit of ${fmt(L.turns.limit)} ${L.turns.what}: ${L.turns.why}`,
      });
    if (s.dataFilter.kind === 'hard') {
      const n = problemsOf(s.data);
      if (n != null && n * s.dataFilter.k > L.hardFilterTrajectories.limit) {
        out.push({
          path: ['stages', i, 'dataFilter', 'k'],
          message: over(L.hardFilterTrajectories, n * s.dataFilter.k, `k ${s.dataFilter.k} × ${fmt(n)} problems`),
        });
      }
    }
  });
  if (r.eval) {
    const e = r.eval;
    if (e.maxTokens > L.responseTokens.limit)
      out.push({
        path: ['eval', 'maxTokens'],
        message: `${fmt(e.maxTokens)} is over the limit of ${fmt(L.responseTokens.limit)} ${L.responseTokens.what}: ${L.responseTokens.why}`,
      });
    if (e.maxTurns > L.turns.limit)
      out.push({
        path: ['eval', 'maxTurns'],
        message: `${fmt(e.maxTurns)} is over the limit of ${fmt(L.turns.limit)} ${L.turns.what}: ${L.turns.why}`,
      });
    e.datasets.forEach((d, j) => {
      const n = problemsOf(d);
      if (n != null && n * e.k > L.evalTrajectories.limit)
        out.push({
          path: ['eval', 'datasets', j, d.kind === 'generated' ? 'n' : 'limit'],
          message: over(L.evalTrajectories, n * e.k, `k ${e.k} × ${fmt(n)} problems`),
        });
    });
  }
  return out;
}
