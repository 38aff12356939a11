// The run page's bands: per-step rollout accuracy and each evaluation's pass@1 are drawn
// with their 95% intervals, which are logged beside them and kept out of the panels' own lines.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  chartRows,
  evalPanels,
  PANELS,
  panelHeadlines,
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

test('panel headlines are each line’s last logged value, unsmoothed; evaluation panels are never smoothed', () => {
  const pt = (step: number, value: number) => ({ step, value });
  const series: SeriesMap = {
    'rollout/accuracy': [pt(3, 0.1), pt(4, 0.5), pt(5, 0.9)],
    'eval/arith/pass1': [pt(2, 0.2), pt(5, 0.8)],
    'eval/arith/pass1_lo': [pt(2, 0.1), pt(5, 0.7)],
    'eval/arith/pass1_hi': [pt(2, 0.3), pt(5, 0.9)],
    'eval/old/pass1': [pt(2, 0.4)],
  };
  const reward = PANELS.find((p) => p.id === 'reward')!;
  assert.deepEqual(panelHeadlines(reward, series), [
    { key: 'rollout/accuracy', label: 'accuracy (mean reward)', step: 5, value: 0.9, band: null },
  ]);
  // The smoothed curve ends below the last value: a headline taken from it would understate the run.
  const smoothed = chartRows(series, ['rollout/accuracy'], 0.6).at(-1)!['rollout/accuracy~']!;
  assert.ok(smoothed < 0.85, `smoothed end ${smoothed}`);
  const [evalPanel, ...rest] = evalPanels(series);
  assert.equal(rest.length, 0);
  assert.equal(evalPanel!.raw, true);
  assert.ok(!reward.raw, 'training panels follow the slider');
  // A line logged at other steps than the rest keeps its own last point.
  assert.deepEqual(
    panelHeadlines(evalPanel!, series).map((h) => [h.key, h.step, h.value, h.band]),
    [
      ['eval/arith/pass1', 5, 0.8, { lo: 0.7, hi: 0.9 }],
      ['eval/old/pass1', 2, 0.4, null],
    ],
  );
  assert.deepEqual(panelHeadlines(reward, {}), []);
});
