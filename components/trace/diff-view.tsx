'use client';
import { useMemo } from 'react';
import { diffLines, diffStats, responseText, sideBySide, type Cell, type DiffRow } from './diff.ts';
import type { TrajectoryDetail } from '../../contracts/trajectory.ts';

const BG = { del: 'rgba(248, 81, 73, 0.16)', add: 'rgba(63, 185, 80, 0.16)' };
const SR_ONLY = { position: 'absolute', width: 1, height: 1, overflow: 'hidden', clip: 'rect(0 0 0 0)' } as const;
const mono = { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, monospace', fontSize: 12 } as const;

/** The two responses (model text and appended tool text, in context order) as a side-by-side line diff. */
export function DiffView({ a, b }: { a: TrajectoryDetail; b: TrajectoryDetail }) {
  const { rows, stats } = useMemo(() => {
    const ops = diffLines(responseText(a.content.turns), responseText(b.content.turns));
    return { rows: sideBySide(ops), stats: diffStats(ops) };
  }, [a, b]);
  return (
    <section aria-label="Response diff" style={{ marginBottom: 16 }}>
      <h2>
        Response diff{' '}
        <span className="muted" style={{ fontWeight: 400 }}>
          {stats.same} same · −{stats.del} · +{stats.add} lines
        </span>
      </h2>
      {rows.length === 0 ? (
        <div className="panel empty">Both responses are empty.</div>
      ) : stats.del === 0 && stats.add === 0 ? (
        <div className="panel empty">The two responses are identical.</div>
      ) : (
        <div
          className="panel"
          style={{ maxHeight: 480, overflow: 'auto', padding: 0 }}
          role="region"
          tabIndex={0}
          aria-label="Diff lines, scrollable"
        >
          <table style={{ tableLayout: 'fixed', ...mono }}>
            <colgroup>
              <col style={{ width: 44 }} />
              <col />
              <col style={{ width: 44 }} />
              <col />
            </colgroup>
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">A · {a.id}</th>
                <th scope="col">#</th>
                <th scope="col">B · {b.id}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r, i) => (
                <Row key={i} row={r} />
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function Row({ row }: { row: DiffRow }) {
  if (row.kind === 'gap') {
    return (
      <tr>
        <td colSpan={4} className="muted" style={{ textAlign: 'center', background: '#12151b' }}>
          … {row.count} unchanged line{row.count === 1 ? '' : 's'} …
        </td>
      </tr>
    );
  }
  const bg = (side: 'del' | 'add') => (row.kind === 'change' ? BG[side] : undefined);
  return (
    <tr>
      <Half cell={row.left} bg={bg('del')} sign={row.kind === 'change' && row.left ? '−' : ''} />
      <Half cell={row.right} bg={bg('add')} sign={row.kind === 'change' && row.right ? '+' : ''} />
    </tr>
  );
}

function Half({ cell, bg, sign }: { cell: Cell | null; bg?: string; sign: string }) {
  const cellStyle = { padding: '1px 6px', borderBottom: 'none', background: cell ? bg : '#12151b' };
  return (
    <>
      <td className="muted" style={{ ...cellStyle, textAlign: 'right' }}>
        {cell?.line ?? ''}
      </td>
      <td style={{ ...cellStyle, whiteSpace: 'pre-wrap', overflowWrap: 'anywhere' }}>
        {/* The sign is drawn; assistive tech hears the word instead of a minus sign. */}
        {sign && (
          <>
            <span aria-hidden="true">{sign} </span>
            <span style={SR_ONLY}>{sign === '+' ? 'added: ' : 'removed: '}</span>
          </>
        )}
        {cell?.text ?? ''}
      </td>
    </>
  );
}
