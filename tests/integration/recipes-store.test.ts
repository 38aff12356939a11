// @postgresql: also on PostgreSQL, because recipe versions rely on each dialect's unique constraints and transactions.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { freshDatabase } from '../helpers/db.ts';
import type { Database } from '../../server/db/client.ts';
import { UserError } from '../../contracts/errors.ts';
import { EMBEDDED_ARITH, EMBEDDED_ARITH_INPUT, MICRO_INPUT } from '../../server/recipes/defaults.ts';
import {
  createRecipeVersion,
  getRecipe,
  listRecipes,
  listRecipeVersions,
  seedDefaultRecipes,
} from '../../server/store/recipes.ts';
import { totalSteps } from '../../contracts/recipe.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
});
afterEach(async () => {
  await fresh.close();
});

const { name: _omit, ...microSpec } = MICRO_INPUT;
const withSeed = (seed: number) => ({ ...microSpec, seed });

test('versions increment per name, each pointing at its parent; the spec is stored parsed', async () => {
  const a = await createRecipeVersion(db, 'exp', withSeed(1));
  const b = await createRecipeVersion(db, 'exp', withSeed(2), { note: 'new seed' });
  const c = await createRecipeVersion(db, 'exp', withSeed(3));
  const other = await createRecipeVersion(db, 'other', withSeed(1));
  assert.deepEqual([a.status, b.status, c.status, other.status], ['created', 'created', 'created', 'created']);
  assert.deepEqual([a.recipe.version, b.recipe.version, c.recipe.version, other.recipe.version], [1, 2, 3, 1]);
  assert.deepEqual([a.recipe.parentId, b.recipe.parentId, c.recipe.parentId], [null, a.recipe.id, b.recipe.id]);
  assert.equal(b.recipe.note, 'new seed');
  assert.equal(b.recipe.spec.name, 'exp');
  assert.equal(b.recipe.spec.seed, 2);
  // Defaults filled in before storing.
  assert.equal(b.recipe.spec.template.variant, 'minimal');
  assert.equal((await getRecipe(db, { name: 'exp' }))?.version, 3);
  assert.equal((await getRecipe(db, { name: 'exp', version: 2 }))?.id, b.recipe.id);
  assert.deepEqual((await getRecipe(db, { id: a.recipe.id }))?.spec, a.recipe.spec);
  assert.equal(await getRecipe(db, { name: 'exp', version: 9 }), null);
  assert.equal(await getRecipe(db, { id: 'nope' }), null);
  assert.deepEqual(
    (await listRecipeVersions(db, 'exp')).map((r) => r.version),
    [3, 2, 1],
  );
});

test('saving the same spec as the latest version returns it instead of a duplicate', async () => {
  const a = await createRecipeVersion(db, 'exp', withSeed(1));
  // Same recipe, written differently: defaults spelled out, keys in another order, the name included.
  const again = await createRecipeVersion(db, 'exp', {
    ...a.recipe.spec,
    stages: a.recipe.spec.stages.map((s) => Object.fromEntries(Object.entries(s).reverse())),
  });
  assert.equal(again.status, 'unchanged');
  assert.equal(again.recipe.id, a.recipe.id);
  assert.equal(await db.prisma.recipe.count(), 1);
  // Equal to an older version but not the latest: a new version (going back is an edit too).
  await createRecipeVersion(db, 'exp', withSeed(2));
  const back = await createRecipeVersion(db, 'exp', withSeed(1));
  assert.equal(back.status, 'created');
  assert.equal(back.recipe.version, 3);
});

test('invalid specs and names are rejected with the field path and nothing is written', async () => {
  await assert.rejects(
    createRecipeVersion(db, 'exp', { ...microSpec, stages: [] }),
    (e: unknown) => e instanceof UserError && /stages: give at least one stage/.test(e.message),
  );
  await assert.rejects(
    createRecipeVersion(db, 'bad name', microSpec),
    (e: unknown) => e instanceof UserError && /name/.test(e.message),
  );
  await assert.rejects(
    createRecipeVersion(db, 'exp', { ...microSpec, name: 'different' }),
    (e: unknown) => e instanceof UserError && /name/.test(e.message),
  );
  await assert.rejects(createRecipeVersion(db, 'exp', 'not json'), UserError);
  assert.equal(await db.prisma.recipe.count(), 0);
});

