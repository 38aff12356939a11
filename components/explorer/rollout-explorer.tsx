'use client';
import { ShareButton } from '../share/share-button.tsx';
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useTRPC, useTRPCClient } from '@/lib/trpc.ts';
import {
  compareHref,
  EMPTY_FILTER,
  pagesFor,
  pagesToEvict,
  queryKeyOf,
  rowAt,
  toListFilter,
  togglePick,
  type FilterForm,
} from './explorer-window.ts';
import { SamePrompt } from './same-prompt.tsx';
import { VirtualRows } from './virtual-rows.tsx';

const ROW = 32;
const PAGE = 200;
const MAX_PAGES = 25;
const VIEW_HEIGHT = 480;

type Sort = 'index' | 'reward_desc' | 'reward_asc' | 'length_desc' | 'length_asc';
type Split = 'train' | 'eval';
type Row = {
  id: string;
  step: number;
  groupId: string;
  sampleIndex: number;
  problemId: string | null;
  reward: number;
  correct: boolean | null;
  selected: boolean;
  selectReason: string | null;
  pErr: number | null;
  responseTokens: number;
  turns: number;
  toolCalls: number;
  toolErrors: number;
  finishReason: string;
};

const COLS = [
  'pick',
  'step',
  'group',
  '#',
  'reward',
  'RoC',
  'p_err',
  'length',
  'turns',
  'tools',
  'finish',
  'problem',
  'trace',
];

/**
 * The rollout explorer of a run: a slider over every stored step (or all steps), filters, top-k / bottom-k, a
 * windowed table that loads limit/offset pages as it scrolls (smooth at 100,000 rows), the same problem across
 * steps, and a compare link for two picked rows.
 */
