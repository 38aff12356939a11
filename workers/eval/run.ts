/**
 * Runs an evaluation (docs/method.md §8) and stores everything: each dataset's problems × k trajectories (split "eval",
 * every one kept for inspection), one EvalResult row per benchmark, and its numbers as run metrics.
 *
 * Work goes in chunks of problems; each chunk's trajectories are stored in one transaction before the next starts, so
 * a crash loses at most the chunk in flight, and a rerun of the same run skips the problems already stored.
 */
import type { Database } from '../../server/db/client.ts';
import { getDataset, listProblemRows } from '../../server/store/datasets.ts';
import { UserError } from '../../contracts/errors.ts';
import { insertTrajectories, listEvalSampleOutcomes } from '../../server/store/trajectories.ts';
import { findEvalResult, insertEvalResult } from '../../server/store/evals.ts';
import { formatPercent, formatWithInterval } from '../../contracts/intervals.ts';
import type { InferenceEngine } from '../engines/types.ts';
import type { Tokenizer } from '../engines/tokenizer.ts';
import { tokenRecord } from '../policy/token-record.ts';
import type { Verifier } from '../reward/verifier.ts';
import { runRollouts, type RolloutEvent } from '../rollout/agent.ts';
import { scoreTrajectory } from '../rollout/score.ts';
import {
  COMPACT_TEMPLATE_SETTINGS,
  DEFAULT_TEMPLATE_SETTINGS,
  EMBEDDED_TEMPLATE_SETTINGS,
  type TemplateSettings,
} from '../rollout/template.ts';
import { toTrajectoryInput } from '../rollout/to-store.ts';
import { toolStats } from '../rollout/trajectory.ts';
import type { Sandbox } from '../sandbox/types.ts';
import { summarize, type SampleOutcome } from './metrics.ts';
import type { EvalRow, EvalSpec } from '../../contracts/eval.ts';

export interface EvalDeps {
  db: Database;
  engine: InferenceEngine;
  sandbox: Sandbox;
  verifier: Verifier;
  runId: string;
  signal?: AbortSignal;
  log?: (message: string) => Promise<void> | void;
  metrics?: (step: number, values: Record<string, number>) => Promise<void>;
  onEvent?: (e: RolloutEvent) => void;
  /** Trajectories per chunk (default 64): bigger keeps the engine fuller, smaller loses less on a crash. */
  chunkTrajectories?: number;
  /** The template to use instead of the spec's (a training run's recipe template). */
  template?: TemplateSettings;
  /**
   * Tokenises tool responses for the stored token records. Default: the engine's own when it exposes one (the
   * embedded engine does); with neither, trajectories are stored without a token record.
   */
  tokenizer?: Tokenizer;
}

/** The tokenizer for token records: the caller's, else the engine's own if it has one (a public `tokenizer`). */
function recordTokenizer(deps: EvalDeps): Tokenizer | null {
  if (deps.tokenizer) return deps.tokenizer;
  const t = (deps.engine as InferenceEngine & { tokenizer?: unknown }).tokenizer;
  return t && typeof (t as Tokenizer).encode === 'function' && typeof (t as Tokenizer).decode === 'function'
    ? (t as Tokenizer)
    : null;
}

export function templateFor(spec: Pick<EvalSpec, 'template' | 'engine'>): TemplateSettings {
  const t = spec.template ?? (spec.engine.kind === 'embedded' ? 'minimal' : 'full');
  return t === 'minimal'
    ? EMBEDDED_TEMPLATE_SETTINGS
    : t === 'compact'
      ? COMPACT_TEMPLATE_SETTINGS
      : DEFAULT_TEMPLATE_SETTINGS;
}

/** A stored dataset by `name` or `name@version` (latest version otherwise); a UserError naming it when missing. */
export async function resolveDataset(db: Database, ref: string) {
  const at = ref.lastIndexOf('@');
  const name = at > 0 ? ref.slice(0, at) : ref;
  const version = at > 0 ? Number(ref.slice(at + 1)) : undefined;
  if (version !== undefined && !(Number.isInteger(version) && version > 0))
    throw new UserError(`datasets: "${ref}" has a bad version (use name@N)`);
  const ds = await getDataset(db, { name, version });
  if (!ds)
    throw new UserError(`datasets: no dataset named "${name}"${version ? ` with version ${version}` : ''}`, {
      fix: 'import it first: npx toolsmith dataset import FILE --name N',
    });
  return ds;
}

