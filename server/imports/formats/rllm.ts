/**
 * rLLM's episode logs (rllm/utils/episode_logger.py EpisodeLogger.log_episode of rllm-org/rllm): one JSON document
 * per episode, `episodes/{mode}_step_{step}_epoch_{epoch}/episode_hash{task_hash}_id{episode_id}.json`, beside a
 * `batch_summary.json` that is no episode. The document: `training_step`, `epoch`, `episode_id` (`{task_id}:{rollout
 * index}`), `session_id`, `task`, `task_hash`, `is_correct`, `termination_reason`, `metrics`, `metadata`, `timing`
 * and `trajectories[]` (one per agent of the workflow), each `{name, uid, reward, num_steps, timing, steps[]}`, a step
 * `{observation, thought, action, reward, done, model_response, chat_completions, timing}` where `chat_completions`
 * is the OpenAI-style conversation of that model call. No token ids are logged.
 *
 * A trajectory's messages are its steps' conversations merged: each step adds what follows the part it shares with
 * the one before (all of it but the new turn, when the agent keeps the history). The group is rLLM's own for the
 * advantage, `{task_id}:{trajectory name}`. The reward is the trajectory's; where the workflow left it unset, the last
 * step's, which is what rLLM's trainer broadcasts. Step rewards are kept as `step_{i}` components. Pure.
 */
import type { ForeignMessage, ForeignTrajectory, Mapped } from '../../../contracts/foreign.ts';
import { asObject, chatMessage, type Json, numeric, optNum, problem, RecordError, rest, str } from './common.ts';

export function mapRllmEpisode(doc: unknown, where: { file: string; split?: 'train' | 'eval'; step?: number }): Mapped {
  try {
    const o = asObject(doc, 'the document');
    const episodeId = str(o, 'episode_id');
    const dir = /(^|\/)([^/]+)_step_(\d+)_epoch_\d+\/[^/]*$/.exec(where.file);
    const step = optNum(o, 'training_step') ?? where.step ?? (dir ? Number(dir[3]) : undefined);
    if (step === undefined) throw new RecordError('field "training_step" is missing');
    const split = where.split ?? (dir && dir[2] !== 'train' ? 'eval' : 'train');
    const all = o.trajectories;
    if (!Array.isArray(all)) throw new RecordError('field "trajectories" is not a list');
    if (all.length === 0) throw new RecordError('field "trajectories" is empty');
    const taskId = episodeId.split(':')[0];
    const episode = rest(o, ['episode_id', 'training_step', 'trajectories']);
    const trajectories = all.map((t, i): ForeignTrajectory => {
      const what = `trajectories[${i}]`;
      const traj = asObject(t, what);
      const name = typeof traj.name === 'string' ? traj.name : 'default_traj_name';
      if (!Array.isArray(traj.steps)) throw new RecordError(`${what}.steps is not a list`);
      const steps = traj.steps.map((s, j) => asObject(s, `${what}.steps[${j}]`));
      const { messages, extras } = merged(steps, what);
      const first = messages.findIndex((m) => m.role === 'assistant');
      const rewards: Record<string, number> = {};
      for (const [j, s] of steps.entries()) {
        const r = numeric(s.reward);
        if (r !== undefined) rewards[`step_${j}`] = r;
      }
      const own = optNum(traj, 'reward');
      const reward = own ?? (steps.length ? numeric(steps.at(-1)!.reward) : undefined);
      const fallbackId = all.length === 1 ? episodeId : `${episodeId}/${i}`;
      return {
        id: typeof traj.uid === 'string' && traj.uid ? traj.uid : fallbackId,
        step,
        split,
        groupId: `${taskId}:${name}`,
        messages,
        promptMessages: first < 0 ? messages.length : first,
        ...(reward === undefined ? {} : { reward }),
        ...(Object.keys(rewards).length ? { rewards } : {}),
        metadata: {
          ...rest(traj, ['uid', 'reward', 'steps']),
          steps: steps.map((s) => rest(s, ['chat_completions', 'reward'])),
          ...(Object.keys(extras).length ? { messageFields: extras } : {}),
          episode,
        },
        source: { file: where.file, line: 0 },
      };
    });
    return { ok: true, trajectories };
  } catch (e) {
    return { ok: false, problem: problem(where.file, 0, e) };
  }
}

/** The steps' conversations as one: each adds the messages after the longest prefix it shares with the last. */
function merged(steps: Json[], what: string): { messages: ForeignMessage[]; extras: Json } {
  const messages: ForeignMessage[] = [];
  const extras: Json = {};
  let previous: unknown[] | undefined;
  for (const [j, s] of steps.entries()) {
    const cc = s.chat_completions;
    if (cc === undefined || cc === null) continue;
    if (!Array.isArray(cc)) throw new RecordError(`${what}.steps[${j}].chat_completions is not a list`);
    let shared = 0;
    while (previous && shared < Math.min(previous.length, cc.length)) {
      if (JSON.stringify(previous[shared]) !== JSON.stringify(cc[shared])) break;
      shared++;
    }
    for (let k = shared; k < cc.length; k++) {
      const { message, extra } = chatMessage(cc[k], `${what}.steps[${j}].chat_completions[${k}]`);
      if (Object.keys(extra).length) extras[messages.length] = extra;
      messages.push(message);
    }
    previous = cc;
  }
  return { messages, extras };
}
