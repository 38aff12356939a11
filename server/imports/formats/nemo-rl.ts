/**
 * NeMo-RL's generation dumps (nemo_rl/algorithms/grpo.py, grpo_sync.py, distillation.py, ppo.py of NVIDIA-NeMo/RL,
 * written by Logger.log_batched_dict_as_jsonl in nemo_rl/utils/logger.py): `train_data_step{N}.jsonl` and
 * `val_data_step{N}.jsonl` in the log dir, one sample per line as a batch slice of one, so every field is a list of
 * one entry (the sample's value), plus `idx`, the sample's place in the batch.
 *
 * - val: `content` (the sample's message log as `{role, content}` dicts) and `rewards` (its total reward).
 * - train: `content` (the message texts only, no roles), `rewards`, `input_lengths` and, padded to the batch's
 *   longest sequence, `token_ids`, `token_loss_mask`, `advantages` (per token), `generation_logprobs` (the rollout
 *   engine's) and `prev_logprobs` (the trainer's, before the update); older dumps lack the token columns.
 *   `sample_loss_mask`, `filtered_rewards` (dynamic sampling) and `agent_ref` (NeMo Gym) go to metadata.
 *
 * Train dumps keep no roles: NeMo-RL's GRPO log is the prompt's messages, then one generated assistant message and
 * one environment observation per turn, and the loss mask trains exactly the generated messages. So the number of
 * trained token runs is the number of turns k, the last 2k messages alternate assistant and observation, and the
 * prompt before them is a system message (when there are two or more) and the user message. Without a loss mask a
 * single turn is assumed. An environment observation (role `environment`) is a tool message here: what came back
 * to the turn. No group id either: the same prompt in one step is one group. Pure.
 */
import type { ForeignMessage, ForeignTokens, ForeignTrajectory, Mapped } from '../../../contracts/foreign.ts';
import {
  asObject,
  chatMessage,
  type Json,
  numeric,
  problem,
  RecordError,
  rest,
  splitAtCompletion,
  textKey,
} from './common.ts';

/** The columns mapped: the conversation and reward first, then the token columns. */
const SAMPLE_USED = [
  'content',
  'rewards',
  'input_lengths',
  'token_ids',
  'token_loss_mask',
  'advantages',
  'generation_logprobs',
  'prev_logprobs',
];

export function mapNemoRlLine(
  record: unknown,
  where: { file: string; line: number; split?: 'train' | 'eval'; step?: number },
): Mapped {
  try {
    const o = asObject(record, 'the line');
    const step = where.step ?? stepOfFile(where.file);
    if (step === undefined) throw new RecordError(`no step in the file name "${where.file}"`);
    const split = where.split ?? (/(^|\/)val_data_step\d+\.jsonl$/.test(where.file) ? 'eval' : 'train');
    if (o.rewards === undefined) throw new RecordError('field "rewards" is missing');
    // A batch slice: every per-sample column is a list with one entry per sample (one, as NeMo-RL writes it).
    const batched = Array.isArray(o.rewards);
    const n = batched ? (o.rewards as unknown[]).length : 1;
    if (n === 0) throw new RecordError('field "rewards" is empty');
    const at = (key: string, j: number): unknown => {
      const v = o[key];
      if (!batched || v === undefined || v === null) return v;
      if (!Array.isArray(v) || v.length !== n)
        throw new RecordError(`field "${key}" is not a list of ${n} per-sample entries`);
      return v[j];
    };
    const perSample = Object.keys(o).filter((k) => k !== 'idx' && Array.isArray(o[k]) && o[k].length === n);
    const trajectories = Array.from({ length: n }, (_, j): ForeignTrajectory => {
      const reward = numeric(at('rewards', j));
      if (reward === undefined) throw new RecordError('field "rewards" is not a number per sample');
      const { messages, promptMessages } = conversation(at('content', j), at('token_loss_mask', j));
      const tokens = tokensOf((key) => at(key, j));
      const prompt = JSON.stringify(messages.slice(0, promptMessages).map((m) => m.content));
      // Without token ids the token columns map to nothing: they stay in metadata as written.
      const metadata: Json = rest(o, tokens ? SAMPLE_USED : SAMPLE_USED.slice(0, 2));
      // The sample's own entry of a batch column; the rest (`idx`) as written.
      if (batched) for (const k of perSample.filter((k) => k in metadata)) metadata[k] = (o[k] as unknown[])[j];
      return {
        id: n === 1 ? `${where.file}:${where.line}` : `${where.file}:${where.line}/${j}`,
        step,
        split,
        groupId: `prompt:${textKey(prompt)}`,
        messages,
        promptMessages,
        reward,
        ...(tokens ? { tokens } : {}),
        metadata,
        source: { file: where.file, line: where.line },
      };
    });
    return { ok: true, trajectories };
  } catch (e) {
    return { ok: false, problem: problem(where.file, where.line, e) };
  }
}

