/**
 * verl's rollout and validation dumps (`trainer.rollout_data_dir/{step}.jsonl`, `validation_data_dir/{step}.jsonl`,
 * written by RayPPOTrainer._dump_generations): one sample per line, `input` and `output` decoded with special tokens
 * stripped (a multi-turn conversation is one flattened string), `score`, `step`, `gts` (the reference, newer trainer),
 * `uid` (the group, newer trainer only) and one key per extra reward value. Older dumps have no group id: samples
 * with the same `input` in one file are one group. Pure.
 */
import type { Mapped } from '../../../contracts/foreign.ts';
import { asObject, num, numeric, problem, rest, str, textKey } from './common.ts';

const USED = ['input', 'output', 'score', 'step', 'gts', 'uid'];

export function mapVerlLine(record: unknown, where: { file: string; line: number; split: 'train' | 'eval' }): Mapped {
  try {
    const o = asObject(record, 'the line');
    const input = str(o, 'input');
    const output = str(o, 'output');
    const reward = num(o, 'score');
    const step = num(o, 'step');
    const rewards: Record<string, number> = {};
    const extra = rest(o, USED);
    for (const [k, v] of Object.entries(extra)) {
      const n = numeric(v);
      if (n !== undefined) {
        rewards[k] = n;
        delete extra[k];
      }
    }
    const uid = typeof o.uid === 'string' || typeof o.uid === 'number' ? String(o.uid) : undefined;
    return {
      ok: true,
      trajectories: [
        {
          id: `${where.file}:${where.line}`,
          step,
          split: where.split,
          groupId: uid ?? `input:${textKey(input)}`,
          messages: [
            { role: 'user', content: input },
            { role: 'assistant', content: output },
          ],
          promptMessages: 1,
          reward,
          ...(Object.keys(rewards).length ? { rewards } : {}),
          ...(o.gts === undefined || o.gts === null
            ? {}
            : { answer: typeof o.gts === 'string' ? o.gts : JSON.stringify(o.gts) }),
          metadata: extra,
          source: { file: where.file, line: where.line },
        },
      ],
    };
  } catch (e) {
    return { ok: false, problem: problem(where.file, where.line, e) };
  }
}
