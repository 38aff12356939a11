'use client';
import type { BenchmarkSummary } from '../../contracts/eval.ts';
import type { Interval } from '../../contracts/intervals.ts';
import { formatNumber } from '../ui/format.ts';
import { finishReasonsText, pct } from './eval-rows.ts';
import { referenceScore } from './reference.ts';
import type { EvalRow, EvalsState } from './use-evals-view.ts';

/** An EvalResult's stored details (older rows lack some fields). */
type Details = Partial<BenchmarkSummary> | null;
const ci = (c: Interval | undefined) => (c ? `95% CI ${pct(c.lo)}–${pct(c.hi)}` : null);
export const REF_MODEL = 'rStar2-Agent-14B';

/** The results at one step, one row per benchmark, beside the report's pass@1 of the reference model. */
export function ResultsTable({
  step,
  atStep,
  refData,
}: {
  step: number | undefined;
  atStep: EvalRow[];
  refData: EvalsState['ref']['data'];
}) {
  return (
    // Focusable so that a keyboard can scroll a wide table sideways.
    <section className="ev-table-wrap" aria-label="Evaluation results" tabIndex={0}>
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
          {atStep.map((r) => (
            <ResultRow key={r.id} r={r} refScore={refData ? referenceScore(refData, REF_MODEL, r.benchmark) : null} />
          ))}
        </tbody>
      </table>
    </section>
  );
}

function ResultRow({ r, refScore }: { r: EvalRow; refScore: number | null }) {
  const d = r.details as Details;
  return (
    <tr>
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
        <div className="muted ev-sub">{ci(d?.pass1Ci) ?? `${r.k} sample${r.k === 1 ? '' : 's'} each`}</div>
      </td>
      <td className="num">
        {pct(r.passK)}
        <div className="muted ev-sub">
          pass@{r.k}
          {d?.passKCi ? ` · ${ci(d.passKCi)}` : ''}
        </div>
      </td>
      <td className="num">{r.meanLength === null ? '—' : `${Math.round(r.meanLength).toLocaleString('en-US')} tok`}</td>
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
}

/** Every evaluated step's pass@1, pass@k and mean length, folded away. */
export function EvalHistory({ rows }: { rows: EvalRow[] }) {
  return (
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
  );
}
