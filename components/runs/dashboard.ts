/** Pure helpers of the run dashboard: chart panels, chart rows, stage boundaries, step rate and ETA. */
import type { StageEventData } from '../../contracts/runs.ts';
import { debiasedEma } from './smoothing.ts';
import { EVAL_METRIC_PREFIX, type EvalMetricKey, type MetricKey } from '../../contracts/metrics.ts';

export type SeriesPoint = { step: number; value: number; time?: number };
export type SeriesMap = Record<string, SeriesPoint[]>;

export interface Panel {
  id: string;
  title: string;
  /** Metric keys drawn, with their legend labels. */
  lines: { key: MetricKey | EvalMetricKey; label: string }[];
  kind: 'line' | 'stacked';
  /** Values are fractions: the axis shows percentages. */
  percent?: boolean;
  /** A shaded 95% band around a line: the keys of its lower and upper bounds (logged beside it). */
  bands?: { of: MetricKey | EvalMetricKey; lo: MetricKey | EvalMetricKey; hi: MetricKey | EvalMetricKey }[];
  /**
   * Never smoothed, whatever the slider says: each point is an estimate of its own (an evaluation's pass@1 with its
   * interval), and an average over earlier checkpoints would report an accuracy no checkpoint had.
   */
  raw?: boolean;
}

export const PANELS: Panel[] = [
  {
    id: 'reward',
    title: 'Reward / accuracy',
    kind: 'line',
    percent: true,
    lines: [{ key: 'rollout/accuracy', label: 'accuracy (mean reward)' }],
    bands: [{ of: 'rollout/accuracy', lo: 'rollout/accuracy_lo', hi: 'rollout/accuracy_hi' }],
  },
  {
    // docs/method.md §5 "Dynamic sampling and the pass-rate curriculum": a group with all-equal rewards trains nothing.
    id: 'groups',
    title: 'Groups per step',
    kind: 'line',
    lines: [
      { key: 'sampling/groups_drawn', label: 'drawn' },
      { key: 'sampling/groups_mixed', label: 'mixed rewards' },
      { key: 'roc/groups_kept', label: 'kept after RoC' },
      { key: 'curriculum/skipped', label: 'skipped by the curriculum' },
    ],
  },
  {
    id: 'tool-errors',
    title: 'Tool-error rate',
    kind: 'line',
    percent: true,
    lines: [
      { key: 'rollout/tool_error_rate', label: 'all trajectories' },
      { key: 'rollout/tool_error_rate_correct', label: 'correct trajectories' },
    ],
  },
  {
    id: 'length',
    title: 'Response length (tokens)',
    kind: 'line',
    lines: [{ key: 'rollout/response_length', label: 'response length' }],
  },
  {
    id: 'turns',
    title: 'Turns and tool calls per trajectory',
    kind: 'line',
    lines: [
      { key: 'rollout/turns', label: 'turns' },
      { key: 'rollout/tool_calls', label: 'tool calls' },
    ],
  },
  {
    id: 'clip',
    title: 'Clip fractions',
    kind: 'line',
    percent: true,
    lines: [
      { key: 'train/clip_frac_low', label: 'low (1−ε_low)' },
      { key: 'train/clip_frac_high', label: 'high (1+ε_high)' },
    ],
  },
  {
    id: 'loss',
    title: 'Loss',
    kind: 'line',
    lines: [
      { key: 'sft/loss', label: 'SFT loss' },
      { key: 'train/loss', label: 'policy loss' },
    ],
  },
  { id: 'entropy', title: 'Entropy', kind: 'line', lines: [{ key: 'train/entropy', label: 'entropy' }] },
  {
    id: 'grad-norm',
    title: 'Grad norm',
    kind: 'line',
    lines: [
      { key: 'sft/grad_norm', label: 'SFT' },
      { key: 'train/grad_norm', label: 'RL' },
    ],
  },
  {
    id: 'step-time',
    title: 'Step time breakdown (s)',
    kind: 'stacked',
    lines: [
      { key: 'time/rollout', label: 'rollout' },
      { key: 'time/reward', label: 'reward' },
      { key: 'time/roc', label: 'RoC' },
      { key: 'time/train', label: 'train' },
      { key: 'time/sync', label: 'sync' },
      { key: 'time/storage', label: 'storage' },
    ],
  },
  {
    id: 'sandbox',
    title: 'Sandbox latency (ms)',
    kind: 'line',
    lines: [{ key: 'sandbox/latency_ms', label: 'latency' }],
  },
];

/** Keys that are drawn by a panel (the rest go to the "all metrics" chart only). */
export const PANEL_KEYS = new Set<string>(
  PANELS.flatMap((p) => [...p.lines.map((l) => l.key), ...(p.bands ?? []).flatMap((b) => [b.lo, b.hi])]),
);

