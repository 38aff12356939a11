'use client';
import { useState } from 'react';

/** Which metric keys to chart: a filter box and one checkbox per key (the union of the runs' keys). */
export function KeyPicker({
  keys,
  chosen,
  onChange,
}: {
  keys: string[];
  chosen: string[];
  onChange: (keys: string[]) => void;
}) {
  const [filter, setFilter] = useState('');
  const shown = filter ? keys.filter((k) => k.toLowerCase().includes(filter.toLowerCase())) : keys;
  const toggle = (k: string) =>
    onChange(
      chosen.includes(k)
        ? chosen.filter((x) => x !== k)
        : [...chosen, k].sort((a, b) => keys.indexOf(a) - keys.indexOf(b)),
    );
  if (keys.length === 0) return <div className="panel empty">These runs have logged no metrics yet.</div>;
  return (
    <fieldset className="panel cmp-keys">
      <legend>
        Metrics to chart{' '}
        <span className="muted">
          ({chosen.length} of {keys.length})
        </span>
      </legend>
      <div className="row" style={{ marginBottom: 8 }}>
        <input
          type="search"
          aria-label="Filter metrics"
          placeholder="Filter metrics…"
          value={filter}
          onChange={(e) => setFilter(e.target.value)}
        />
        <button
          type="button"
          onClick={() =>
            onChange([...new Set([...chosen, ...shown])].sort((a, b) => keys.indexOf(a) - keys.indexOf(b)))
          }
          disabled={shown.every((k) => chosen.includes(k))}
        >
          Select all{filter ? ' shown' : ''}
        </button>
        <button type="button" onClick={() => onChange([])} disabled={chosen.length === 0}>
          Clear metrics
        </button>
      </div>
      <div className="cmp-keylist">
        {shown.map((k) => (
          <label key={k} className="cmp-check">
            <input type="checkbox" checked={chosen.includes(k)} onChange={() => toggle(k)} aria-label={`Metric ${k}`} />
            <span>{k}</span>
          </label>
        ))}
        {shown.length === 0 && <span className="muted">No metric matches “{filter}”.</span>}
      </div>
    </fieldset>
  );
}
