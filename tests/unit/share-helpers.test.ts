import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expirySeconds, shareUrl } from '../../components/share/share-link.ts';
import { describeTarget, listRunId, sameTarget } from '../../components/share/share-target.ts';

test('share helpers: expiry, URL, matching targets, list filter, description', () => {
  assert.equal(expirySeconds('none'), undefined);
  assert.equal(expirySeconds('1d'), 86400);
  assert.equal(expirySeconds('7d'), 7 * 86400);
  assert.equal(expirySeconds('30d'), 30 * 86400);
  assert.equal(shareUrl('http://localhost:3000/', '/s/abc'), 'http://localhost:3000/s/abc');
  assert.equal(shareUrl('https://x.y', 's/abc'), 'https://x.y/s/abc');

  assert.ok(sameTarget({ scope: 'run', target: { runId: 'r1' } }, { scope: 'run', target: { runId: 'r1' } }));
  assert.ok(
    !sameTarget({ scope: 'run', target: { runId: 'r1' } }, { scope: 'step', target: { runId: 'r1', step: 1 } }),
  );
  assert.ok(
    sameTarget(
      { scope: 'step', target: { runId: 'r1', step: 2 } },
      { scope: 'step', target: { runId: 'r1', step: 2 } },
    ),
  );
  assert.ok(
    !sameTarget(
      { scope: 'step', target: { runId: 'r1', step: 2 } },
      { scope: 'step', target: { runId: 'r1', step: 3 } },
    ),
  );
  assert.ok(
    sameTarget(
      { scope: 'trajectory', target: { trajectoryId: 't' } },
      { scope: 'trajectory', target: { trajectoryId: 't', runId: 'r' } },
    ),
  );
  assert.ok(
    sameTarget(
      { scope: 'compare', target: { runIds: ['a', 'b'] } },
      { scope: 'compare', target: { runIds: ['b', 'a'] } },
    ),
  );
  assert.ok(
    !sameTarget(
      { scope: 'compare', target: { runIds: ['a', 'b'] } },
      { scope: 'compare', target: { runIds: ['a', 'b', 'c'] } },
    ),
  );

  assert.equal(listRunId({ scope: 'compare', target: { runIds: ['a', 'b'] } }), 'a');
  assert.equal(listRunId({ scope: 'trajectory', target: { trajectoryId: 't' } }), undefined);
  assert.equal(listRunId({ scope: 'step', target: { runId: 'r', step: 0 } }), 'r');
  assert.equal(describeTarget('step', { runId: 'r', step: 4 }), 'run r, step 4');
  assert.equal(describeTarget('compare', { runIds: ['a', 'b'] }), '2 runs: a, b');

  // A trace view's columns keep the link's order, so the same runs in another order are another link.
  const traces = { scope: 'traces', target: { runIds: ['a', 'b'], problemId: 'p1' } } as const;
  assert.ok(sameTarget({ scope: 'traces', target: { runIds: ['a', 'b'], problemId: 'p1' } }, traces));
  assert.ok(!sameTarget({ scope: 'traces', target: { runIds: ['b', 'a'], problemId: 'p1' } }, traces));
  assert.ok(!sameTarget({ scope: 'traces', target: { runIds: ['a', 'b'], problemId: 'p2' } }, traces));
  assert.ok(!sameTarget({ scope: 'compare', target: { runIds: ['a', 'b'] } }, traces));
  assert.equal(listRunId({ scope: 'traces', target: { runIds: ['b', 'a'], problemId: 'p1' } }), 'b');
  assert.equal(describeTarget('traces', traces.target), 'problem p1 in 2 runs: a, b');
});