/**
 * The evaluation panels, when the run has evaluations: "Evaluation" draws each benchmark's pass@1 and pass@k (a
 * pass@1 with its interval logged, `…/pass1_lo` and `…/pass1_hi`, gets its band); "Evaluation: tool use" the
 * tool-error rate overall and inside correct samples and the share of samples without a call. Both are fractions;
 * the other eval keys (length, calls per sample) are in the all-metrics chart.
 */
export function evalPanels(series: SeriesMap): Panel[] {
  const all = Object.keys(series)
    .filter((k): k is EvalMetricKey => k.startsWith(EVAL_METRIC_PREFIX))
    .sort();
  const passKeys = all.filter((k) => /\/pass\d+$/.test(k));
  const toolKeys = all.filter((k) => /\/(tool_error_rate|tool_error_rate_correct|no_tool_call_rate)$/.test(k));
  const out: Panel[] = [];
  if (passKeys.length) {
    const bands = passKeys
      .filter((k) => all.includes(`${k}_lo`) && all.includes(`${k}_hi`))
      .map((k) => ({ of: k, lo: `${k}_lo` as const, hi: `${k}_hi` as const }));
    out.push({
      id: 'eval',
      title: 'Evaluation',
      kind: 'line',
      percent: true,
      lines: passKeys.map((k) => ({ key: k, label: k.slice(5) })),
      raw: true,
      ...(bands.length ? { bands } : {}),
    });
  }
  if (toolKeys.length)
    out.push({
      id: 'eval-tools',
      title: 'Evaluation: tool use',
      kind: 'line',
      percent: true,
      lines: toolKeys.map((k) => ({ key: k, label: k.slice(5) })),
      raw: true,
    });
  return out;
}

/** A line's headline: its own last recorded point, raw (and its band's bounds at that step, where logged). */
export interface Headline {
  key: string;
  label: string;
  step: number;
  value: number | null;
  band: { lo: number; hi: number } | null;
}

/**
 * The panel head's figures. Each line's last *raw* point, never the smoothed curve's end: a headline read as "the
 * accuracy now" must be a value the run logged, and with smoothing on the curve's end lags it. Taken from the line's
 * own series, so a metric logged at other steps than the rest (evaluations) still has its headline.
 */
export function panelHeadlines(panel: Panel, series: SeriesMap): Headline[] {
  const out: Headline[] = [];
  for (const l of panel.lines) {
    const pts = series[l.key] ?? [];
    const last = pts.reduce<SeriesPoint | null>((a, p) => (!a || p.step >= a.step ? p : a), null);
    if (!last) continue;
    const b = panel.bands?.find((x) => x.of === l.key);
    const at = (key: string) => series[key]?.find((p) => p.step === last.step)?.value;
    const lo = b ? at(b.lo) : undefined;
    const hi = b ? at(b.hi) : undefined;
    out.push({
      key: l.key,
      label: l.label,
      step: last.step,
      value: Number.isFinite(last.value) ? last.value : null,
      band: lo !== undefined && hi !== undefined && Number.isFinite(lo) && Number.isFinite(hi) ? { lo, hi } : null,
    });
  }
  return out;
}

/** The rows with each band as a `[lo, hi]` pair under `<of>~band` (null where either bound is missing). */
export function withBands(rows: ChartRow[], bands: Panel['bands']): (ChartRow | Record<string, unknown>)[] {
  if (!bands?.length) return rows;
  return rows.map((r) => {
    const out: Record<string, unknown> = { ...r };
    for (const b of bands) out[`${b.of}~band`] = r[b.lo] != null && r[b.hi] != null ? [r[b.lo], r[b.hi]] : null;
    return out;
  });
}

export type ChartRow = { step: number } & Record<string, number | null>;

/**
 * One row per step seen in any of `keys`: `row[key]` is the raw value (null where the key has no point at that
 * step) and `row[key + '~']` the smoothed one (debiased EMA with `weight`, see smoothing.ts).
 */
export function chartRows(series: SeriesMap, keys: string[], weight: number): ChartRow[] {
  const rows = new Map<number, ChartRow>();
  for (const key of keys) {
    const pts = series[key] ?? [];
    for (const p of debiasedEma(pts, weight)) {
      let row = rows.get(p.step);
      if (!row) {
        row = { step: p.step } as ChartRow;
        rows.set(p.step, row);
      }
      row[key] = Number.isFinite(p.value) ? p.value : null;
      row[`${key}~`] = p.smoothed;
    }
  }
  const out = [...rows.values()].sort((a, b) => a.step - b.step);
  for (const row of out)
    for (const key of keys) {
      if (!(key in row)) {
        row[key] = null;
        row[`${key}~`] = null;
      }
    }
  return out;
}

export interface StageBoundary {
  stage: number;
  name: string;
  type: string;
  startStep: number;
  endStep: number | null;
}

/**
 * The recipe's boundaries corrected by the run's 'stage' events (data {stage, name, type, startStep}): an event's
 * startStep is where the stage really started. Sorted by stage.
 */