export function RolloutExplorer({ runId, initialStep }: { runId: string; initialStep: number | null }) {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const [split, setSplit] = useState<Split>('train');
  const steps = useQuery(trpc.trajectories.steps.queryOptions({ runId, split }, { retry: false }));
  const stepList = steps.data ?? [];
  const [stepIdx, setStepIdx] = useState<number | null>(null);
  const [allSteps, setAllSteps] = useState(false);
  // Start on ?step= when it is stored, else on the latest step.
  useEffect(() => {
    if (!steps.data || stepIdx !== null || steps.data.length === 0) return;
    const i = initialStep === null ? -1 : steps.data.findIndex((s) => s.step === initialStep);
    setStepIdx(i >= 0 ? i : steps.data.length - 1);
  }, [steps.data, stepIdx, initialStep]);
  const idx = stepIdx === null ? null : Math.min(stepIdx, Math.max(0, stepList.length - 1));
  const stepInfo = idx !== null ? stepList[idx] : undefined;
  const step = allSteps ? null : (stepInfo?.step ?? null);

  const [form, setForm] = useState<FilterForm>(EMPTY_FILTER);
  const [search, setSearch] = useState('');
  useEffect(() => {
    const t = setTimeout(() => setForm((f) => (f.search === search ? f : { ...f, search })), 300);
    return () => clearTimeout(t);
  }, [search]);
  const { filter, errors } = useMemo(() => toListFilter(form), [form]);
  const [sort, setSort] = useState<Sort>('index');
  const [k, setK] = useState('');
  const [mode, setMode] = useState<'all' | 'top' | 'bottom'>('all');
  const kNum = Math.max(1, Math.min(100_000, Math.floor(Number(k) || 10)));
  const effectiveSort: Sort = mode === 'top' ? 'reward_desc' : mode === 'bottom' ? 'reward_asc' : sort;

  const ready = steps.data !== undefined && (allSteps || step !== null);
  const key = queryKeyOf({ step, filter, sort: `${split}|${effectiveSort}` });
  const [pages, setPages] = useState<{
    key: string;
    map: Map<number, Row[]>;
    total: number | null;
    error: string | null;
  }>({ key: '', map: new Map(), total: null, error: null });
  const inflight = useRef(new Set<string>());
  const view = useRef<number[]>([0]);

  const load = useCallback(
    (page: number, forKey: string) => {
      const tag = `${forKey}#${page}`;
      if (inflight.current.has(tag)) return;
      inflight.current.add(tag);
      client.trajectories.list
        .query({
          runId,
          split,
          ...(step !== null ? { step } : {}),
          filter,
          sort: effectiveSort,
          limit: PAGE,
          offset: page * PAGE,
        })
        .then((r) => {
          setPages((prev) => {
            if (prev.key !== forKey) return prev;
            const map = new Map(prev.map);
            map.set(page, r.items as Row[]);
            for (const p of pagesToEvict(map.keys(), view.current, MAX_PAGES)) map.delete(p);
            return { ...prev, map, total: r.total, error: null };
          });
        })
        .catch((e: unknown) =>
          setPages((prev) =>
            prev.key !== forKey ? prev : { ...prev, error: e instanceof Error ? e.message : String(e) },
          ),
        )
        .finally(() => inflight.current.delete(tag));
    },
    [client, runId, split, step, filter, effectiveSort],
  );

  // A new query: drop the cache, load the first page (which also tells the total).
  useEffect(() => {
    if (!ready || Object.keys(errors).length) return;
    setPages({ key, map: new Map(), total: null, error: null });
    view.current = [0];
    load(0, key);
  }, [key, ready]); // eslint-disable-line react-hooks/exhaustive-deps

  const onRange = useCallback(
    (range: { start: number; end: number }) => {
      const want = pagesFor(range, PAGE);
      view.current = want;
      if (pages.error) return; // no retry loop: the Retry button reloads
      for (const p of want) if (!pages.map.has(p) && pages.key === key) load(p, key);
    },
    [pages, key, load],
  );

  const total = pages.total === null ? null : mode === 'all' ? pages.total : Math.min(pages.total, kNum);
  const [picked, setPicked] = useState<string[]>([]);
  const [problem, setProblem] = useState<string | null>(null);
  const href = compareHref(picked);
  const set = <F extends keyof FilterForm>(f: F, v: FilterForm[F]) => setForm((prev) => ({ ...prev, [f]: v }));

  const renderRow = (i: number, style: React.CSSProperties) => {
    const t = rowAt(pages.map, PAGE, i);
    if (!t)
      return (
        <div key={i} role="row" aria-rowindex={i + 2} className="xrow loading" style={style}>
          <span role="cell" className="muted">
            loading row {i + 1}…
          </span>
        </div>
      );
    const on = picked.includes(t.id);
    return (
      <div
        key={t.id}
        role="row"
        aria-rowindex={i + 2}
        className={`xrow${on ? ' picked' : ''}${t.selected ? ' kept' : ''}`}
        style={style}
      >
        <span role="cell">
          <input
            type="checkbox"
            checked={on}
            onChange={() => setPicked((p) => togglePick(p, t.id))}
            aria-label={`Pick ${t.id} for compare`}
          />
        </span>
        <span role="cell">{t.step}</span>
        <span role="cell" title={t.groupId} className="clip">
          {t.groupId}
        </span>
        <span role="cell">{t.sampleIndex}</span>
        {/* Green for the trajectory's verdict, not for reward > 0: an imported partial reward is no correct answer. */}
        <span
          role="cell"
          className={t.correct ? 'ok-text' : undefined}
          title={t.correct === true ? 'correct' : t.correct === false ? 'incorrect' : 'no verdict'}
        >
          {t.reward.toFixed(2)}
        </span>
        <span role="cell" title={t.selectReason ?? undefined}>
          {t.selected ? 'kept' : '—'}
        </span>
        <span role="cell">{t.pErr === null ? '—' : `${(100 * t.pErr).toFixed(0)}%`}</span>
        <span role="cell">{t.responseTokens}</span>
        <span role="cell">{t.turns}</span>
        <span role="cell">
          {t.toolCalls}
          {t.toolErrors ? <span className="error"> ({t.toolErrors})</span> : null}
        </span>
        <span role="cell" className="clip">
          {t.finishReason}
        </span>
        <span role="cell" className="clip">
          {t.problemId ? (
            <button
              className="x-linkish"
              onClick={() => setProblem(t.problemId)}
              aria-label={`Same prompt across steps: ${t.problemId}`}
              title={t.problemId}
            >
              {t.problemId}
            </button>
          ) : (
            '—'
          )}
        </span>
        <span role="cell">
          {/* No prefetch: a page of rows would render every trajectory page on the server before anyone clicks. */}
          <Link
            prefetch={false}
            href={`/trajectories/${encodeURIComponent(t.id)}`}
            aria-label={`Open trajectory ${t.id}`}
          >
            open
          </Link>
        </span>
      </div>
    );
  };

  if (steps.error)
    return (
      <div className="panel error" role="alert">
        Could not load the run&apos;s stored steps: {steps.error.message}
      </div>
    );
  return (
    <div className="explorer">
      <div className="row x-controls">
        <label>
          Split{' '}
          <select
            aria-label="Split"
            value={split}
            onChange={(e) => {
              setSplit(e.target.value as Split);
              setStepIdx(null);
            }}
          >
            <option value="train">train</option>
            <option value="eval">eval</option>
          </select>
        </label>
        {stepList.length > 0 && (
          <label className="x-step">
            Step{' '}
            <input
              type="range"
              aria-label="Step"
              min={0}
              max={stepList.length - 1}
              value={idx ?? 0}
              disabled={allSteps}
              aria-valuetext={stepInfo ? `step ${stepInfo.step}` : undefined}
              onChange={(e) => setStepIdx(Number(e.target.value))}
            />
            <strong>{stepInfo ? stepInfo.step : '—'}</strong>
            {stepInfo && (
              <span className="muted">
                {' '}
                {stepInfo.count} rollouts · accuracy {(100 * stepInfo.accuracy).toFixed(0)}% · kept {stepInfo.selected}
              </span>
            )}
          </label>
        )}
        <label>
          <input
            type="checkbox"
            checked={allSteps}
            onChange={(e) => setAllSteps(e.target.checked)}
            aria-label="All steps"
          />{' '}
          all steps
        </label>
        {step !== null && <ShareButton scope="step" target={{ runId, step }} />}
        <span className="muted">
          {stepList.length} stored step{stepList.length === 1 ? '' : 's'}
        </span>
      </div>
      {steps.isLoading ? (
        <div className="panel empty">Loading stored steps…</div>
      ) : stepList.length === 0 ? (
        <div className="panel empty">
          No trajectories stored yet{split === 'eval' ? ' for evaluation' : ''}: every step&apos;s rollouts appear here
          once the step has finished.
        </div>
      ) : (
        <>
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
                value={search}
                onChange={(e) => setSearch(e.target.value)}
              />
            </label>
            <button
              onClick={() => {
                setForm(EMPTY_FILTER);
                setSearch('');
              }}
              aria-label="Clear filters"
            >
              Clear
            </button>
          </fieldset>
          <div className="row x-sort">
            <label>
              Sort{' '}
              <select
                aria-label="Sort"
                value={sort}
                disabled={mode !== 'all'}
                onChange={(e) => setSort(e.target.value as Sort)}
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
                value={k}
                onChange={(e) => setK(e.target.value)}
              />
            </label>
            <button
              aria-pressed={mode === 'top'}
              onClick={() => setMode(mode === 'top' ? 'all' : 'top')}
              aria-label="Top k by reward"
            >
              Top {kNum}
            </button>
            <button
              aria-pressed={mode === 'bottom'}
              onClick={() => setMode(mode === 'bottom' ? 'all' : 'bottom')}
              aria-label="Bottom k by reward"
            >
              Bottom {kNum}
            </button>
            <span className="muted" aria-live="polite">
              {total === null
                ? 'loading…'
                : `${total.toLocaleString()} trajector${total === 1 ? 'y' : 'ies'}${mode !== 'all' ? ` (${mode} ${kNum} of ${pages.total?.toLocaleString()})` : ''}`}
            </span>
            <span className="x-compare">
              {href ? (
                <Link href={href} className="x-button-link" aria-label="Compare picked trajectories">
                  Compare picked
                </Link>
              ) : (
                <button disabled aria-label="Compare (pick two rows)">
                  Compare ({picked.length}/2 picked)
                </button>
              )}
              {picked.length > 0 && (
                <button onClick={() => setPicked([])} aria-label="Clear picks">
                  Clear picks
                </button>
              )}
            </span>
          </div>
          {pages.error && (
            <div className="panel error" role="alert">
              Could not load trajectories: {pages.error}{' '}
              <button
                onClick={() => {
                  setPages((p) => ({ ...p, error: null, map: new Map() }));
                  load(0, key);
                }}
                aria-label="Retry loading trajectories"
              >
                Retry
              </button>
            </div>
          )}
          <div role="table" aria-label="Trajectories" aria-rowcount={(total ?? 0) + 1} className="xtable">
            <div role="row" aria-rowindex={1} className="xrow xhead">
              {COLS.map((c, i) => (
                <span key={i} role="columnheader">
                  {c}
                </span>
              ))}
            </div>
            {total === 0 ? (
              <div className="panel empty">No trajectories match these filters.</div>
            ) : (
              <VirtualRows
                total={total ?? 0}
                rowHeight={ROW}
                height={VIEW_HEIGHT}
                renderRow={renderRow}
                onRange={onRange}
                label="Trajectory rows"
              />
            )}
          </div>
        </>
      )}
      {problem && <SamePrompt runId={runId} problemId={problem} onClose={() => setProblem(null)} />}
    </div>
  );
}