test('seedDefaultRecipes creates embedded-arith, smollm2-gsm-tool, smollm2-arith-tool and rstar2-qwen3-14b v1 once', async () => {
  const first = await seedDefaultRecipes(db);
  assert.deepEqual(
    first.map((r) => [r.name, r.version]),
    [
      ['embedded-arith', 1],
      ['smollm2-gsm-tool', 1],
      ['smollm2-arith-tool', 1],
      ['rstar2-qwen3-14b', 1],
    ],
  );
  assert.deepEqual(first[0]!.spec, EMBEDDED_ARITH);
  assert.deepEqual(await seedDefaultRecipes(db), []);
  await Promise.all([seedDefaultRecipes(db), seedDefaultRecipes(db)]);
  assert.equal(await db.prisma.recipe.count(), 4);
  // A user's edit of the default is kept: seeding again adds nothing.
  await createRecipeVersion(db, 'embedded-arith', { ...EMBEDDED_ARITH, seed: 5 });
  assert.deepEqual(await seedDefaultRecipes(db), []);
  assert.equal((await getRecipe(db, { name: 'embedded-arith' }))?.version, 2);
});

test('a data folder seeded with older built-in defaults gets the current ones as a new version, once', async () => {
  // As an earlier checkout seeded it: 2,000 SFT steps' worth of demos, the note every built-in carries.
  const old = {
    ...EMBEDDED_ARITH_INPUT,
    stages: [
      { ...EMBEDDED_ARITH_INPUT.stages[0], data: { ...EMBEDDED_ARITH_INPUT.stages[0].data, n: 16000 } },
      ...EMBEDDED_ARITH_INPUT.stages.slice(1),
    ],
  };
  await createRecipeVersion(db, 'embedded-arith', old, { note: 'built-in default' });
  assert.deepEqual(
    (await seedDefaultRecipes(db)).map((r) => [r.name, r.version]),
    [
      ['smollm2-gsm-tool', 1],
      ['smollm2-arith-tool', 1],
      ['rstar2-qwen3-14b', 1],
    ],
    'only the other built-ins are new',
  );
  const now = await getRecipe(db, { name: 'embedded-arith' });
  assert.equal(now?.version, 2);
  assert.deepEqual(now?.spec, EMBEDDED_ARITH);
  assert.match(now?.note ?? '', /built-in default \(updated\)/);
  await seedDefaultRecipes(db);
  assert.equal((await getRecipe(db, { name: 'embedded-arith' }))?.version, 2, 'idempotent');
});

test('a stored version cannot be updated (database trigger)', async () => {
  const a = await createRecipeVersion(db, 'exp', withSeed(1));
  // Through Prisma the trigger's text may be lost (SQLite's RAISE(ABORT) is reported as a constraint error): just rejected.
  await assert.rejects(db.prisma.recipe.update({ where: { id: a.recipe.id }, data: { spec: '{}' } }));
  await assert.rejects(db.execute(`UPDATE "Recipe" SET "spec" = ? WHERE "id" = ?`, ['{}', a.recipe.id]), /immutable/);
  await assert.rejects(db.execute(`UPDATE "Recipe" SET "version" = 7 WHERE "id" = ?`, [a.recipe.id]), /immutable/);
  assert.deepEqual((await getRecipe(db, { id: a.recipe.id }))?.spec, a.recipe.spec);
  // The note is not part of the recipe and may change.
  await db.prisma.recipe.update({ where: { id: a.recipe.id }, data: { note: 'annotated' } });
  assert.equal((await getRecipe(db, { id: a.recipe.id }))?.note, 'annotated');
});

test('listRecipes: the latest version of each name with its version count', async () => {
  assert.deepEqual(await listRecipes(db), []);
  await seedDefaultRecipes(db);
  await createRecipeVersion(db, 'exp', withSeed(1));
  await createRecipeVersion(db, 'exp', withSeed(2));
  const list = await listRecipes(db);
  assert.deepEqual(
    list.map((r) => [r.name, r.version, r.versions]),
    [
      ['embedded-arith', 1, 1],
      ['exp', 2, 2],
      ['rstar2-qwen3-14b', 1, 1],
      ['smollm2-arith-tool', 1, 1],
      ['smollm2-gsm-tool', 1, 1],
    ],
  );
  assert.equal(list[0]!.totalSteps, totalSteps(EMBEDDED_ARITH));
  assert.deepEqual(list[1]!.stages, [
    { type: 'sft', name: 'sft' },
    { type: 'rl', name: 'rl' },
  ]);
  assert.equal(list[1]!.id, (await getRecipe(db, { name: 'exp' }))!.id);
});

test('concurrent saves of different specs under one name get distinct versions', async () => {
  const rs = await Promise.all([1, 2, 3, 4].map((s) => createRecipeVersion(db, 'race', withSeed(s))));
  assert.deepEqual(rs.map((r) => r.recipe.version).sort(), [1, 2, 3, 4]);
});
