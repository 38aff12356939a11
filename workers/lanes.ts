/**
 * One worker process, several lanes: the main lane runs one job at a time (training, evaluation, the
 * test kinds) and `sideSlots` side lanes run the light kinds (contracts/jobs.ts SIDE_JOB_KINDS: imports, followed
 * imports, diagnostics) beside it. A followed import never ends on its own; in the main lane of `npm start`'s single
 * worker it held every later run, diagnostics job and import queued until someone stopped it.
 */
import { isSideJobKind } from '../contracts/jobs.ts';
import type { Database } from '../server/db/client.ts';
import type { JobHandler, JobHandlers } from './types.ts';
import { Worker, type WorkerOptions } from './worker.ts';

export interface LaneOptions extends WorkerOptions {
  /** Side lanes for the light kinds; 0 runs them in the main lane. */
  sideSlots: number;
}

/** How a worker's kinds split into its lanes (pure: the main lane's kinds, the side lanes' kinds). */
export function splitKinds(kinds: string[], sideSlots: number): { main: string[]; side: string[] } {
  if (sideSlots === 0) return { main: kinds, side: [] };
  return { main: kinds.filter((k) => !isSideJobKind(k)), side: kinds.filter(isSideJobKind) };
}

/**
 * The lanes, main first. Each is a Worker of its own (its own lease loop and heartbeat); the main lane keeps the
 * worker's id, side lane i leases as `<id>/side-<i>` so a job's lease names the slot that holds it.
 */
export function workerLanes(
  db: Database,
  handlers: JobHandlers | Record<string, JobHandler<never>>,
  opts: LaneOptions,
): Worker[] {
  const { sideSlots, ...base } = opts;
  const { main, side } = splitKinds(opts.kinds ?? Object.keys(handlers), sideSlots);
  const lanes: Worker[] = [];
  // Without a kinds list the main lane leases every kind but the side lanes' (one with no handler then fails, named).
  if (!opts.kinds) lanes.push(new Worker(db, handlers, { ...base, exceptKinds: side }));
  else if (main.length) lanes.push(new Worker(db, handlers, { ...base, kinds: main }));
  if (side.length)
    for (let i = 1; i <= sideSlots; i++) {
      const id = `${opts.id}/side-${i}`;
      lanes.push(
        new Worker(db, handlers, {
          ...base,
          id,
          kinds: side,
          log: opts.log ?? ((line) => console.log(`[worker ${id}] ${line}`)),
        }),
      );
    }
  return lanes;
}
