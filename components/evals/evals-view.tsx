'use client';
import Link from 'next/link';
import type { ReactNode } from 'react';
import { errorCode } from '../ui/error-code.ts';
import { formatTime } from '../ui/format.ts';
import { EvalHistory, REF_MODEL, ResultsTable } from './eval-tables.tsx';
import { PairedTable } from './paired-table.tsx';
import { Pass1Chart } from './pass1-chart.tsx';
import { ReferencePanel } from './reference-panel.tsx';
import { type EvalsState, useEvalsView } from './use-evals-view.ts';

/** /runs/<id>/evals: a run's evaluation results by step and benchmark, beside the report's reference table. */
export function EvalsView({ runId }: { runId: string }) {
  const v = useEvalsView(runId);
  const { evals, rows } = v;
  let body: ReactNode;
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
  } else body = <EvalResults v={v} runId={runId} />;

  return (
    <div className="ev">
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h1>Evaluation{v.run.data ? ` · ${v.run.data.name}` : ''}</h1>
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

function EvalResults({ v, runId }: { v: EvalsState; runId: string }) {
  const { steps, step, atStep, rows } = v;
  return (
    <>
      <div className="row" style={{ justifyContent: 'space-between', marginBottom: 8 }}>
        <label>
          Eval step{' '}
          <select aria-label="Eval step" value={step} onChange={(e) => v.setPickedStep(Number(e.target.value))}>
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
      <ResultsTable step={step} atStep={atStep} refData={v.ref.data} />
      <p className="muted ev-note">
        pass@1 is averaged over the k samples of each problem, then over problems; pass@k is the unbiased estimate; 95%
        intervals by bootstrap over problems. Tool errors are failed calls over all calls. “Ref. pass@1” is {REF_MODEL}{' '}
        in the rStar2-Agent report, where a benchmark of the same name exists.
      </p>
      {steps.length > 1 && <PairedSteps v={v} runId={runId} />}
      <Pass1Chart rows={rows} />
      {steps.length > 1 && <EvalHistory rows={rows} />}
    </>
  );
}

/** The shown step against another evaluated step, problem by problem. */
function PairedSteps({ v, runId }: { v: EvalsState; runId: string }) {
  const step = v.step!;
  const against = v.against!;
  return (
    <section aria-label="Paired comparison of two steps" className="ev-paired">
      <h3>
        Step {step} against{' '}
        <select
          aria-label="Compare against step"
          value={against}
          onChange={(e) => v.setAgainstStep(Number(e.target.value))}
        >
          {v.others.map((s) => (
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
}