function stepOfFile(file: string): number | undefined {
  const m = /(train|val)_data_step(\d+)\.jsonl$/.exec(file);
  return m ? Number(m[2]) : undefined;
}

/** The sample's messages: role dicts as they are (val), or texts given roles by the GRPO log's shape (train). */
function conversation(content: unknown, lossMask: unknown): { messages: ForeignMessage[]; promptMessages: number } {
  if (!Array.isArray(content)) throw new RecordError('field "content" is not a list of messages');
  if (content.every((c) => typeof c === 'string')) return fromTexts(content as string[], lossMask);
  const messages = content.map((c, i) => chatMessage(c, `content[${i}]`, { environment: 'tool' }).message);
  const first = messages.findIndex((m) => m.role === 'assistant');
  return { messages, promptMessages: first < 0 ? messages.length : first };
}

function fromTexts(texts: string[], lossMask: unknown): { messages: ForeignMessage[]; promptMessages: number } {
  // Validated as a token column in tokensOf; here only its runs count.
  const mask = Array.isArray(lossMask) ? lossMask.map((m) => (m ? 1 : 0)) : undefined;
  const turns = mask ? mask.filter((m, i) => m === 1 && mask[i - 1] !== 1).length : 1;
  const prompt = Math.max(1, texts.length - 2 * turns);
  const messages = texts.map((content, i): ForeignMessage => {
    if (i < prompt) return { role: i === prompt - 1 ? 'user' : i === 0 ? 'system' : 'user', content };
    return { role: (i - prompt) % 2 === 0 ? 'assistant' : 'tool', content };
  });
  return { messages, promptMessages: Math.min(prompt, texts.length) };
}

/**
 * The sample's tokens, cut to its length (`input_lengths`; the batch pads to its longest), split where the loss
 * mask starts: the rollout engine's logprobs, the trainer's (`prev_logprobs`), per-token advantages.
 */
function tokensOf(at: (key: string) => unknown): ForeignTokens | undefined {
  const list = (key: string): number[] | undefined => {
    const v = at(key);
    if (v === undefined || v === null) return undefined;
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'number' || typeof x === 'boolean'))
      throw new RecordError(`field "${key}" is not a list of numbers per sample`);
    return v.map(Number);
  };
  const all = list('token_ids');
  if (!all) return undefined;
  const length = numeric(at('input_lengths')) ?? all.length;
  const cut = (key: string) => {
    const v = list(key);
    if (v && v.length < length) throw new RecordError(`field "${key}" has ${v.length} entries for ${length} tokens`);
    return v?.slice(0, length);
  };
  const mask = cut('token_loss_mask');
  const rolloutLogprobs = cut('generation_logprobs');
  const trainerLogprobs = cut('prev_logprobs');
  const advantages = cut('advantages');
  return splitAtCompletion({
    ids: all.slice(0, length),
    ...(mask ? { mask: mask.map((m) => (m ? 1 : 0)) } : {}),
    ...(rolloutLogprobs ? { rolloutLogprobs } : {}),
    ...(trainerLogprobs ? { trainerLogprobs } : {}),
    ...(advantages ? { advantages } : {}),
  });
}
