'use client';
import type { EnginesSnapshot } from '../../contracts/live.ts';
import { formatTime } from '../ui/format.ts';

/**
 * The policy's inference engines as the latest `engines` event saw them (docs/method.md §6): per engine, requests
 * waiting and running, KV cache blocks in use, tokens/s and the weight version it serves.
 */
export function EnginePanel({ snapshot, live }: { snapshot: EnginesSnapshot | null; live: boolean }) {
  if (!snapshot) return null;
  return (
    <section aria-label="Inference engines" className="panel">
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h2>Engines</h2>
        <span className="muted">
          {live ? 'as of' : 'last seen'} {formatTime(snapshot.at)}
        </span>
      </div>
      <table className="table">
        <thead>
          <tr>
            <th>engine</th>
            <th>waiting</th>
            <th>running</th>
            <th>KV blocks</th>
            <th>tokens/s</th>
            <th>weights</th>
          </tr>
        </thead>
        <tbody>
          {snapshot.engines.map((e) => {
            const used = e.kvBlocksTotal ? e.kvBlocksUsed / e.kvBlocksTotal : 0;
            return (
              <tr key={e.id}>
                <td>
                  <code>{e.id}</code>
                </td>
                <td>{e.waiting}</td>
                <td>{e.running}</td>
                <td title={`${e.kvBlocksUsed} of ${e.kvBlocksTotal} blocks of ${e.blockTokens} tokens`}>
                  <meter min={0} max={1} value={used} aria-label={`KV blocks in use on ${e.id}`} /> {e.kvBlocksUsed} /{' '}
                  {e.kvBlocksTotal}
                </td>
                <td>{e.tokensPerS.toFixed(0)}</td>
                <td>{e.weightVersion === null ? '—' : `v${e.weightVersion}`}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
