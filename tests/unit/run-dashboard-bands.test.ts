// The run page's bands (issue 16, requirement 2): per-step rollout accuracy and each evaluation's pass@1 are drawn
// with their 95% intervals, which are logged beside them and kept out of the panels' own lines.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  chartRows,
  evalPanels,
  PANELS,
  PANEL_KEYS,
  withBands,
  type SeriesMap,
} from '../../components/runs/dashboard.ts';

test('the accuracy panel bands rollout/accuracy with its bounds; the bounds are panel keys, not lines', () => {
  const reward = PANELS.find((p) => p.id === 'reward')!;
  assert.deepEqual(reward.bands, [{ of: 'rollout/accuracy', lo: 'rollout/accuracy_lo', hi: 'rollout/accuracy_hi' }]);
  assert.ok(PANEL_KEYS.has('rollout/accuracy_lo') && PANEL_KEYS.has('rollout/accuracy_hi'));
  assert.ok(
    PANELS.find((p) => p.id === 'tool-errors')!.lines.some((l) => l.key === 'rollout/tool_error_rate_correct'),
    'tool errors inside correct trajectories',
  );
});

test('the evaluation panels: pass rates with a band where pass@1 has its interval; tool use apart; length elsewhere', () => {
  const pt = (step: number, value: number) => ({ step, value });
  const series: SeriesMap = {
    'eval/arith/pass1': [pt(0, 0.4), pt(40, 0.6)],
    'eval/arith/pass1_lo': [pt(0, 0.33), pt(40, 0.53)],
    'eval/arith/pass1_hi': [pt(0, 0.47), pt(40, 0.67)],
    'eval/arith/pass4': [pt(0, 0.7)],
    'eval/old/pass1': [pt(0, 0.5)],
    'eval/arith/length': [pt(0, 90)],
    'eval/arith/tool_error_rate_correct': [pt(0, 0.04)],
    'eval/arith/no_tool_call_rate': [pt(0, 0.24)],
  };
  const [panel, tools, ...rest] = evalPanels(series);
  assert.equal(rest.length, 0);
  assert.ok(panel!.percent && tools!.percent);
  assert.deepEqual(
    panel!.lines.map((l) => l.key),
    ['eval/arith/pass1', 'eval/arith/pass4', 'eval/old/pass1'],
  );
  assert.deepEqual(
    tools!.lines.map((l) => l.key),
    ['eval/arith/no_tool_call_rate', 'eval/arith/tool_error_rate_correct'],
  );
  assert.deepEqual(panel!.bands, [{ of: 'eval/arith/pass1', lo: 'eval/arith/pass1_lo', hi: 'eval/arith/pass1_hi' }]);
  const rows = withBands(
    chartRows(series, ['eval/arith/pass1', 'eval/arith/pass1_lo', 'eval/arith/pass1_hi', 'eval/old/pass1'], 0),
    panel!.bands,
  );
  assert.deepEqual(
    rows.map((r) => r['eval/arith/pass1~band']),
    [
      [0.33, 0.47],
      [0.53, 0.67],
    ],
  );
  assert.deepEqual(evalPanels({ 'rollout/accuracy': [pt(1, 0.5)] }), []);
  const plain = chartRows(series, ['eval/old/pass1'], 0);
  assert.equal(withBands(plain, undefined), plain);
});
