import { CorrectBadge } from './badges.tsx';
import type { TrajectoryDetail } from '../../contracts/trajectory.ts';

/** The end of the trace: the answer the verifier extracted and what it decided, and how. */
export function VerdictView({ t, side }: { t: TrajectoryDetail; side?: string }) {
  const v = t.content.verdict;
  return (
    <section className="panel" aria-label={`${side ? `${side} ` : ''}answer and verdict`} style={{ marginBottom: 12 }}>
      <div className="row" style={{ marginBottom: 6 }}>
        <strong>Answer</strong>
        <CorrectBadge correct={t.correct} />
        {v && <span className="muted">method {v.method}</span>}
        <span className="muted">finish {t.content.finishReason ?? t.finishReason}</span>
      </div>
      <pre style={{ margin: 0, whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
        {v?.extracted ?? t.answer ?? <span className="muted">(no answer extracted)</span>}
      </pre>
      {v?.reason && (
        <p className="muted" style={{ margin: '6px 0 0' }}>
          {v.reason}
        </p>
      )}
      {t.content.error && (
        <p className="error" role="alert" style={{ margin: '6px 0 0' }}>
          Engine error: {t.content.error}
        </p>
      )}
    </section>
  );
}
