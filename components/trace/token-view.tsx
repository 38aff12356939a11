'use client';
import { memo, useMemo, useRef, useState, type MouseEvent } from 'react';
import type { StoredTurn, TokenRecordWire } from '../../contracts/trajectory.ts';
import {
  QUANTITIES,
  legendOf,
  scaleOf,
  tokenStyle,
  tokenTitle,
  tokensByTurn,
  turnPieces,
  type TokenPiece,
  type TokenQuantity,
} from './token-scale.ts';

const TOOL_STYLE = { color: 'var(--muted)', opacity: 0.55 } as const;

/**
 * The token view: every response token of every turn, coloured by the chosen quantity, tool responses greyed out
 * as masked. Hovering a token shows its values (its title, filled in on first hover, and the read-out line): the
 * strings are built only for tokens someone points at, and the read-out is written without re-rendering the
 * thousands of token spans.
 */
export function TokenView({ turns, record, side }: { turns: StoredTurn[]; record: TokenRecordWire; side?: string }) {
  const [q, setQ] = useState<TokenQuantity>(record.trainerLogprobs ? 'diff' : 'rollout');
  const readout = useRef<HTMLOutputElement>(null);
  const scale = useMemo(() => scaleOf(record, q), [record, q]);
  const legend = legendOf(record, q, scale);
  const byTurn = useMemo(() => tokensByTurn(record), [record]);
  const prefix = side ? `${side} ` : '';
  const texts = useRef(new Map<number, string>());

  const onOver = (e: MouseEvent<HTMLElement>) => {
    const el = (e.target as HTMLElement).closest<HTMLElement>('[data-i]');
    if (!el) return;
    const i = Number(el.dataset.i);
    if (!el.title) el.title = tokenTitle(record, i, texts.current.get(i) ?? el.textContent ?? '');
    if (readout.current) readout.current.textContent = el.title;
  };
  const help = QUANTITIES.find((x) => x.key === q)!.help;

  return (
    <section aria-label={`${prefix}token view`} className="token-view">
      <div className="row" style={{ gap: 8, flexWrap: 'wrap', marginBottom: 8 }}>
        <label htmlFor={`${prefix}token-q`.replace(/\s/g, '-')} className="muted">
          Colour tokens by
        </label>
        <select
          id={`${prefix}token-q`.replace(/\s/g, '-')}
          value={q}
          onChange={(e) => setQ(e.target.value as TokenQuantity)}
          style={{
            background: 'var(--panel)',
            color: 'var(--text)',
            border: '1px solid var(--line)',
            borderRadius: 4,
            padding: '4px 6px',
            font: 'inherit',
          }}
        >
          {QUANTITIES.map((x) => (
            <option key={x.key} value={x.key}>
              {x.label}
            </option>
          ))}
        </select>
        <span className="muted" style={{ fontSize: 12.5 }}>
          {help}
        </span>
      </div>
      <TokenLegend legend={legend} label={`${prefix}token colour legend`} />
      {legend.note && (
        <p className="muted" role="note">
          {legend.note}
        </p>
      )}
      <output
        aria-label={`${prefix}hovered token`}
        ref={readout}
        className="panel"
        style={{
          display: 'block',
          minHeight: 20,
          fontSize: 12.5,
          padding: '4px 8px',
          marginBottom: 8,
          whiteSpace: 'normal',
          overflowWrap: 'anywhere',
        }}
      >
        Point at a token to see its values.
      </output>
      <div onMouseOver={onOver}>
        {turns.map((turn) => (
          <TurnTokens
            key={turn.index}
            turn={turn}
            record={record}
            idx={byTurn.get(turn.index) ?? []}
            q={q}
            scale={scale}
            name={`${prefix}turn ${turn.index + 1} tokens`}
            texts={texts.current}
          />
        ))}
      </div>
    </section>
  );
}

/** The colours of the chosen quantity, and the tool responses' grey. */
function TokenLegend({ legend, label }: { legend: ReturnType<typeof legendOf>; label: string }) {
  return (
    <div
      className="row"
      role="list"
      aria-label={label}
      style={{ gap: 10, flexWrap: 'wrap', fontSize: 12.5, marginBottom: 8 }}
    >
      {legend.items.map((it) => (
        <span role="listitem" key={it.label} className="row" style={{ gap: 4 }}>
          <span
            aria-hidden="true"
            style={{
              display: 'inline-block',
              width: 18,
              height: 12,
              border: '1px solid var(--line)',
              background: it.background,
              textDecoration: it.textDecoration,
            }}
          />
          {it.label}
        </span>
      ))}
      <span role="listitem" className="row" style={{ gap: 4 }}>
        <span style={TOOL_STYLE}>tool</span> tool response (masked)
      </span>
    </div>
  );
}

const TurnTokens = memo(function TurnTokens({
  turn,
  record,
  idx,
  q,
  scale,
  name,
  texts,
}: {
  turn: StoredTurn;
  record: TokenRecordWire;
  idx: number[];
  q: TokenQuantity;
  scale: number;
  name: string;
  texts: Map<number, string>;
}) {
  const pieces = useMemo(() => turnPieces(turn, record, idx), [turn, record, idx]);
  const tool = useMemo(() => idx.filter((i) => record.mask[i] === 0).length, [record, idx]);
  return (
    <article
      aria-label={name}
      className="panel"
      style={{ marginBottom: 8, whiteSpace: 'pre-wrap', overflowWrap: 'anywhere', fontSize: 13.5, lineHeight: 1.6 }}
    >
      <header className="muted" style={{ fontSize: 12, marginBottom: 4 }}>
        Turn {turn.index + 1} · {idx.length - tool} model tokens{tool ? ` + ${tool} tool-response tokens (masked)` : ''}
      </header>
      {pieces.map((p) => (
        <Piece key={`${p.kind}${p.i}`} p={p} record={record} q={q} scale={scale} texts={texts} />
      ))}
      {idx.length === 0 && <span className="muted">(no token record for this turn)</span>}
    </article>
  );
});

function Piece({
  p,
  record,
  q,
  scale,
  texts,
}: {
  p: TokenPiece;
  record: TokenRecordWire;
  q: TokenQuantity;
  scale: number;
  texts: Map<number, string>;
}) {
  if (p.kind === 'untokenised')
    return (
      <span className="muted" title="text without a token in the record">
        {p.text}
      </span>
    );
  if (p.kind === 'tool')
    return (
      <span data-i={p.i} data-kind="tool" style={TOOL_STYLE}>
        {p.text}
      </span>
    );
  texts.set(p.i, p.text);
  // A token that adds no characters (EOS, the first bytes of a multi-byte character) still gets a visible mark.
  return (
    <span data-i={p.i} data-kind="model" style={tokenStyle(record, p.i, q, scale)}>
      {p.text || '▫'}
    </span>
  );
}
