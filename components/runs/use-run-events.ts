'use client';
import { useCallback, useEffect, useRef, useState } from 'react';
import { type ClusterView, foldCluster } from '../../contracts/cluster.ts';
import { isEvent, type RunEvent } from '../../contracts/events.ts';
import type { EnginesSnapshot } from '../../contracts/live.ts';
import type { StageEventData } from '../../contracts/runs.ts';
import { applyRollouts, clearFinished, type LiveRollout, rolloutsOf } from './rollout-board.ts';

export type AnyEvent = Omit<RunEvent, 'runId'>;

/** How long a finished step's rollouts stay on the live board after the step is stored. */
const FINISHED_LINGER_MS = 4000;

/**
 * What a run's events change besides the log and the metrics: stage events, the engines' and the cluster's latest
 * snapshots, the live rollouts board and a tick per stored step. `apply` folds one event in, the same for the
 * snapshot's events and streamed ones.
 */
export function useRunEvents() {
  const [stageEvents, setStageEvents] = useState<StageEventData[]>([]);
  const [board, setBoard] = useState<LiveRollout[]>([]);
  const [engines, setEngines] = useState<EnginesSnapshot | null>(null);
  const [cluster, setCluster] = useState<ClusterView | null>(null);
  const [stepTick, setStepTick] = useState(0);
  const lingering = useRef(new Set<ReturnType<typeof setTimeout>>());

  const apply = useCallback((e: AnyEvent, live: boolean) => {
    if (isEvent(e, 'stage') && e.data) {
      const s = e.data;
      setStageEvents((prev) => [...prev.filter((p) => p.stage !== s.stage), s]);
    } else if (isEvent(e, 'engines') && e.data) {
      const snap = e.data;
      setEngines((prev) => (prev && prev.at > snap.at ? prev : snap));
    } else if (isEvent(e, 'cluster') && e.data) {
      const c = e.data;
      setCluster((prev) => foldCluster(prev, c));
    } else if (e.type === 'rollouts') {
      const updates = rolloutsOf(e.data);
      if (updates.length) setBoard((prev) => applyRollouts(prev, updates));
    } else if (e.type === 'step') {
      // The step's trajectories are stored: its finished rollouts leave the board, its groups are refetched. Live,
      // they stay FINISHED_LINGER_MS first: a short step's rollouts and its end arrive in one batch of the stream,
      // and would otherwise never be drawn.
      if (live) {
        const timer = setTimeout(() => {
          lingering.current.delete(timer);
          setBoard((prev) => clearFinished(prev));
        }, FINISHED_LINGER_MS);
        lingering.current.add(timer);
        setStepTick((n) => n + 1);
      } else setBoard((prev) => clearFinished(prev));
    }
  }, []);
  useEffect(() => {
    const timers = lingering.current;
    return () => timers.forEach(clearTimeout);
  }, []);
  const clearBoard = useCallback(() => setBoard([]), []);

  return { stageEvents, board, engines, cluster, stepTick, apply, clearBoard };
}