const outcome = (t: {
  correct: boolean | null;
  responseTokens: number;
  toolCalls: number;
  toolErrors: number;
  finishReason: string;
}): SampleOutcome => ({
  correct: !!t.correct,
  responseTokens: t.responseTokens,
  toolCalls: t.toolCalls,
  toolErrors: t.toolErrors,
  finishReason: t.finishReason,
});

export async function runEvaluation(deps: EvalDeps, spec: EvalSpec): Promise<EvalRow[]> {
  const run: EvalRun = { deps, spec, template: deps.template ?? templateFor(spec), tokenizer: recordTokenizer(deps) };
  const rows: EvalRow[] = [];
  const datasets = [];
  for (const ref of spec.datasets) datasets.push({ ref, ds: await resolveDataset(deps.db, ref) });
  for (const { ref, ds } of datasets) rows.push(await evalBenchmark(run, ref, ds.id));
  return rows;
}

/** What every benchmark of an evaluation shares. */
interface EvalRun {
  deps: EvalDeps;
  spec: EvalSpec;
  template: TemplateSettings;
  tokenizer: Tokenizer | null;
}

type ProblemRow = Awaited<ReturnType<typeof listProblemRows>>[number];

/** One dataset's benchmark: its problems × k in chunks (resuming what is stored), then its result and metrics. */
async function evalBenchmark(run: EvalRun, ref: string, datasetId: string): Promise<EvalRow> {
  const { deps, spec } = run;
  const { db, runId } = deps;
  const benchmark = ref;
  const done = await findEvalResult(db, { runId, benchmark, step: spec.step });
  if (done) {
    await deps.log?.(`${benchmark}: already evaluated in this run, skipping`);
    return { benchmark, datasetId, ...JSON.parse(done.details ?? '{}') };
  }
  const problems = await listProblemRows(db, {
    datasetId,
    split: spec.split === 'all' ? undefined : spec.split,
    limit: spec.limit,
    pick: spec.pick,
  });
  if (problems.length === 0) throw new UserError(`datasets: "${ref}" has no problems in split "${spec.split}"`);

  const groupOf = (problemId: string) => `${benchmark}:${problemId}`;
  const groups = await storedGroups(run, benchmark);
  const todo = problems.filter((p) => !groups.has(groupOf(p.id)));
  if (todo.length < problems.length)
    await deps.log?.(
      `${benchmark}: resuming, ${problems.length - todo.length} of ${problems.length} problems already done`,
    );

  const perChunk = Math.max(1, Math.floor((deps.chunkTrajectories ?? 64) / spec.k));
  for (let i = 0; i < todo.length; i += perChunk) {
    if (deps.signal?.aborted) throw new Error('evaluation stopped');
    const inputs = await evalChunk(run, benchmark, todo.slice(i, i + perChunk), groups);
    if (deps.signal?.aborted) throw new Error('evaluation stopped');
    await insertTrajectories(db, inputs);
    const doneProblems = problems.length - todo.length + Math.min(todo.length, i + perChunk);
    const soFar = summarize(
      problems.filter((p) => groups.has(groupOf(p.id))).map((p) => groups.get(groupOf(p.id))!),
      spec.k,
    );
    await deps.log?.(
      `${benchmark}: ${doneProblems}/${problems.length} problems, pass@1 so far ${(100 * soFar.pass1).toFixed(1)}%`,
    );
  }

  const summary = summarize(
    problems.map((p) => groups.get(groupOf(p.id))!),
    spec.k,
    problems.map((p) => p.id),
  );
  await recordResult(deps, spec, benchmark, summary);
  return { benchmark, datasetId, ...summary };
}

/** A benchmark's sample outcomes by group, as stored by an earlier attempt of this run (those groups count as done). */
async function storedGroups({ deps, spec }: EvalRun, benchmark: string): Promise<Map<string, SampleOutcome[]>> {
  const { db, runId } = deps;
  const stored = await listEvalSampleOutcomes(db, { runId, step: spec.step, benchmark });
  const groups = new Map<string, SampleOutcome[]>();
  for (const t of stored) groups.set(t.groupId, [...(groups.get(t.groupId) ?? []), outcome(t)]);
  for (const [g, outs] of groups) {
    if (outs.length !== spec.k)
      throw new Error(`${g} has ${outs.length} stored samples, expected ${spec.k}: the run's k changed`);
  }
  return groups;
}

