// A worker's lanes: imports and diagnostics run in side slots beside the main lane's one job, and an
// imported run's status badge says what is true of the read.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runStatusLabel } from '../../components/ui/status-label.ts';
import { SIDE_JOB_KINDS } from '../../contracts/jobs.ts';
import { splitKinds } from '../../workers/lanes.ts';

test('side kinds leave the main lane; with no side slots every kind stays in it', () => {
  const kinds = ['dataset.add', 'diagnostics', 'eval', 'import', 'model.fetch', 'train', 'test.count'];
  assert.deepEqual(splitKinds(kinds, 4), {
    main: ['eval', 'train', 'test.count'],
    side: ['dataset.add', 'diagnostics', 'import', 'model.fetch'],
  });
  assert.deepEqual(splitKinds(kinds, 0), { main: kinds, side: [] });
  // A worker started for imports only has no main lane.
  assert.deepEqual(splitKinds(['import'], 2), { main: [], side: ['import'] });
  assert.deepEqual([...SIDE_JOB_KINDS].sort(), ['dataset.add', 'diagnostics', 'import', 'model.fetch']);
});

test("an imported run's badge: queued waiting for a slot, importing or following, imported, stopped", () => {
  assert.equal(runStatusLabel('queued', 'import', true), 'queued · waiting for an import slot');
  assert.equal(runStatusLabel('running', 'import', true), 'following');
  assert.equal(runStatusLabel('running', 'import', false), 'importing');
  assert.equal(runStatusLabel('running', 'import', null), 'importing');
  assert.equal(runStatusLabel('succeeded', 'import', false), 'imported');
  assert.equal(runStatusLabel('cancelled', 'import', false), 'stopped');
  assert.equal(runStatusLabel('failed', 'import', true), 'failed');
  // Every other run says its status as it is.
  for (const s of ['queued', 'running', 'succeeded', 'cancelled', 'paused', 'failed'])
    assert.equal(runStatusLabel(s, 'train', null), s);
});
