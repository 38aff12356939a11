/**
 * Storing mapped foreign trajectories into an imported run, shared by the folder importer (workers/imports/) and the
 * ingest API: stable ids make a record read or sent twice a no-op, and every step that gained trajectories gets its
 * dashboard figures again from what is stored of it.
 */
import type { ForeignTrajectory, ImportOrigin } from '../../contracts/foreign.ts';
import type { Database } from '../db/client.ts';
import { importedStepAggregates, storedTrajectoryIds } from '../store/imports.ts';
import { upsertEvalResult } from '../store/evals.ts';
import { logMetrics } from '../store/metrics.ts';
import { getRunProgress, setRunProgress } from '../store/runs.ts';
import { insertTrajectories } from '../store/trajectories.ts';
import { storableStrings } from './clean-text.ts';
import { toStoredTrajectory } from './to-store.ts';
import type { StepMetrics } from '../../contracts/metrics.ts';

/** Trajectories stored per transaction. */
const BATCH = 500;

export interface Stored {
  stored: number;
  duplicates: number;
  /** Steps (by split) that gained trajectories. */
  steps: { train: Set<number>; eval: Set<number> };
}

export async function storeForeign(
  db: Database,
  runId: string,
  format: ImportOrigin,
  mapped: ForeignTrajectory[],
  into: Stored = { stored: 0, duplicates: 0, steps: { train: new Set(), eval: new Set() } },
): Promise<Stored> {
  for (let i = 0; i < mapped.length; i += BATCH) {
    const rows = mapped
      .slice(i, i + BATCH)
      .map((m) => toStoredTrajectory(storableStrings(m), { runId, format, sampleIndex: m.source.line }));
    const have = await storedTrajectoryIds(
      db,
      rows.map((r) => r.id!),
    );
    // Two records of one batch with the same source id: the first one counts (as a re-read would).
    const seen = new Set<string>();
    const fresh = rows.filter((r) => !have.has(r.id!) && !seen.has(r.id!) && seen.add(r.id!));
    await insertTrajectories(db, fresh);
    for (const r of fresh) into.steps[r.split === 'eval' ? 'eval' : 'train'].add(r.step);
    into.stored += fresh.length;
    into.duplicates += rows.length - fresh.length;
  }
  return into;
}

/** The dashboard's per-step figures for the steps that gained trajectories, and the run's step. */
export async function refreshSteps(db: Database, runId: string, steps: Stored['steps']) {
  const train = await importedStepAggregates(db, runId, 'train', [...steps.train]);
  for (const s of train)
    await logMetrics(db, runId, s.step, {
      'rollout/accuracy': s.reward,
      'rollout/turns': s.turns,
      'rollout/tool_calls': s.toolCalls,
      'import/trajectories': s.count,
      ...(s.responseTokens > 0 ? { 'rollout/response_length': s.responseTokens } : {}),
    } satisfies StepMetrics);
  const evals = await importedStepAggregates(db, runId, 'eval', [...steps.eval]);
  for (const s of evals) {
    await logMetrics(db, runId, s.step, { 'eval/validation/mean_reward': s.reward } satisfies StepMetrics);
    // The evaluations table: the source's validation dump as one benchmark, its pass@1 the mean reward (the
    // source's scores, 0/1 for most verifiers); tool errors unknown (a foreign tool result carries no status).
    await upsertEvalResult(db, {
      runId,
      step: s.step,
      benchmark: 'validation',
      k: Math.max(1, Math.round(s.count / Math.max(1, s.groups))),
      pass1: s.reward,
      passK: null,
      meanLength: s.responseTokens > 0 ? s.responseTokens : null,
      toolCalls: s.toolCalls,
      toolErrors: null,
      details: { problems: s.groups, samples: s.count, imported: true },
    });
  }
  const last = Math.max(-1, ...train.map((s) => s.step), ...evals.map((s) => s.step));
  if (last >= 0 && last > ((await getRunProgress(db, runId))?.step ?? -1))
    await setRunProgress(db, runId, { step: last });
}
