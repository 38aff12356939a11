import type { Database } from '../server/db/client.ts';
import { isFinished } from '../contracts/runs.ts';
import { readEvents } from '../server/store/events.ts';
import { getRunOrThrow } from '../server/store/runs.ts';

/** Print a run's events as a worker writes them (live rollout snapshots excepted) until it finishes; exit code 0 on success. */
export async function followRun(db: Database, runId: string): Promise<number> {
  let cursor = 0;
  for (;;) {
    const events = await readEvents(db, runId, cursor);
    for (const e of events) {
      if (e.type !== 'rollouts') console.log(e.message);
      cursor = e.seq;
    }
    const run = await getRunOrThrow(db, runId);
    if (isFinished(run.status) && events.length === 0) return run.status === 'succeeded' ? 0 : 1;
    await new Promise((r) => setTimeout(r, 300));
  }
}
