/**
 * A run as experiment trackers take it (`npx toolsmith export RUN --to trackio|mlflow`): its configuration (the recipe and
 * the run's identity), its metrics by step, and each trajectory as a trace, OpenAI-style messages plus a span per
 * generation turn and per tool call. Pure: workers/imports/export-tracker.ts streams these records, one JSON line
 * each, to the tracker's own client. Native and imported runs alike: both store turns (an import's without the
 * times or counts its source did not keep, which are left out here rather than written as 0).
 */
import type { StoredTrajectoryContent, StoredTurn } from './trajectory.ts';

export const TRACKER_TARGETS = ['trackio', 'mlflow'] as const;
export type TrackerTarget = (typeof TRACKER_TARGETS)[number];

/** A tracker project name: what Trackio accepts as a file name of its store, and nothing that reaches outside it. */
export const TRACKER_PROJECT = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
export const DEFAULT_TRACKER_PROJECT = 'toolsmith';

export interface TraceMessage {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export interface TraceSpan {
  id: string;
  name: string;
  kind: 'generation' | 'tool';
  /** ISO 8601; absent where the source kept no time. */
  start_time?: string;
  end_time?: string;
  duration_ms?: number;
  status: 'success' | 'error';
  input?: string;
  output?: string;
  usage?: { output_tokens: number };
  metadata: Record<string, unknown>;
}

export interface TrackerTrace {
  step: number;
  /** The key it is logged under: one per split, so train and evaluation trajectories stay apart. */
  key: string;
  messages: TraceMessage[];
  metadata: Record<string, unknown>;
  spans: TraceSpan[];
}

export type TrackerRecord =
  | { type: 'run'; project: string; name: string; group: string; config: Record<string, unknown> }
  /** `time`: epoch ms of the step's latest value (MLflow keeps one per value; Trackio its own). */
  | { type: 'metrics'; step: number; time: number; values: Record<string, number> }
  | ({ type: 'trace' } & TrackerTrace);

export interface TrackerRun {
  id: string;
  name: string;
  kind: string;
  status: string;
  seed: number;
  codeVersion: string | null;
  createdAt: Date;
  recipeSpec: unknown;
}

/** The run's header: the run id names it in the project, the run's own name groups it, the recipe is its config. */
export function runRecord(run: TrackerRun, project: string): TrackerRecord {
  return {
    type: 'run',
    project,
    name: run.id,
    group: run.name,
    config: {
      toolsmith: {
        runId: run.id,
        name: run.name,
        kind: run.kind,
        status: run.status,
        seed: run.seed,
        codeVersion: run.codeVersion,
        createdAt: run.createdAt.toISOString(),
      },
      recipe: run.recipeSpec ?? {},
    },
  };
}

/** Series by key → one record per step holding every key logged at it, in step order. */
export function metricsByStep(
  series: Record<string, { step: number; value: number; time: number }[]>,
): TrackerRecord[] {
  const byStep = new Map<number, { time: number; values: Record<string, number> }>();
  for (const [key, points] of Object.entries(series))
    for (const p of points) {
      const at = byStep.get(p.step) ?? { time: 0, values: {} };
      at.values[key] = p.value;
      at.time = Math.max(at.time, p.time);
      byStep.set(p.step, at);
    }
  return [...byStep.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([step, { time, values }]) => ({ type: 'metrics', step, time, values }));
}

export interface TrackerTrajectoryRow {
  id: string;
  step: number;
  split: string;
  groupId: string;
  reward: number;
  answer: string | null;
  content: StoredTrajectoryContent;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** One trajectory as a trace: the conversation the model had, a span per turn and per tool call. */
export function trajectoryTrace(row: TrackerTrajectoryRow): TrackerRecord {
  const c = row.content;
  const messages: TraceMessage[] = [{ role: 'user', content: c.prompt }];
  const spans: TraceSpan[] = [];
  for (const turn of c.turns) {
    const callId = `call_${turn.index}`;
    const call = turn.tool;
    messages.push({
      role: 'assistant',
      content: turn.text,
      ...(call
        ? {
            tool_calls: [
              {
                id: callId,
                type: 'function' as const,
                function: { name: call.name ?? 'unparsed', arguments: JSON.stringify(call.arguments ?? null) },
              },
            ],
          }
        : {}),
    });
    spans.push(generationSpan(turn));
    if (!call) continue;
    messages.push({ role: 'tool', tool_call_id: callId, content: call.text });
    const timed = !call.absent?.timing;
    spans.push({
      id: `tool-${turn.index}`,
      name: call.name ?? 'parse error',
      kind: 'tool',
      ...(timed
        ? {
            start_time: iso(call.startedAt),
            end_time: iso(call.finishedAt),
            duration_ms: call.finishedAt - call.startedAt,
          }
        : {}),
      status: call.status === 'ok' ? 'success' : 'error',
      input: call.arguments?.code ?? '',
      output: call.text,
      metadata: { turn: turn.index, status: call.status, ...(timed ? { queueMs: call.queueMs } : {}) },
    });
  }
  const correct = c.verdict?.correct ?? null;
  return {
    type: 'trace',
    step: row.step,
    key: `trajectories/${row.split}`,
    messages,
    metadata: {
      trajectoryId: row.id,
      step: row.step,
      split: row.split,
      groupId: row.groupId,
      reward: row.reward,
      correct,
      answer: row.answer,
      finishReason: c.finishReason,
      status: c.finishReason === 'engine_error' ? 'error' : 'success',
    },
    spans,
  };
}

function generationSpan(turn: StoredTurn): TraceSpan {
  const timed = !turn.absent?.timing;
  return {
    id: `turn-${turn.index}`,
    name: `turn ${turn.index}`,
    kind: 'generation',
    ...(timed
      ? {
          start_time: iso(turn.genStartedAt),
          end_time: iso(turn.genFinishedAt),
          duration_ms: turn.genFinishedAt - turn.genStartedAt,
        }
      : {}),
    status: turn.engineFinish === 'error' ? 'error' : 'success',
    output: turn.text,
    ...(turn.absent?.tokens ? {} : { usage: { output_tokens: turn.tokens } }),
    metadata: { turn: turn.index, engineFinish: turn.engineFinish, weightVersion: turn.weightVersion ?? null },
  };
}
