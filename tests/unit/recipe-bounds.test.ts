import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRecipe, validateRecipe } from '../../contracts/recipe.ts';
import { RECIPE_LIMITS } from '../../contracts/recipe-bounds.ts';
import { BUILTIN_RECIPES } from '../../server/recipes/defaults.ts';

// Loosely typed on purpose: these are what a person might send, oversized included.
const rl = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  type: 'rl',
  name: 'rl',
  data: { kind: 'generated', n: 64 },
  ...over,
});
const recipe = (over: Record<string, unknown> = {}): unknown => ({ name: 'r', stages: [rl()], ...over });
const named = { kind: 'model', name: 'qwen3-14b-sft' } as const;

function issues(input: unknown) {
  const v = validateRecipe(input);
  return v.ok ? [] : v.errors;
}

test('the built-in recipes fit their bounds', () => {
  for (const r of BUILTIN_RECIPES) assert.deepEqual(issues(r), [], r.name);
});

test("the issue's example (100,000 prompts × 1,024 rollouts) is refused naming the field, the limit and why", () => {
  for (const model of [undefined, named]) {
    const input = recipe({
      ...(model ? { model } : {}),
      stages: [rl({ promptsPerStep: 100_000, rolloutsPerPrompt: 1024 })],
    });
    const errs = issues(input);
    assert.equal(errs.length, 1, JSON.stringify(errs));
    assert.equal(errs[0]!.path, 'stages.0.promptsPerStep');
    const limit = model
      ? RECIPE_LIMITS.modelTrajectoriesPerStep.limit
      : RECIPE_LIMITS.embeddedTrajectoriesPerStep.limit;
    assert.match(
      errs[0]!.message,
      /promptsPerStep 100,000 × rolloutsPerPrompt 1,024 = 102,400,000 trajectories per step/,
    );
    assert.ok(errs[0]!.message.includes(`limit of ${limit.toLocaleString('en-US')}`), errs[0]!.message);
    assert.match(errs[0]!.message, /in memory/);
    // parseRecipe (save, launch) throws the same text.
    assert.throws(
      () => parseRecipe(input),
      (e: Error) => e.message.includes('stages.0.promptsPerStep: promptsPerStep 100,000'),
    );
  }
});

test('trajectories per step: the embedded limit is exact; a named model may hold more', () => {
  assert.deepEqual(issues(recipe({ stages: [rl({ promptsPerStep: 512, rolloutsPerPrompt: 8 })] })), []);
  assert.equal(
    issues(recipe({ stages: [rl({ promptsPerStep: 513, rolloutsPerPrompt: 8 })] }))[0]?.path,
    'stages.0.promptsPerStep',
  );
  assert.deepEqual(
    issues(
      recipe({ model: named, stages: [rl({ promptsPerStep: 513, rolloutsPerPrompt: 8, maxResponseTokens: 1024 })] }),
    ),
    [],
  );
});

test('response tokens per step: a named model with a huge budget per trajectory × many trajectories is refused', () => {
  const errs = issues(
    recipe({ model: named, stages: [rl({ promptsPerStep: 1024, rolloutsPerPrompt: 32, maxResponseTokens: 65_536 })] }),
  );
  assert.deepEqual(
    errs.map((e) => e.path),
    ['stages.0.maxResponseTokens'],
  );
  assert.match(errs[0]!.message, /response tokens per step, over the limit of 268,435,456/);
});

test('stages, response tokens, turns, eval k × problems, SFT demos and the hard filter each name their field', () => {
  const many = Array.from({ length: 21 }, (_, i) => rl({ name: `s${i}`, steps: 1 }));
  assert.match(
    issues(recipe({ stages: many })).find((e) => e.path === 'stages')!.message,
    /21 stages, over the limit of 20/,
  );

  const big = issues(
    recipe({ model: named, stages: [rl({ promptsPerStep: 1, maxResponseTokens: 200_000, maxTurns: 300 })] }),
  );
  assert.deepEqual(big.map((e) => e.path).sort(), ['stages.0.maxResponseTokens', 'stages.0.maxTurns']);
  assert.match(
    big.find((e) => e.path === 'stages.0.maxTurns')!.message,
    /300 is over the limit of 256 turns per trajectory/,
  );

  const ev = issues(recipe({ eval: { datasets: [{ kind: 'generated', n: 1_000_000 }], k: 16 } }));
  assert.deepEqual(
    ev.map((e) => e.path),
    ['eval.datasets.0.n'],
  );
  assert.match(
    ev[0]!.message,
    /k 16 × 1,000,000 problems = 16,000,000 trajectories per evaluation, over the limit of 262,144/,
  );

  const sft = issues(recipe({ stages: [{ type: 'sft', name: 'sft', data: { kind: 'generated', n: 1_000_000 } }] }));
  assert.deepEqual(
    sft.map((e) => e.path),
    ['stages.0.data.n'],
  );
  assert.match(sft[0]!.message, /1,000,000 demos × maxLength 512 = 512,000,000 SFT demonstration tokens/);

  const hard = issues(
    recipe({
      stages: [
        rl({ name: 'a' }),
        rl({ name: 'b', data: { kind: 'generated', n: 1_000_000 }, dataFilter: { kind: 'hard', k: 8 } }),
      ],
    }),
  );
  assert.deepEqual(
    hard.map((e) => e.path),
    ['stages.1.dataFilter.k'],
  );
});
