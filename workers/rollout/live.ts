/**
 * Live view of in-flight rollouts. The agent loop's events only update this in-memory board (a string append per
 * streamed chunk); a timer elsewhere calls `drain()` and publishes what changed, so watching never waits on I/O.
 */
import type { RolloutEvent } from './agent.ts';
import type { LiveRollout } from '../../contracts/live.ts';

export class LiveBoard {
  private readonly items = new Map<string, LiveRollout>();
  private readonly dirty = new Set<string>();

  /** Pass as the agent's onEvent. */
  readonly onEvent = (e: RolloutEvent): void => {
    const now = Date.now();
    if (e.type === 'start') {
      this.items.set(e.id, { id: e.id, status: 'generating', turns: [], updatedAt: now });
    } else {
      const r = this.items.get(e.id);
      if (!r) return;
      const turn = (i: number) => (r.turns[i] ??= { text: '', tool: null });
      switch (e.type) {
        case 'text':
          turn(e.turn).text += e.delta;
          r.status = 'generating';
          break;
        case 'turn':
          turn(e.turn).text = e.text;
          break;
        case 'tool_queued':
          turn(e.turn).tool = { code: e.code, status: 'running' };
          r.status = 'tool';
          break;
        case 'tool_done':
          turn(e.turn).tool = {
            code: turn(e.turn).tool?.code ?? '',
            status: e.record.status,
            output: e.record.text,
            ms: e.record.durationMs,
          };
          r.status = 'generating';
          break;
        case 'finish':
          r.status = 'finished';
          r.finishReason = e.trajectory.finishReason;
          break;
      }
      r.updatedAt = now;
    }
    this.dirty.add(e.id);
  };

  /** Every rollout changed since the last drain (full current state of each), oldest first. */
  drain(): LiveRollout[] {
    const out = [...this.dirty]
      .map((id) => this.items.get(id)!)
      .filter(Boolean)
      .map((r) => structuredClone(r));
    this.dirty.clear();
    for (const r of out) if (r.status === 'finished') this.items.delete(r.id);
    return out;
  }

  snapshot(): LiveRollout[] {
    return [...this.items.values()].map((r) => structuredClone(r));
  }
}
