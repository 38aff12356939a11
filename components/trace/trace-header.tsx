import Link from 'next/link';
import type { ReactNode } from 'react';
import { formatTime } from '../ui/format.ts';
import { CorrectBadge } from './badges.tsx';
import type { TrajectoryDetail } from '../../contracts/trajectory.ts';

const num = (x: number | null, digits = 3) => (x === null || x === undefined ? '—' : x.toFixed(digits));

/** The trajectory's summary: where it came from, its score, how GRPO-RoC treated it, and its budget use. */
export function TraceHeader({ t, side }: { t: TrajectoryDetail; side?: string }) {
  const items: [string, ReactNode][] = [
    [
      'Run',
      <Link key="run" href={`/runs/${encodeURIComponent(t.runId)}`}>
        {t.runId}
      </Link>,
    ],
    ['Step', `${t.step} (stage ${t.stage}, ${t.split})`],
    ['Problem', t.problemId ?? '—'],
    ['Group', `${t.groupId} · sample ${t.sampleIndex}`],
    [
      'Reward',
      <span key="r" className="row" style={{ gap: 6, display: 'inline-flex' }}>
        {t.reward.toFixed(2)} <CorrectBadge correct={t.correct} />
      </span>,
    ],
    [
      'RoC',
      t.selected ? (
        <span key="s">
          <span className="badge ok">selected</span>
          {t.selectReason ? ` ${t.selectReason}` : ''}
        </span>
      ) : (
        <span key="s">
          <span className="badge cancelled">not selected</span>
          {t.selectReason ? ` ${t.selectReason}` : ''}
        </span>
      ),
    ],
    ['p_err / p_format', `${num(t.pErr)} / ${num(t.pFormat)}`],
    ['Finish', t.finishReason],
    ['Tokens', `${t.promptTokens} prompt · ${t.responseTokens} response (${t.toolTokens} tool)`],
    ['Turns', `${t.turns} · ${t.toolCalls.length} calls · ${t.toolErrors} tool errors`],
    ['Recorded', formatTime(t.createdAt)],
  ];
  return (
    <section className="panel" aria-label={`${side ? `${side} ` : ''}trajectory summary`}>
      <dl
        style={{
          display: 'grid',
          gridTemplateColumns: 'repeat(auto-fill, minmax(220px, 1fr))',
          gap: '6px 16px',
          margin: 0,
        }}
      >
        {items.map(([k, v]) => (
          <div key={k} style={{ minWidth: 0 }}>
            <dt className="muted" style={{ fontSize: 12 }}>
              {k}
            </dt>
            <dd style={{ margin: 0, overflowWrap: 'anywhere' }}>{v}</dd>
          </div>
        ))}
      </dl>
    </section>
  );
}
