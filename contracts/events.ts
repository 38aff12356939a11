/**
 * The run-event union: every event a run's stream carries (RunEvent rows), discriminated by `type`, with the shape
 * of its `data`. Writers (worker, orchestrator, lifecycle, stores) and readers (run page, CLI) share it.
 */
import type { ClusterEventData } from './cluster.ts';
import type { EvalRow } from './eval.ts';
import type { EnginesSnapshot, LiveRollout } from './live.ts';
import type { RunStatus, StageEventData } from './runs.ts';
import type { PhaseSpan } from './timeline.ts';

export type EventLevel = 'debug' | 'info' | 'warn' | 'error';

/** A diagnostics check (workers/diagnostics/checks.ts). */
export type CheckStatus = 'ok' | 'warn' | 'fail';
export interface CheckResult {
  name: string;
  status: CheckStatus;
  detail: string;
  fix?: string;
  ms: number;
}
export interface DiagnosticsReport {
  at: string;
  host: string;
  ok: boolean;
  checks: CheckResult[];
}

/** The type and data of each kind of event. */
export type RunEventBody =
  /** Free text; `data` is whatever the writer attached (test jobs, handlers). */
  | { type: 'log'; data?: unknown }
  | { type: 'status'; data: { status: RunStatus; error: string | null } }
  | { type: 'metric'; data: { step: number; time: number; values: Record<string, number> } }
  | { type: 'stage'; data: StageEventData }
  /** `phases`: when each phase after generation ran (the step's timeline); absent in runs from before they were kept. */
  | { type: 'step'; data: { step: number; metrics: Record<string, number>; phases?: PhaseSpan[] } }
  | { type: 'eval'; data: EvalRow[] }
  | { type: 'eval_table'; data: EvalRow[] }
  | { type: 'filter'; data: { kept: number; total: number; k: number } }
  | { type: 'resume'; data?: undefined }
  | { type: 'trainer_error'; data?: undefined }
  | { type: 'rollouts'; data: LiveRollout[] }
  | { type: 'engines'; data: EnginesSnapshot }
  | { type: 'diagnostic'; data: CheckResult }
  /** Where the run runs on a cluster (contracts/cluster.ts). */
  | { type: 'cluster'; data: ClusterEventData };

export type RunEventType = RunEventBody['type'];

/** An event's type, level and data: `type` defaults to 'log', `level` to 'info'. */
export type EventOptions = { level?: EventLevel } & (RunEventBody | { type?: undefined; data?: unknown });
/** What a job or the lifecycle appends. */
export type EventInput = EventOptions & { message: string };

/**
 * A stored event as the store reads it back. Older rows and test jobs may carry other types, so `type` is a
 * string here; `isEvent` narrows one to its typed body.
 */
export interface RunEvent {
  runId: string;
  seq: number;
  time: number;
  level: EventLevel;
  type: string;
  message: string;
  data: unknown;
}

/** What the store accepts (a superset of EventInput: test-only kinds write their own types). */
export interface StoredEventInput {
  level?: EventLevel;
  type?: string;
  message: string;
  data?: unknown;
}

export function isEvent<T extends RunEventType>(
  e: { type: string; data?: unknown },
  type: T,
): e is { type: T; data: Extract<RunEventBody, { type: T }>['data'] } {
  return e.type === type;
}
