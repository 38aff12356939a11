// A launched run that asks for more than the worker host has (or its operator allows) is refused by the worker's
// preflight before the trainer starts, the run failing with the field, the figure and the limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { freshRunDatabase } from '../helpers/fresh-run-database.ts';
import { outputs, spawnWorker } from '../helpers/proc.ts';
import { waitRunEnded } from '../helpers/runs.ts';
import type { Database } from '../../server/db/client.ts';
import { MICRO_INPUT } from '../../server/recipes/defaults.ts';
import { launchTraining } from '../../server/lifecycle.ts';
import { readEvents } from '../../server/store/events.ts';

let db: Database;
let url: string;
freshRunDatabase((fresh) => {
  ({ db, url } = fresh);
});

test("a run over the worker's limits fails at launch naming each field, its figure and the limit; nothing trains", async () => {
  const mem = Math.ceil(os.totalmem() / 2 ** 20);
  const { runId } = await launchTraining(db, {
    spec: { ...MICRO_INPUT, name: 'too-big', trainer: { ranks: 2, device: 'cpu' }, tool: { memoryMb: 65_536 } },
  });
  const w = spawnWorker(url, 'limits-1', {
    env: { TOOLSMITH_MAX_TRAINER_RANKS: '1', TOOLSMITH_MAX_SANDBOX_MEMORY_MB: String(Math.min(mem, 32_768)) },
  });
  const run = await waitRunEnded(db, runId, { timeoutMs: 60_000, detail: () => outputs([w]) });
  assert.equal(run.status, 'failed');
  assert.match(
    run.error ?? '',
    /this worker cannot run the recipe: .*trainer\.ranks: 2 ranks is over this worker's limit of 1 \(TOOLSMITH_MAX_TRAINER_RANKS\)/,
  );
  assert.match(
    run.error ?? '',
    /tool\.memoryMb: 65,536 MiB per call × \d+ calls at once = [\d.]+ GiB, over this worker's limit of [\d.]+ GiB for the sandbox \(TOOLSMITH_MAX_SANDBOX_MEMORY_MB\)/,
  );
  const events = await readEvents(db, runId);
  assert.ok(
    events.some((e) => /cannot start: trainer\.ranks/.test(e.message ?? '')),
    'the refusal is a run event too',
  );
  assert.equal(run.step, 0, 'no step ran');
});

test('the engine on cuda where torch sees no GPU: the run fails at launch naming engine.device; nothing trains', {
  skip: fs.existsSync('/dev/nvidia0') ? 'this machine may have a GPU' : false,
}, async () => {
  const { runId } = await launchTraining(db, {
    spec: { ...MICRO_INPUT, name: 'engine-on-gpu', engine: { kind: 'embedded', device: 'cuda' } },
  });
  const w = spawnWorker(url, 'limits-2');
  const run = await waitRunEnded(db, runId, { timeoutMs: 60_000, detail: () => outputs([w]) });
  assert.equal(run.status, 'failed');
  assert.match(
    run.error ?? '',
    /this worker cannot run the recipe: .*engine\.device: "cuda" needs a GPU on this worker; torch sees none/,
  );
  assert.equal(run.step, 0, 'no step ran');
});
