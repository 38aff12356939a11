// `npm run check:gpu`: the trainer's GPU path in one short run (workers/trainer/gpu_check.py), one JSON line out.
// No set-up and no network: on a lent GPU machine it runs under that machine's python3 when there is no .venv.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const venv = path.join(ROOT, '.venv/bin/python');
const python = process.env.TOOLSMITH_TRAINER_PYTHON || (fs.existsSync(venv) ? venv : 'python3');
const r = spawnSync(python, [path.join(ROOT, 'workers/trainer/gpu_check.py'), ...process.argv.slice(2)], {
  stdio: 'inherit',
  timeout: 300_000,
});
if (r.error) console.error(`[check:gpu] could not run ${python}: ${r.error.message}`);
process.exit(r.status ?? 1);
