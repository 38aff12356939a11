import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evalSteps, finishReasonsText, pass1OverSteps, pct } from '../../components/evals/eval-rows.ts';
import { referenceScore } from '../../components/evals/reference.ts';
import { REPORT_REFERENCE } from '../../server/trpc/routers/evals.ts';

test('evaluation helpers: steps, pass@1 over steps, finish reasons, percentages', () => {
  const rows = [
    { step: 10, benchmark: 'aime24', pass1: 0.5 },
    { step: 0, benchmark: 'aime24', pass1: 0.25 },
    { step: 10, benchmark: 'math500', pass1: 0.8 },
  ];
  assert.deepEqual(evalSteps(rows), [0, 10]);
  assert.deepEqual(pass1OverSteps(rows), {
    benchmarks: ['aime24', 'math500'],
    data: [
      { step: 0, aime24: 25, math500: null },
      { step: 10, aime24: 50, math500: 80 },
    ],
  });
  assert.equal(finishReasonsText({ length: 1, stop: 3 }), 'stop 75% · length 25%');
  assert.equal(finishReasonsText({}), '—');
  assert.equal(finishReasonsText(null), '—');
  assert.equal(pct(0.5), '50.0%');
  assert.equal(pct(null), '—');
});

test('referenceScore: loose benchmark names against the report table', () => {
  assert.equal(referenceScore(REPORT_REFERENCE, 'rStar2-Agent-14B', 'aime24'), 80.6);
  assert.equal(referenceScore(REPORT_REFERENCE, 'rStar2-Agent-14B', 'MATH 500'), 97.8);
  assert.equal(referenceScore(REPORT_REFERENCE, 'rStar2-Agent-14B', 'gsm8k'), null);
  assert.equal(referenceScore(REPORT_REFERENCE, 'nobody', 'aime24'), null);
});
