/**
 * Harbor's Agent Trajectory Interchange Format (ATIF v1.0–v1.4, laude-institute/harbor's
 * docs/rfcs/0001-trajectory-format.md): one JSON document per trajectory, `schema_version`, `session_id`, `agent`,
 * `steps[]` with `source` (system | user | agent), `message`, `tool_calls[{tool_call_id, function_name, arguments}]`,
 * `observation.results[{source_call_id, content}]` and `metrics{prompt_token_ids, completion_token_ids, logprobs}`
 * (v1.3/v1.4), `extra`. ATIF has no reward field: the root `extra.reward`, or the reward the caller read from Harbor's
 * `verifier/reward.txt` beside `agent/trajectory.json`. Step and group come from `extra.step` and `extra.group_id`
 * when a producer sets them (Toolsmith's export does), else step 0 and the session. Pure.
 */
import type { ForeignMessage, ForeignTokens, Mapped } from '../../../contracts/foreign.ts';
import { asObject, type Json, numbers, numeric, problem, RecordError, rest, str } from './common.ts';

export function mapAtifDocument(
  doc: unknown,
  where: { file: string; reward?: number; split?: 'train' | 'eval' },
): Mapped {
  try {
    const o = asObject(doc, 'the document');
    const version = str(o, 'schema_version');
    if (!/^ATIF-v1\.\d+$/.test(version)) throw new RecordError(`schema_version "${version}" is not ATIF v1`);
    const session = str(o, 'session_id');
    if (!Array.isArray(o.steps)) throw new RecordError('field "steps" is not a list');
    const extra = o.extra === undefined ? {} : asObject(o.extra, 'field "extra"');
    const { messages, prompt, tokens: stepTokens } = readSteps(o.steps);
    // Toolsmith's export keeps the whole token record under extra.tokens (tool tokens and both logprob sides, which
    // ATIF's per-step metrics have no place for): where it is there, it is the record.
    const own = extra.tokens === undefined ? undefined : ownTokens(asObject(extra.tokens, 'field "extra.tokens"'));
    const tokens = own ? own : stepTokens;
    const reward = where.reward ?? numeric(extra.reward);
    const stepNo = numeric(extra.step);
    const rewards = extraRewards(extra);
    const advantage = numeric(extra.advantage);
    const policy = extraPolicy(extra);
    return {
      ok: true,
      trajectories: [
        {
          id: typeof extra.trajectory_id === 'string' ? extra.trajectory_id : session,
          step: stepNo ?? 0,
          split: extra.split === 'eval' ? 'eval' : (where.split ?? 'train'),
          groupId: typeof extra.group_id === 'string' ? extra.group_id : session,
          messages,
          promptMessages: prompt,
          ...(reward === undefined ? {} : { reward }),
          ...(rewards && Object.keys(rewards).length ? { rewards } : {}),
          ...(advantage === undefined ? {} : { advantage }),
          ...(tokens ? { tokens } : {}),
          ...(typeof extra.answer === 'string' ? { answer: extra.answer } : {}),
          ...(policy ? { policy } : {}),
          metadata:
            extra.metadata && typeof extra.metadata === 'object' && !Array.isArray(extra.metadata)
              ? (extra.metadata as Json)
              : {
                  ...rest(o, ['schema_version', 'session_id', 'steps', 'extra']),
                  ...(Object.keys(rest(extra, EXTRA_USED)).length ? { extra: rest(extra, EXTRA_USED) } : {}),
                  schema_version: version,
                },
          source: { file: where.file, line: 0 },
        },
      ],
    };
  } catch (e) {
    return { ok: false, problem: problem(where.file, 0, e) };
  }
}

/**
 * The messages of ATIF steps, where the prompt ends (the first agent step), and their tokens when every agent step
 * has them.
 */
