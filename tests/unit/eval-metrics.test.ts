import { test } from 'node:test';
import assert from 'node:assert/strict';
import { passAtK, summarize, type SampleOutcome } from '../../workers/eval/metrics.ts';
import { formatEvalTable } from '../../workers/eval/run.ts';

const o = (
  correct: boolean,
  responseTokens = 100,
  toolCalls = 1,
  toolErrors = 0,
  finishReason = 'no_tool_call',
): SampleOutcome => ({ correct, responseTokens, toolCalls, toolErrors, finishReason });

test('pass@k: the unbiased estimator 1 − C(n−c, k)/C(n, k), by hand', () => {
  assert.equal(passAtK(4, 0, 1), 0);
  assert.equal(passAtK(4, 4, 4), 1);
  assert.equal(passAtK(4, 1, 1), 0.25);
  assert.ok(Math.abs(passAtK(4, 1, 2) - 0.5) < 1e-12); // 1 − C(3,2)/C(4,2) = 1 − 3/6
  assert.ok(Math.abs(passAtK(16, 3, 4) - (1 - 715 / 1820)) < 1e-12); // C(13,4)=715, C(16,4)=1820
  assert.equal(passAtK(4, 1, 4), 1, 'with n = k it is "any correct"');
  assert.throws(() => passAtK(2, 1, 3), /needs at least 3 samples/);
});

test('summarize: pass@1 averages samples then problems; tool-error rates pool calls (all, correct); no-call share; finish reasons', () => {
  const s = summarize(
    [
      [o(true, 100, 2, 1), o(false, 300, 0, 0, 'length')],
      [o(false, 50, 1, 1), o(false, 50, 1, 0)],
      [o(true), o(true)],
    ],
    2,
  );
  assert.equal(s.problems, 3);
  assert.equal(s.samples, 6);
  assert.ok(Math.abs(s.pass1 - (0.5 + 0 + 1) / 3) < 1e-12);
  assert.ok(Math.abs(s.passK - 2 / 3) < 1e-12);
  assert.ok(Math.abs(s.meanLength - (100 + 300 + 50 + 50 + 100 + 100) / 6) < 1e-12);
  assert.ok(Math.abs(s.toolCallsPerTrajectory - 6 / 6) < 1e-12);
  assert.ok(Math.abs(s.toolErrorRate - 2 / 6) < 1e-12);
  // Inside correct samples: calls 2 + 1 + 1, one failed; one sample of six never called the tool.
  assert.ok(Math.abs(s.toolErrorRateCorrect! - 1 / 4) < 1e-12);
  assert.ok(Math.abs(s.noToolCallRate! - 1 / 6) < 1e-12);
  assert.deepEqual(s.finishReasons, { no_tool_call: 5, length: 1 });
  assert.equal(summarize([[o(true, 10, 0)]], 1).toolErrorRate, 0, 'no calls: rate 0, not NaN');
});

test('the eval table has one aligned row per benchmark', () => {
  const row = { benchmark: 'aime24', datasetId: 'd', ...summarize([[o(true), o(false)]], 2) };
  const lines = formatEvalTable([row, { ...row, benchmark: 'math500-long-name' }]).split('\n');
  assert.equal(lines.length, 4);
  assert.match(
    lines[0]!,
    /^benchmark\s+problems\s+k\s+pass@1 \[95% CI\]\s+pass@k \[95% CI\]\s+length\s+calls\/traj\s+no call\s+tool err\s+in correct$/,
  );
  // One problem: the bootstrap over problems has nothing to vary, the interval is the point.
  assert.match(
    lines[2]!,
    /^aime24\s+1\s+2\s+50\.0% \[50\.0–50\.0\]\s+100\.0% \[100\.0–100\.0\]\s+100\s+1\.00\s+0\.0%\s+0\.0%\s+0\.0%$/,
  );
  assert.equal(new Set(lines.map((l) => l.length)).size, 1);
});
