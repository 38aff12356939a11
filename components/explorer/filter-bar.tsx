'use client';
import type { FilterForm } from './explorer-window.ts';
import type { useExplorerFilters } from './use-rollout-explorer.ts';

type Filters = ReturnType<typeof useExplorerFilters>;

/** The filters: a reward range, kept or dropped by RoC, tool errors, the finish reason and a text search. */
export function FilterBar({ f }: { f: Filters }) {
  const { form, set, errors } = f;
  return (
    <fieldset className="row x-filters">
      <legend className="muted">Filters</legend>
      <label>
        reward ≥{' '}
        <input
          className="x-num"
          aria-label="Minimum reward"
          inputMode="decimal"
          value={form.minReward}
          onChange={(e) => set('minReward', e.target.value)}
          aria-invalid={!!errors.minReward}
        />
      </label>
      <label>
        ≤{' '}
        <input
          className="x-num"
          aria-label="Maximum reward"
          inputMode="decimal"
          value={form.maxReward}
          onChange={(e) => set('maxReward', e.target.value)}
          aria-invalid={!!errors.maxReward}
        />
      </label>
      {(errors.minReward || errors.maxReward) && (
        <span className="error">
          {errors.minReward ? `minimum: ${errors.minReward}` : `maximum: ${errors.maxReward}`}
        </span>
      )}
      <label>
        RoC{' '}
        <select
          aria-label="Selected by RoC"
          value={form.selected}
          onChange={(e) => set('selected', e.target.value as FilterForm['selected'])}
        >
          <option value="any">any</option>
          <option value="yes">kept</option>
          <option value="no">dropped</option>
        </select>
      </label>
      <label>
        tool error{' '}
        <select
          aria-label="Has tool error"
          value={form.toolError}
          onChange={(e) => set('toolError', e.target.value as FilterForm['toolError'])}
        >
          <option value="any">any</option>
          <option value="yes">yes</option>
          <option value="no">no</option>
        </select>
      </label>
      <label>
        finish{' '}
        <input
          className="x-text"
          aria-label="Finish reason"
          placeholder="e.g. stop"
          value={form.finishReason}
          onChange={(e) => set('finishReason', e.target.value)}
        />
      </label>
      <label>
        text{' '}
        <input
          className="x-text"
          type="search"
          aria-label="Search text"
          placeholder="in prompt, turns, output"
          value={f.search}
          onChange={(e) => f.setSearch(e.target.value)}
        />
      </label>
      <button type="button" onClick={f.clear} aria-label="Clear filters">
        Clear
      </button>
    </fieldset>
  );
}
