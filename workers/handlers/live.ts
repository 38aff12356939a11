import { LiveBoard } from '../rollout/live.ts';
import type { EngineStats } from '../../contracts/live.ts';
import type { JobContext } from '../types.ts';

/** How often in-flight rollouts are published to the run's event stream (the live view), and engine figures. */
const LIVE_MS = 1000;
const ENGINES_MS = 2000;

/**
 * A live board whose changes are written to the run's events as `rollouts` once a second, so the agent loop's
 * callback only touches memory; and, when `engineStats` is given, the engines' figures as `engines` every two
 * seconds while they change (one more when they fall idle). `stop()` publishes the last changes.
 */
export function publishLiveRollouts(ctx: JobContext, opts: { engineStats?: () => EngineStats[] } = {}) {
  const board = new LiveBoard();
  let lastEngines = '';
  let lastEnginesAt = 0;
  const publish = async () => {
    const changed = board.drain();
    if (changed.length)
      await ctx.log(`${changed.length} rollout(s) updated`, { type: 'rollouts', level: 'debug', data: changed });
    const engines = opts.engineStats?.() ?? [];
    const now = Date.now();
    if (engines.length && now - lastEnginesAt >= ENGINES_MS) {
      const key = JSON.stringify(engines.map((e) => ({ ...e, tokensPerS: Math.round(e.tokensPerS) })));
      if (key !== lastEngines) {
        lastEngines = key;
        lastEnginesAt = now;
        const running = engines.reduce((s, e) => s + e.running, 0),
          waiting = engines.reduce((s, e) => s + e.waiting, 0);
        await ctx.log(`engines: ${running} running, ${waiting} waiting`, {
          type: 'engines',
          level: 'debug',
          data: { at: now, engines },
        });
      }
    }
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
