/**
 * Non-reasoning SFT (docs/method.md §7) through the trainer: epochs over tokenised demonstrations in shuffled batches,
 * loss only on model tokens (prompt and tool tokens masked). The trainer owns the schedule (warm-up, cosine).
 */
import { mulberry32 } from '../engines/sampling.ts';
import type { SftMetrics, Trainer } from '../trainer/types.ts';

export interface SftExample {
  ids: number[];
  lossMask: number[];
}

export interface SftOptions {
  epochs: number;
  batch: number;
  seed: number;
  /** Stop early after this many optimiser steps (tests, benches). */
  maxSteps?: number;
  /** Steps already done (resume): their batches are skipped, so the data order is the same as without a stop. */
  skip?: number;
  signal?: AbortSignal;
  onStep?: (m: SftMetrics & { epoch: number }) => void | Promise<void>;
}

/** Optimiser steps `runSft` takes for `n` examples (the trainer's total_steps for its schedule). */
export const sftSteps = (n: number, o: Pick<SftOptions, 'epochs' | 'batch' | 'maxSteps'>) =>
  Math.min(o.maxSteps ?? Infinity, o.epochs * Math.ceil(n / o.batch));

/** Returns the metrics of the steps it ran (skipped ones excluded). */
export async function runSft(trainer: Trainer, data: SftExample[], o: SftOptions): Promise<SftMetrics[]> {
  if (data.length === 0) throw new Error('SFT needs at least one example');
  const rng = mulberry32(o.seed);
  const total = sftSteps(data.length, o);
  const out: SftMetrics[] = [];
  let done = 0;
  for (let epoch = 0; done < total; epoch++) {
    const order = data.map((_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(rng() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    for (let b = 0; b < order.length && done < total; b += o.batch) {
      if (done++ < (o.skip ?? 0)) continue;
      if (o.signal?.aborted) throw new Error('SFT stopped');
      const batch = order.slice(b, b + o.batch).map((i) => data[i]!);
      const m = await trainer.sftStep({ sequences: batch.map((x) => x.ids), loss_masks: batch.map((x) => x.lossMask) });
      out.push(m);
      await o.onStep?.({ ...m, epoch });
    }
  }
  return out;
}