export function mergeStageEvents(fromSpec: StageBoundary[], events: StageEventData[]): StageBoundary[] {
  const byStage = new Map(fromSpec.map((b) => [b.stage, { ...b }]));
  for (const e of events) {
    if (!Number.isFinite(e.startStep)) continue;
    const b = byStage.get(e.stage);
    if (b) {
      b.startStep = e.startStep;
      b.name = e.name ?? b.name;
      b.type = e.type ?? b.type;
    } else byStage.set(e.stage, { stage: e.stage, name: e.name, type: e.type, startStep: e.startStep, endStep: null });
  }
  return [...byStage.values()].sort((a, b) => a.stage - b.stage);
}

/** The stage a step falls in (the last one starting at or before it). */
export function stageOf(boundaries: StageBoundary[], step: number): StageBoundary | null {
  let found: StageBoundary | null = null;
  for (const b of boundaries) if (b.startStep <= step) found = b;
  return found;
}

/** When each step was first logged: the earliest point time at that step across every series. */
export function stepTimes(series: SeriesMap): { step: number; time: number }[] {
  const t = new Map<number, number>();
  for (const pts of Object.values(series)) {
    for (const p of pts) {
      if (p.time === undefined || !Number.isFinite(p.time)) continue;
      const prev = t.get(p.step);
      if (prev === undefined || p.time < prev) t.set(p.step, p.time);
    }
  }
  return [...t.entries()].map(([step, time]) => ({ step, time })).sort((a, b) => a.step - b.step);
}

/** Steps per second over `samples` (oldest to newest); null where it cannot tell (under two, no time passing). */
function rateOf(samples: { step: number; time: number }[]): number | null {
  if (samples.length < 2) return null;
  const a = samples[0]!;
  const b = samples[samples.length - 1]!;
  const dt = (b.time - a.time) / 1000;
  const ds = b.step - a.step;
  return dt > 0 && ds > 0 ? ds / dt : null;
}

export interface Eta {
  /** Steps per second in the stage running now (over its last `window` logged steps). */
  rate: number;
  /** Seconds left; null without a total, or while a stage ahead has no measured rate yet. */
  etaSeconds: number | null;
  /** The type of the stage ahead whose rate is not measured yet (its ETA waits for one of its steps). */
  waitingFor: string | null;
  /** Time done over time done and left (null without an ETA): progress by time, not by step count. */
  timeFraction: number | null;
}

/**
 * Steps per second and the time left, stage by stage: an SFT step takes seconds and an RL step minutes, so each
 * stage's steps left are timed at that stage's own measured rate over its last `window` steps (a stage not reached
 * yet: the latest stage of its type that was measured; none: no ETA until one of its steps is). Without stages, the
 * whole run is one stage. null where it cannot tell the current rate.
 */
export function estimateEta(
  samples: { step: number; time: number }[],
  current: number,
  total: number | null | undefined,
  window = 20,
  stages: StageBoundary[] = [],
): Eta | null {
  const spans = stages.length
    ? stages.map((s) => ({ type: s.type, start: s.startStep, end: s.endStep ?? Number.POSITIVE_INFINITY }))
    : [{ type: 'run', start: Number.NEGATIVE_INFINITY, end: Number.POSITIVE_INFINITY }];
  const measured = spans.map((s) => rateOf(samples.filter((p) => p.step >= s.start && p.step <= s.end).slice(-window)));
  const now = spans.findIndex((s) => current + 1 >= s.start && current + 1 <= s.end);
  const rate = (now >= 0 ? measured[now] : null) ?? rateOf(samples.slice(-window));
  if (rate === null) return null;
  if (!total || total <= 0) return { rate, etaSeconds: null, waitingFor: null, timeFraction: null };
  let left = 0;
  for (const [i, s] of spans.entries()) {
    const steps = Math.max(0, Math.min(s.end, total) - Math.max(s.start - 1, current));
    if (steps === 0) continue;
    const r = measured[i] ?? measured.filter((m, k) => m !== null && spans[k]!.type === s.type).at(-1) ?? null;
    if (r === null) return { rate, etaSeconds: null, waitingFor: s.type, timeFraction: null };
    left += steps / r;
  }
  const done = samples.length ? (samples[samples.length - 1]!.time - samples[0]!.time) / 1000 : 0;
  return { rate, etaSeconds: left, waitingFor: null, timeFraction: done + left > 0 ? done / (done + left) : null };
}

/** 3725 → "1 h 2 min"; 75 → "1 min 15 s"; 9 → "9 s". */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '—';
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  const h = Math.floor(s / 3600);
  if (h < 48) return `${h} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** Which controls a run in this status offers. */
export function controlsFor(status: string, kind: string): { cancel: boolean; pause: boolean; resume: boolean } {
  const live = ['queued', 'running', 'leased'].includes(status);
  return {
    cancel: live || status === 'paused',
    pause: kind === 'train' && (status === 'queued' || status === 'running'),
    resume: kind === 'train' && status === 'paused',
  };
}