function readSteps(steps: unknown[]): {
  messages: ForeignMessage[];
  prompt: number;
  tokens: ForeignTokens | undefined;
} {
  const messages: ForeignMessage[] = [];
  const ids: number[] = [];
  const logprobs: number[] = [];
  let promptIds: number[] | undefined;
  let tokensComplete = true;
  let logprobsComplete = true;
  let prompt = -1;
  steps.forEach((s, i) => {
    const step = asObject(s, `steps[${i}]`);
    const source = str(step, 'source');
    const content = typeof step.message === 'string' ? step.message : '';
    const time = typeof step.timestamp === 'string' ? Date.parse(step.timestamp) : Number.NaN;
    const at = Number.isFinite(time) ? { time } : {};
    if (source === 'system' || source === 'user') {
      messages.push({ role: source, content, ...at });
      return;
    }
    if (source !== 'agent') throw new RecordError(`steps[${i}].source "${source}" is not system, user or agent`);
    if (prompt < 0) prompt = messages.length;
    const calls = Array.isArray(step.tool_calls)
      ? step.tool_calls.map((c, j) => {
          const call = asObject(c, `steps[${i}].tool_calls[${j}]`);
          return {
            id: str(call, 'tool_call_id'),
            name: str(call, 'function_name'),
            arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {}),
          };
        })
      : [];
    messages.push({ role: 'assistant', content, ...(calls.length ? { toolCalls: calls } : {}), ...at });
    const metrics = step.metrics === undefined ? undefined : asObject(step.metrics, `steps[${i}].metrics`);
    const completion = metrics && numbers(metrics, 'completion_token_ids');
    const lp = metrics && numbers(metrics, 'logprobs');
    if (promptIds === undefined && metrics) promptIds = numbers(metrics, 'prompt_token_ids');
    if (completion) ids.push(...completion);
    else tokensComplete = false;
    if (lp && completion && lp.length === completion.length) logprobs.push(...lp);
    else logprobsComplete = false;
    const observation =
      step.observation === undefined ? undefined : asObject(step.observation, `steps[${i}].observation`);
    const results = Array.isArray(observation?.results) ? observation.results : [];
    for (const [j, r] of results.entries()) {
      const result: Json = asObject(r, `steps[${i}].observation.results[${j}]`);
      messages.push({
        role: 'tool',
        content: typeof result.content === 'string' ? result.content : JSON.stringify(result.content ?? ''),
        ...(typeof result.source_call_id === 'string' ? { toolCallId: result.source_call_id } : {}),
      });
    }
  });
  if (prompt < 0) throw new RecordError('no agent step');
  const tokens: ForeignTokens | undefined =
    tokensComplete && ids.length
      ? {
          ...(promptIds ? { promptIds } : {}),
          ids,
          ...(logprobsComplete ? { rolloutLogprobs: logprobs } : {}),
        }
      : undefined;
  return { messages, prompt, tokens };
}

/** `extra.rewards`: its numeric entries. */
function extraRewards(extra: Json): Record<string, number> | undefined {
  return extra.rewards && typeof extra.rewards === 'object'
    ? Object.fromEntries(
        Object.entries(extra.rewards as Json).flatMap(([k, v]) => {
          const n = numeric(v);
          return n === undefined ? [] : [[k, n]];
        }),
      )
    : undefined;
}

/** `extra.policy`: the policy weight versions the trajectory was generated with. */
function extraPolicy(extra: Json): { start?: number; end?: number } | undefined {
  const p = extra.policy && typeof extra.policy === 'object' ? (extra.policy as Json) : undefined;
  return p
    ? {
        ...(numeric(p.start) === undefined ? {} : { start: numeric(p.start) }),
        ...(numeric(p.end) === undefined ? {} : { end: numeric(p.end) }),
      }
    : undefined;
}

const EXTRA_USED = [
  'reward',
  'rewards',
  'step',
  'group_id',
  'trajectory_id',
  'split',
  'advantage',
  'answer',
  'policy',
  'tokens',
  'metadata',
];

/** A list of numbers where null is "no value" (NaN), as Toolsmith's export writes float arrays. */
function floats(o: Json, key: string): number[] | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (!Array.isArray(v) || !v.every((x) => x === null || typeof x === 'number'))
    throw new RecordError(`field "extra.tokens.${key}" is not a list of numbers`);
  return v.map((x) => (x === null ? Number.NaN : (x as number)));
}

/** extra.tokens as Toolsmith's export writes it: ids and the arrays aligned with them. */
function ownTokens(k: Json): ForeignTokens {
  const ids = numbers(k, 'ids');
  if (!ids) throw new RecordError('field "extra.tokens.ids" is missing');
  const aligned = (key: string, a: number[] | undefined) => {
    if (a !== undefined && a.length !== ids.length)
      throw new RecordError(`field "extra.tokens.${key}" has ${a.length} entries for ${ids.length} ids`);
    return a;
  };
  const promptIds = numbers(k, 'prompt_ids');
  const mask = aligned('mask', numbers(k, 'mask'));
  const rolloutLogprobs = aligned('rollout_logprobs', floats(k, 'rollout_logprobs'));
  const trainerLogprobs = aligned('trainer_logprobs', floats(k, 'trainer_logprobs'));
  const entropies = aligned('entropies', floats(k, 'entropies'));
  const advantages = aligned('advantages', floats(k, 'advantages'));
  return {
    ...(promptIds ? { promptIds } : {}),
    ids,
    ...(mask ? { mask } : {}),
    ...(rolloutLogprobs ? { rolloutLogprobs } : {}),
    ...(trainerLogprobs ? { trainerLogprobs } : {}),
    ...(entropies ? { entropies } : {}),
    ...(advantages ? { advantages } : {}),
  };
}
