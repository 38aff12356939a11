'use client';
import type { StoredTurn, TokenRecordWire } from '../../contracts/trajectory.ts';
import { TokenView } from './token-view.tsx';

interface TokensQuery {
  isPending: boolean;
  error: unknown;
  data?: { record: TokenRecordWire | null };
  refetch(): unknown;
}

/** The token view behind its query's states: loading, failed (with retry), nothing stored, or the view. */
export function TokenPanel({ turns, query, side }: { turns: StoredTurn[]; query: TokensQuery; side?: string }) {
  if (query.error) {
    return (
      <div className="panel" role="alert">
        <p className="error">
          Could not load the token record: {query.error instanceof Error ? query.error.message : String(query.error)}
        </p>
        <button type="button" onClick={() => void query.refetch()}>
          Retry loading the token record
        </button>
      </div>
    );
  }
  if (query.isPending || !query.data)
    return (
      <div className="panel empty" role="status">
        Loading the token record…
      </div>
    );
  if (!query.data.record) {
    return (
      <div className="panel empty" role="status">
        No token record was stored for this trajectory (stored before token records existed, or by an engine without a
        tokenizer).
      </div>
    );
  }
  return <TokenView turns={turns} record={query.data.record} side={side} />;
}
