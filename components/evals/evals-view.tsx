'use client';
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import type { BenchmarkSummary } from '../../contracts/eval.ts';
import type { Interval } from '../../contracts/intervals.ts';
import { errorCode } from '../ui/error-code.ts';
import { evalSteps, finishReasonsText, pct } from './eval-rows.ts';
import { referenceScore } from './reference.ts';
import { formatNumber, formatTime } from '../ui/format.ts';
import { Pass1Chart } from './pass1-chart.tsx';
import { ReferencePanel } from './reference-panel.tsx';
import { PairedTable } from './paired-table.tsx';

/** An EvalResult's stored details (older rows lack some fields). */
type Details = Partial<BenchmarkSummary> | null;
const ci = (c: Interval | undefined) => (c ? `95% CI ${pct(c.lo)}–${pct(c.hi)}` : null);
const REF_MODEL = 'rStar2-Agent-14B';

/** /runs/<id>/evals: a run's evaluation results by step and benchmark, beside the report's reference table. */
export function EvalsView({ runId }: { runId: string }) {
  const trpc = useTRPC();
  const run = useQuery(trpc.runs.get.queryOptions({ runId }, { retry: false }));
  const evals = useQuery(
    trpc.evals.list.queryOptions({ runId }, { retry: false, refetchInterval: (q) => (q.state.error ? false : 10_000) }),
  );
  const ref = useQuery(trpc.evals.reference.queryOptions(undefined, { staleTime: Infinity }));
  const [pickedStep, setPickedStep] = useState<number | null>(null);
  const [againstStep, setAgainstStep] = useState<number | null>(null);

  const rows = evals.data ?? [];
  const steps = evalSteps(rows);
  const step = pickedStep !== null && steps.includes(pickedStep) ? pickedStep : steps[steps.length - 1];
  const atStep = rows.filter((r) => r.step === step);

  let body;
  if (evals.error) {
    body =
      errorCode(evals.error) === 'NOT_FOUND' ? (
        <div className="panel empty" role="alert">
          There is no run {runId}. <Link href="/">Back to the dashboard</Link>
        </div>
      ) : (
        <div className="panel error" role="alert">
          Could not load evaluations: {evals.error.message}{' '}
          <button type="button" onClick={() => void evals.refetch()}>
            Retry
          </button>
        </div>
      );
  } else if (!evals.data) {
    body = (
      <div className="panel empty" role="status">
        Loading evaluations…
      </div>
    );
  } else if (rows.length === 0) {
    body = (
      <div className="panel empty">
        No evaluations yet. A training run evaluates after every stage; results appear here as they finish.
      </div>
    );
  } else {
    body = (
      <>
        <div className="row" style={{ justifyContent: 'space-between', marginBottom: 8 }}>
          <label>
            Eval step{' '}
            <select aria-label="Eval step" value={step} onChange={(e) => setPickedStep(Number(e.target.value))}>
              {steps.map((s) => (
                <option key={s} value={s}>
                  step {s}
                </option>
              ))}
            </select>
          </label>
          <span className="muted">
            {steps.length} evaluated step{steps.length === 1 ? '' : 's'} · evaluated {formatTime(atStep[0]?.createdAt)}
          </span>
        </div>
        <div className="ev-table-wrap" role="region" aria-label="Evaluation results" tabIndex={0}>
          <table aria-label={`Evaluation results at step ${step}`} className="ev-table">
            <thead>
              <tr>
                <th scope="col">Benchmark</th>
                <th scope="col" className="num">
                  pass@1
                </th>
                <th scope="col" className="num">
                  pass@k
                </th>
                <th scope="col" className="num">
                  Mean length
                </th>
                <th scope="col" className="num">
                  Tool calls / traj.
                </th>
                <th scope="col" className="num">
                  Tool errors
                </th>
                <th scope="col">Finish reasons</th>
                <th scope="col" className="num" title={`${REF_MODEL}, reference (rStar2-Agent report)`}>
                  Ref. pass@1
                </th>
              </tr>
            </thead>
            <tbody>
              {atStep.map((r) => {
                const d = r.details as Details;
                const refScore = ref.data ? referenceScore(ref.data, REF_MODEL, r.benchmark) : null;
                return (
                  <tr key={r.id}>
                    <th scope="row">
                      {r.benchmark}
                      {d?.problems !== undefined && (
                        <div className="muted ev-sub">
                          {d.problems} problems · {d.samples ?? '?'} samples
                        </div>
                      )}
                    </th>
                    <td className="num">
                      <strong>{pct(r.pass1)}</strong>
                      <div className="muted ev-sub">
                        {ci(d?.pass1Ci) ?? `${r.k} sample${r.k === 1 ? '' : 's'} each`}
                      </div>
                    </td>
                    <td className="num">
                      {pct(r.passK)}
                      <div className="muted ev-sub">
                        pass@{r.k}
                        {d?.passKCi ? ` · ${ci(d.passKCi)}` : ''}
                      </div>
                    </td>
                    <td className="num">
                      {r.meanLength === null ? '—' : `${Math.round(r.meanLength).toLocaleString('en-US')} tok`}
                    </td>
                    <td className="num">{formatNumber(r.toolCalls ?? d?.toolCallsPerTrajectory ?? null)}</td>
                    <td className="num">{pct(r.toolErrors ?? d?.toolErrorRate ?? null)}</td>
                    <td>{finishReasonsText(d?.finishReasons)}</td>
                    <td className="num">
                      {refScore === null ? (
                        <span className="muted" title="the report has no such benchmark">
                          —
                        </span>
                      ) : (
                        `${refScore.toFixed(1)}%`
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
        <p className="muted ev-note">
          pass@1 is averaged over the k samples of each problem, then over problems; pass@k is the unbiased estimate;
          95% intervals by bootstrap over problems. Tool errors are failed calls over all calls. “Ref. pass@1” is{' '}
          {REF_MODEL} in the rStar2-Agent report, where a benchmark of the same name exists.
        </p>
        {steps.length > 1 &&
          (() => {
            const others = steps.filter((s) => s !== step);
            const against = againstStep !== null && others.includes(againstStep) ? againstStep : others[0]!;
            return (
              <section aria-label="Paired comparison of two steps" className="ev-paired">
                <h3>
                  Step {step} against{' '}
                  <select
                    aria-label="Compare against step"
                    value={against}
                    onChange={(e) => setAgainstStep(Number(e.target.value))}
                  >
                    {others.map((s) => (
                      <option key={s} value={s}>
                        step {s}
                      </option>
                    ))}
                  </select>
                </h3>
                <PairedTable
                  a={{ runId, step: against }}
                  b={{ runId, step }}
                  labelA={`step ${against}`}
                  labelB={`step ${step}`}
                />
              </section>
            );
          })()}
        <Pass1Chart rows={rows} />
        {steps.length > 1 && (
          <details className="ev-history">
            <summary>All evaluated steps</summary>
            <table aria-label="pass@1 by step and benchmark">
              <thead>
                <tr>
                  <th scope="col">Step</th>
                  <th scope="col">Benchmark</th>
                  <th scope="col" className="num">
                    pass@1
                  </th>
                  <th scope="col" className="num">
                    pass@k
                  </th>
                  <th scope="col" className="num">
                    Mean length
                  </th>
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => (
                  <tr key={r.id}>
                    <td>{r.step}</td>
                    <td>{r.benchmark}</td>
                    <td className="num">{pct(r.pass1)}</td>
                    <td className="num">{pct(r.passK)}</td>
                    <td className="num">{r.meanLength === null ? '—' : Math.round(r.meanLength)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
        )}
      </>
    );
  }

  return (
    <div className="ev">
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h1>Evaluation{run.data ? ` · ${run.data.name}` : ''}</h1>
        <Link href={`/runs/${runId}`}>Back to the run</Link>
      </div>
      <div className="ev-grid">
        <section aria-labelledby="ev-run-title">
          <h2 id="ev-run-title" style={{ marginTop: 0 }}>
            This run
          </h2>
          {body}
        </section>
        <ReferencePanel />
      </div>
    </div>
  );
}
