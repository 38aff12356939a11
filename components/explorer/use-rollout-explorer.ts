'use client';
import { useQuery } from '@tanstack/react-query';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useTRPC, useTRPCClient } from '@/lib/trpc.ts';
import { EMPTY_FILTER, type FilterForm, pagesFor, pagesToEvict, queryKeyOf, toListFilter } from './explorer-window.ts';

export const PAGE = 200;
const MAX_PAGES = 25;

export type Sort = 'index' | 'reward_desc' | 'reward_asc' | 'length_desc' | 'length_asc';
export type Split = 'train' | 'eval';
export type Mode = 'all' | 'top' | 'bottom';
export type Row = {
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

/** The stored steps of a split and the slider over them: it starts on ?step= when that is stored, else the latest. */
export function useStepSlider(runId: string, initialStep: number | null) {
  const trpc = useTRPC();
  const [split, setSplitState] = useState<Split>('train');
  const steps = useQuery(
    trpc.trajectories.steps.queryOptions(
      { runId, split },
      {
        retry: false,
        // Never the list another page fetched moments ago (the run page's timeline asks the same, and an import that
        // finished within the second after it left the explorer saying "no trajectories" for good); while none is
        // stored, look again.
        refetchOnMount: 'always',
        refetchInterval: (q) => (q.state.data?.length ? false : 5000),
      },
    ),
  );
  const stepList = steps.data ?? [];
  const [stepIdx, setStepIdx] = useState<number | null>(null);
  const [allSteps, setAllSteps] = useState(false);
  useEffect(() => {
    if (!steps.data || stepIdx !== null || steps.data.length === 0) return;
    const i = initialStep === null ? -1 : steps.data.findIndex((s) => s.step === initialStep);
    setStepIdx(i >= 0 ? i : steps.data.length - 1);
  }, [steps.data, stepIdx, initialStep]);
  const idx = stepIdx === null ? null : Math.min(stepIdx, Math.max(0, stepList.length - 1));
  const stepInfo = idx !== null ? stepList[idx] : undefined;
  const step = allSteps ? null : (stepInfo?.step ?? null);
  const setSplit = (s: Split) => {
    setSplitState(s);
    setStepIdx(null);
  };
  return { split, setSplit, steps, stepList, idx, setStepIdx, stepInfo, step, allSteps, setAllSteps };
}

/** The filter form (its text search debounced), the sort and top-k / bottom-k, as the list query takes them. */
export function useExplorerFilters() {
  const [form, setForm] = useState<FilterForm>(EMPTY_FILTER);
  const [search, setSearch] = useState('');
  useEffect(() => {
    const t = setTimeout(() => setForm((f) => (f.search === search ? f : { ...f, search })), 300);
    return () => clearTimeout(t);
  }, [search]);
  const { filter, errors } = useMemo(() => toListFilter(form), [form]);
  const [sort, setSort] = useState<Sort>('index');
  const [k, setK] = useState('');
  const [mode, setMode] = useState<Mode>('all');
  const kNum = Math.max(1, Math.min(100_000, Math.floor(Number(k) || 10)));
  const effectiveSort: Sort = mode === 'top' ? 'reward_desc' : mode === 'bottom' ? 'reward_asc' : sort;
  const set = <F extends keyof FilterForm>(f: F, v: FilterForm[F]) => setForm((prev) => ({ ...prev, [f]: v }));
  const clear = () => {
    setForm(EMPTY_FILTER);
    setSearch('');
  };
  return {
    form,
    set,
    clear,
    search,
    setSearch,
    filter,
    errors,
    sort,
    setSort,
    k,
    setK,
    kNum,
    mode,
    setMode,
    effectiveSort,
  };
}

type Pages = { key: string; map: Map<number, Row[]>; total: number | null; error: string | null };

/**
 * The rows of one query, loaded a limit/offset page at a time as the window scrolls, the pages out of view evicted
 * past MAX_PAGES: smooth at 100,000 rows. A new query (step, filter, sort) drops the cache and loads its first page.
 */
export function useTrajectoryPages(
  runId: string,
  slider: ReturnType<typeof useStepSlider>,
  filters: ReturnType<typeof useExplorerFilters>,
) {
  const client = useTRPCClient();
  const { split, step, steps, allSteps } = slider;
  const { filter, errors, effectiveSort, mode, kNum } = filters;
  const ready = steps.data !== undefined && (allSteps || step !== null);
  const key = queryKeyOf({ step, filter, sort: `${split}|${effectiveSort}` });
  const [pages, setPages] = useState<Pages>({ key: '', map: new Map(), total: null, error: null });
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
  // biome-ignore lint/correctness/useExhaustiveDependencies: the key names the query; load and errors follow it.
  useEffect(() => {
    if (!ready || Object.keys(errors).length) return;
    setPages({ key, map: new Map(), total: null, error: null });
    view.current = [0];
    load(0, key);
  }, [key, ready]);

  const onRange = useCallback(
    (range: { start: number; end: number }) => {
      const want = pagesFor(range, PAGE);
      view.current = want;
      if (pages.error) return; // no retry loop: the Retry button reloads
      for (const p of want) if (!pages.map.has(p) && pages.key === key) load(p, key);
    },
    [pages, key, load],
  );
  const retry = () => {
    setPages((p) => ({ ...p, error: null, map: new Map() }));
    load(0, key);
  };
  const total = pages.total === null ? null : mode === 'all' ? pages.total : Math.min(pages.total, kNum);
  return { pages, total, onRange, retry };
}
