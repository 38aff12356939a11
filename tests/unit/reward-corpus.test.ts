import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, test } from 'node:test';
import { Verifier } from '../../workers/reward/verifier.ts';

const rows = fs
  .readFileSync(new URL('../fixtures/verifier-corpus.jsonl', import.meta.url), 'utf8')
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l) as { gold: string; pred: string; equal: boolean; note: string });
// Each symbolic check's time limit (2 s by default) is one these verdicts never mean to reach: generous, so that a check
// stalled on a busy machine is still decided by what it computes (tests/unit/reward-timeout.test.ts tests the limit).
const v = new Verifier({ workers: 2, timeoutMs: 60_000 });
after(() => v.close());

test('the corpus has at least 200 pairs, both equal and not equal', () => {
  assert.ok(rows.length >= 200, `${rows.length} pairs`);
  assert.ok(rows.filter((r) => !r.equal).length >= 50);
});

test('every verdict on the verifier corpus is right', async () => {
  const wrong: string[] = [];
  await Promise.all(
    rows.map(async (r) => {
      const x = await v.verify(r.gold, r.pred);
      if (x.correct !== r.equal)
        wrong.push(
          `${r.note}: ${JSON.stringify(r.gold)} vs ${JSON.stringify(r.pred)} → ${x.correct} (${x.method}: ${x.reason})`,
        );
    }),
  );
  assert.deepEqual(wrong, []);
});
