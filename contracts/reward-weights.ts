/**
 * TRL's reward_weights as an import is told them: TRL keeps its GRPOConfig only in `training_args.bin`, a pickle,
 * which is never read, so the operator gives them — `--weights` in the CLI, the Import run dialog's field, both
 * `name=w,name=w`. The trajectory's reward is the weighted sum of the reward columns (1 each unless given).
 */
import { z } from 'zod';
import { UserError } from './errors.ts';

/** The weights by reward function name, as the API takes them. */
export const rewardWeights = z.record(z.string().min(1).max(200), z.number().finite());

/** `name=w,name=w` → weights; every entry must be a name and a finite number, else an error naming `field`. */
export function parseRewardWeights(text: string, field: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [k, v, extra] = part.split('=').map((x) => x.trim());
    const n = Number(v);
    if (!k || v === undefined || v === '' || extra !== undefined || !Number.isFinite(n))
      throw new UserError(`${field}: "${part}" is not name=number`, { field });
    out[k] = n;
  }
  return out;
}
