import { LiveBoard } from '../rollout/live.ts';
import type { JobContext } from '../types.ts';

/** How often in-flight rollouts are published to the run's event stream (the live view). */
const LIVE_MS = 1000;

/**
 * A live board whose changes are written to the run's events as `rollouts` once a second, so the agent loop's
 * callback only touches memory. `stop()` publishes the last changes.
 */
export function publishLiveRollouts(ctx: JobContext) {
  const board = new LiveBoard();
  const publish = async () => {
    const changed = board.drain();
    if (changed.length) await ctx.log(`${changed.length} rollout(s) updated`, { type: 'rollouts', level: 'debug', data: changed });
  };
  const timer = setInterval(() => void publish().catch(() => {}), LIVE_MS);
  return {
    onEvent: board.onEvent,
    async stop() {
      clearInterval(timer);
      await publish().catch(() => {});
    },
  };
}
