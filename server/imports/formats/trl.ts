/**
 * TRL's GRPOTrainer completions log (`log_completions=True`: `completions/completions_{step:05d}.parquet`): one row
 * per completion with `step`, `prompt`, `completion` (text, or a list of messages for conversational data), one
 * column per reward function and `advantage`. TRL keeps no total: the trajectory's reward is the weighted sum of the
 * components (the run's `reward_weights`, 1 each unless given), the components stay beside it. No group id either:
 * completions of the same prompt in one step are one group. Pure: the parquet is read elsewhere, a row at a time.
 */
import type { ForeignMessage, Mapped } from '../../../contracts/foreign.ts';
import { asObject, type Json, num, numeric, optNum, problem, RecordError, rest, textKey } from './common.ts';

const USED = ['step', 'prompt', 'completion', 'advantage'];

export function mapTrlRow(
  row: unknown,
  where: { file: string; line: number; weights?: Record<string, number> },
): Mapped {
  try {
    const o = asObject(row, 'the row');
    const step = num(o, 'step');
    const prompt = messages(o.prompt, 'user', 'prompt');
    const completion = messages(o.completion, 'assistant', 'completion');
    const rewards: Record<string, number> = {};
    const extra = rest(o, USED);
    for (const [k, v] of Object.entries(extra)) {
      const n = numeric(v);
      if (n !== undefined || v === null) {
        // A reward function that returned None for this sample (TRL logs NaN/None) is absent, not zero.
        if (n !== undefined) rewards[k] = n;
        delete extra[k];
      }
    }
    if (Object.keys(rewards).length === 0) throw new RecordError('no reward column');
    const reward = Object.entries(rewards).reduce((s, [k, v]) => s + (where.weights?.[k] ?? 1) * v, 0);
    const advantage = optNum(o, 'advantage');
    const key = JSON.stringify(o.prompt);
    return {
      ok: true,
      trajectories: [
        {
          id: `${where.file}:${where.line}`,
          step,
          split: 'train',
          groupId: `prompt:${textKey(key)}`,
          messages: [...prompt, ...completion],
          promptMessages: prompt.length,
          reward,
          rewards,
          ...(advantage === undefined ? {} : { advantage }),
          metadata: extra,
          source: { file: where.file, line: where.line },
        },
      ],
    };
  } catch (e) {
    return { ok: false, problem: problem(where.file, where.line, e) };
  }
}

/** Text becomes one message of `role`; a conversational column is a list of {role, content}. */
function messages(v: unknown, role: 'user' | 'assistant', key: string): ForeignMessage[] {
  if (typeof v === 'string') return [{ role, content: v }];
  if (!Array.isArray(v)) throw new RecordError(`field "${key}" is neither text nor a list of messages`);
  return v.map((m, i) => {
    const o: Json = asObject(m, `${key}[${i}]`);
    const r = o.role;
    if (r !== 'system' && r !== 'user' && r !== 'assistant' && r !== 'tool')
      throw new RecordError(`${key}[${i}].role is not system, user, assistant or tool`);
    return { role: r, content: typeof o.content === 'string' ? o.content : JSON.stringify(o.content ?? '') };
  });
}
