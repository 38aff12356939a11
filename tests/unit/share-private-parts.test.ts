/** What a share link hides of the server (server/share/private-parts.ts); the API-level case: tests/integration/imports-share.test.ts. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sharedRecipeSpec, sharedText, sharedValue } from '../../server/share/private-parts.ts';

test("the imported folder and a worker's host and pid are replaced; other text stays", () => {
  assert.equal(
    sharedText('importing verl rollouts from /srv/runs/a (following)', '/srv/runs/a'),
    'importing verl rollouts from (the imported folder) (following)',
  );
  assert.equal(
    sharedText('worker gpu-3-991 started import (attempt 1/3)', null),
    'a worker started import (attempt 1/3)',
  );
  assert.equal(sharedText('worker box-1 shut down; job released', null), 'a worker shut down; job released');
  assert.equal(sharedText('step 3 done', '/srv/runs/a'), 'step 3 done');
  assert.deepEqual(sharedValue({ data: { error: 'ENOENT /srv/runs/a/x' }, seq: 3 }, '/srv/runs/a'), {
    data: { error: 'ENOENT (the imported folder)/x' },
    seq: 3,
  });
  assert.deepEqual(
    sharedRecipeSpec({ imported: { format: 'verl', path: '/srv/runs/a', frameworkVersion: null } }, '/srv/runs/a'),
    {
      imported: { format: 'verl', frameworkVersion: null },
    },
  );
});
