/**
 * A step's timeline as a Chrome trace-event JSON document (the "JSON Object Format" of the Trace Event Format, which
 * ui.perfetto.dev and chrome://tracing open): one process for the step, one thread per lane, a complete event (`ph:
 * "X"`) per block with its kind as category (and `critical` added on the critical path). Pure: the CLI's export and
 * the run page's download button write the same bytes.
 */
import type { StepTimeline } from './timeline.ts';

export interface TraceEvent {
  name: string;
  ph: 'X' | 'M';
  pid: number;
  tid: number;
  /** Microseconds since the epoch (complete events); metadata events carry 0. */
  ts: number;
  dur?: number;
  cat?: string;
  args?: Record<string, string | number | boolean | null>;
}

export interface TraceDocument {
  traceEvents: TraceEvent[];
  displayTimeUnit: 'ms';
  otherData: Record<string, string | number | boolean>;
}

const PID = 1;

/** The trace-event document of one step; the lanes keep their order in the viewer (thread_sort_index). */
export function toPerfettoTrace(t: StepTimeline, producer = 'toolsmith'): TraceDocument {
  const events: TraceEvent[] = [
    { name: 'process_name', ph: 'M', pid: PID, tid: 0, ts: 0, args: { name: `run ${t.runId} step ${t.step}` } },
  ];
  t.lanes.forEach((lane, i) => {
    events.push({ name: 'thread_name', ph: 'M', pid: PID, tid: i + 1, ts: 0, args: { name: lane.label } });
    events.push({ name: 'thread_sort_index', ph: 'M', pid: PID, tid: i + 1, ts: 0, args: { sort_index: i } });
  });
  for (const b of t.blocks) {
    const lane = t.lanes[b.lane];
    events.push({
      name: b.label,
      cat: b.critical ? `${b.kind},critical` : b.kind,
      ph: 'X',
      pid: PID,
      tid: b.lane + 1,
      // Whole microseconds: the records are in ms, and integers keep every viewer's parser exact.
      ts: Math.round(b.start * 1000),
      dur: Math.max(0, Math.round((b.end - b.start) * 1000)),
      args: { kind: b.kind, critical: b.critical, trajectory: lane?.trajectoryId ?? null },
    });
  }
  return {
    traceEvents: events,
    displayTimeUnit: 'ms',
    otherData: {
      producer,
      run: t.runId,
      step: t.step,
      phasesRecorded: t.phasesRecorded,
      untimed: t.untimed,
    },
  };
}

/** The file name the download button and the CLI suggest. */
export const perfettoFileName = (runId: string, step: number) => `${runId}-step${step}.perfetto.json`;