/** A chunk of problems × k: rolled out, scored, added to `groups`; returns the trajectories to store. */
async function evalChunk(
  { deps, spec, template, tokenizer }: EvalRun,
  benchmark: string,
  chunk: ProblemRow[],
  groups: Map<string, SampleOutcome[]>,
) {
  const { runId } = deps;
  const groupOf = (problemId: string) => `${benchmark}:${problemId}`;
  const requests = chunk.flatMap((p) =>
    Array.from({ length: spec.k }, (_, j) => ({
      id: `${groupOf(p.id)}:${j}`,
      problem: p.question,
      seed: (spec.seed * 1_000_003 + p.index) * 1024 + j,
    })),
  );
  const trajectories = await runRollouts(requests, {
    engine: deps.engine,
    sandbox: deps.sandbox,
    template,
    limits: { maxResponseTokens: spec.maxTokens, maxTurns: spec.maxTurns },
    temperature: spec.temperature,
    topP: spec.topP,
    toolFormat: { style: spec.toolFormat },
    tool: { timeoutS: spec.toolTimeoutS },
    onEvent: deps.onEvent,
    signal: deps.signal,
  });
  const inputs = [];
  for (let n = 0; n < trajectories.length; n++) {
    const p = chunk[Math.floor(n / spec.k)]!;
    const t = trajectories[n]!;
    const scored = await scoreTrajectory(t, p.answer, deps.verifier, p.question);
    inputs.push(
      toTrajectoryInput(
        t,
        scored,
        {
          runId,
          step: spec.step,
          stage: 0,
          split: 'eval',
          problemId: p.id,
          groupId: groupOf(p.id),
          sampleIndex: n % spec.k,
        },
        tokenizer ? tokenRecord(t, tokenizer, null) : null,
      ),
    );
    const stats = toolStats(t);
    const g = groupOf(p.id);
    groups.set(g, [
      ...(groups.get(g) ?? []),
      {
        correct: scored.correct,
        responseTokens: t.modelTokens + t.toolTokens,
        toolCalls: stats.calls,
        toolErrors: stats.errors,
        finishReason: t.finishReason ?? 'engine_error',
      },
    ]);
  }
  return inputs;
}

/** A benchmark's EvalResult row and its numbers as run metrics. */
async function recordResult(deps: EvalDeps, spec: EvalSpec, benchmark: string, summary: ReturnType<typeof summarize>) {
  const { db, runId } = deps;
  await insertEvalResult(db, {
    runId,
    step: spec.step,
    benchmark,
    k: spec.k,
    pass1: summary.pass1,
    passK: summary.passK,
    meanLength: summary.meanLength,
    toolCalls: summary.toolCallsPerTrajectory,
    toolErrors: summary.toolErrorRate,
    details: summary,
  });
  await deps.metrics?.(spec.step, {
    [`eval/${benchmark}/pass1`]: summary.pass1,
    [`eval/${benchmark}/pass${spec.k}`]: summary.passK,
    [`eval/${benchmark}/pass1_lo`]: summary.pass1Ci!.lo,
    [`eval/${benchmark}/pass1_hi`]: summary.pass1Ci!.hi,
    [`eval/${benchmark}/length`]: summary.meanLength,
    [`eval/${benchmark}/tool_calls`]: summary.toolCallsPerTrajectory,
    [`eval/${benchmark}/tool_error_rate`]: summary.toolErrorRate,
    [`eval/${benchmark}/tool_error_rate_correct`]: summary.toolErrorRateCorrect!,
    [`eval/${benchmark}/no_tool_call_rate`]: summary.noToolCallRate!,
  });
}

/** Lines of a plain-text table: columns as wide as their widest cell, a rule under the head, the columns in `left`
 *  padded on the right and the others right-aligned (numbers). */
export function alignedTable(head: string[], body: string[][], left: number[] = [0]): string[] {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (left.includes(i) ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)];
}

/** The table `npx toolsmith eval` prints. */
export function formatEvalTable(rows: EvalRow[]): string {
  const head = [
    'benchmark',
    'problems',
    'k',
    'pass@1 [95% CI]',
    'pass@k [95% CI]',
    'length',
    'calls/traj',
    'no call',
    'tool err',
    'in correct',
  ];
  const body = rows.map((r) => [
    r.benchmark,
    String(r.problems),
    String(r.k),
    formatWithInterval(r.pass1, r.pass1Ci),
    formatWithInterval(r.passK, r.passKCi),
    r.meanLength.toFixed(0),
    r.toolCallsPerTrajectory.toFixed(2),
    formatPercent(r.noToolCallRate),
    formatPercent(r.toolErrorRate),
    formatPercent(r.toolErrorRateCorrect),
  ]);
  return alignedTable(head, body).join('\n');
}
