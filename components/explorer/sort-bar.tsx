'use client';
import Link from 'next/link';
import { compareHref } from './explorer-window.ts';
import type { Sort, useExplorerFilters } from './use-rollout-explorer.ts';

/** The sort, top-k / bottom-k by reward, how many rows match, and the compare link of two picked rows. */
export function SortBar({
  f,
  total,
  allTotal,
  picked,
  clearPicks,
}: {
  f: ReturnType<typeof useExplorerFilters>;
  total: number | null;
  allTotal: number | null;
  picked: string[];
  clearPicks: () => void;
}) {
  const { mode, setMode, kNum } = f;
  const href = compareHref(picked);
  return (
    <div className="row x-sort">
      <label>
        Sort{' '}
        <select
          aria-label="Sort"
          value={f.sort}
          disabled={mode !== 'all'}
          onChange={(e) => f.setSort(e.target.value as Sort)}
        >
          <option value="index">group order</option>
          <option value="reward_desc">reward ↓</option>
          <option value="reward_asc">reward ↑</option>
          <option value="length_desc">length ↓</option>
          <option value="length_asc">length ↑</option>
        </select>
      </label>
      <label>
        k{' '}
        <input
          className="x-num"
          aria-label="k"
          inputMode="numeric"
          placeholder="10"
          value={f.k}
          onChange={(e) => f.setK(e.target.value)}
        />
      </label>
      <button
        type="button"
        aria-pressed={mode === 'top'}
        onClick={() => setMode(mode === 'top' ? 'all' : 'top')}
        aria-label="Top k by reward"
      >
        Top {kNum}
      </button>
      <button
        type="button"
        aria-pressed={mode === 'bottom'}
        onClick={() => setMode(mode === 'bottom' ? 'all' : 'bottom')}
        aria-label="Bottom k by reward"
      >
        Bottom {kNum}
      </button>
      <span className="muted" aria-live="polite">
        {total === null
          ? 'loading…'
          : `${total.toLocaleString()} trajector${total === 1 ? 'y' : 'ies'}${mode !== 'all' ? ` (${mode} ${kNum} of ${allTotal?.toLocaleString()})` : ''}`}
      </span>
      <span className="x-compare">
        {href ? (
          <Link href={href} className="x-button-link" aria-label="Compare picked trajectories">
            Compare picked
          </Link>
        ) : (
          <button type="button" disabled aria-label="Compare (pick two rows)">
            Compare ({picked.length}/2 picked)
          </button>
        )}
        {picked.length > 0 && (
          <button type="button" onClick={clearPicks} aria-label="Clear picks">
            Clear picks
          </button>
        )}
      </span>
    </div>
  );
}
