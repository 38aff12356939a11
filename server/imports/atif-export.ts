/**
 * Any stored trajectory (native or imported) as Harbor's ATIF v1.4 document: system/user/agent steps with their tool
 * calls and observations, token ids and logprobs per agent step where the turns split them, and Toolsmith's own keys
 * under `extra` (step, split, group, rewards, advantage, the whole token record, metadata) so that importing the
 * export gives back the same trajectories (server/imports/formats/atif.ts reads them). Pure.
 */
import type { ForeignMessage, ForeignTokens, ForeignTrajectory } from '../../contracts/foreign.ts';
import type { StoredTrajectoryContent, TokenRecord } from '../../contracts/trajectory.ts';
import { foreignTokensOf, type ImportedContent, importedTrajectory } from './to-store.ts';

export const ATIF_VERSION = 'ATIF-v1.4';

export interface StoredRow {
  id: string;
  step: number;
  split: string;
  groupId: string;
  reward: number;
  answer: string | null;
  content: StoredTrajectoryContent & { imported?: ImportedContent };
}

/** A stored trajectory in the shared foreign shape: an imported one as it came, a native one from its turns. */
export function foreignOfStored(row: StoredRow, tokens: TokenRecord | null): ForeignTrajectory {
  if (row.content.imported) return importedTrajectory(row.content.imported, tokens);
  const c = row.content;
  const messages: ForeignMessage[] = [{ role: 'user', content: c.prompt }];
  for (const turn of c.turns) {
    const call = turn.parse.kind === 'call' ? turn.parse : null;
    messages.push({
      role: 'assistant',
      content: turn.text,
      ...(call
        ? { toolCalls: [{ id: `call_${turn.index}`, name: call.name, arguments: JSON.stringify(call.arguments) }] }
        : {}),
      time: turn.genStartedAt,
    });
    if (turn.tool)
      messages.push({
        role: 'tool',
        content: turn.tool.text,
        ...(call ? { toolCallId: `call_${turn.index}` } : {}),
        time: turn.tool.finishedAt,
      });
  }
  const k = tokens ? foreignTokensOf(tokens) : undefined;
  return {
    id: row.id,
    step: row.step,
    split: row.split === 'eval' ? 'eval' : 'train',
    groupId: row.groupId,
    messages,
    promptMessages: 1,
    reward: row.reward,
    ...(tokens?.advantage !== null && tokens?.advantage !== undefined ? { advantage: tokens.advantage } : {}),
    ...(row.answer !== null ? { answer: row.answer } : {}),
    ...(k ? { tokens: k } : {}),
    metadata: { finishReason: c.finishReason, verdict: c.verdict },
    source: { file: '', line: 0 },
  };
}

/** JSON has no NaN: a float array's "no value" travels as null. */
const wire = (a: number[] | undefined) => a?.map((x) => (Number.isNaN(x) ? null : x));

/** The model tokens of each turn, where the mask splits them into as many runs as there are agent steps. */
function perStepTokens(k: ForeignTokens | undefined, agentSteps: number) {
  if (!k) return null;
  const mask = k.mask ?? k.ids.map(() => 1);
  const runs: { ids: number[]; logprobs: number[] }[] = [];
  mask.forEach((m, i) => {
    if (m !== 1) return;
    if (i === 0 || mask[i - 1] !== 1) runs.push({ ids: [], logprobs: [] });
    runs.at(-1)!.ids.push(k.ids[i]!);
    runs.at(-1)!.logprobs.push(k.rolloutLogprobs?.[i] ?? Number.NaN);
  });
  return runs.length === agentSteps ? runs : null;
}

export function toAtif(t: ForeignTrajectory, agent: { name: string; version: string }): Record<string, unknown> {
  const steps: Record<string, unknown>[] = [];
  const at = (time?: number) => (time !== undefined && time > 0 ? { timestamp: new Date(time).toISOString() } : {});
  let lastAgent: Record<string, unknown> | null = null;
  t.messages.forEach((m, i) => {
    if (m.role === 'assistant') {
      lastAgent = {
        step_id: steps.length + 1,
        ...at(m.time),
        source: 'agent',
        message: m.content,
        ...(m.toolCalls?.length
          ? {
              tool_calls: m.toolCalls.map((c, j) => ({
                tool_call_id: c.id ?? `call_${i}_${j}`,
                function_name: c.name,
                arguments: parsedArguments(c.arguments),
              })),
            }
          : {}),
      };
      steps.push(lastAgent);
      return;
    }
    if (m.role === 'tool' && lastAgent) {
      const obs = (lastAgent.observation ??= { results: [] }) as { results: Record<string, unknown>[] };
      obs.results.push({ ...(m.toolCallId ? { source_call_id: m.toolCallId } : {}), content: m.content });
      return;
    }
    lastAgent = null;
    steps.push({
      step_id: steps.length + 1,
      ...at(m.time),
      source: m.role === 'system' ? 'system' : 'user',
      message: m.content,
    });
  });
  const agentSteps = steps.filter((s) => s.source === 'agent');
  const split = perStepTokens(t.tokens, agentSteps.length);
  agentSteps.forEach((s, i) => {
    if (!split) return;
    s.metrics = {
      ...(i === 0 && t.tokens?.promptIds ? { prompt_token_ids: t.tokens.promptIds } : {}),
      completion_token_ids: split[i]!.ids,
      logprobs: wire(split[i]!.logprobs),
    };
  });
  const k = t.tokens;
  return {
    schema_version: ATIF_VERSION,
    session_id: t.id,
    agent,
    steps,
    extra: {
      trajectory_id: t.id,
      step: t.step,
      split: t.split,
      group_id: t.groupId,
      ...(t.reward !== undefined ? { reward: t.reward } : {}),
      ...(t.rewards ? { rewards: t.rewards } : {}),
      ...(t.advantage !== undefined ? { advantage: t.advantage } : {}),
      ...(t.answer !== undefined ? { answer: t.answer } : {}),
      ...(t.policy ? { policy: t.policy } : {}),
      ...(k
        ? {
            tokens: {
              ...(k.promptIds ? { prompt_ids: k.promptIds } : {}),
              ids: k.ids,
              ...(k.mask ? { mask: k.mask } : {}),
              ...(k.rolloutLogprobs ? { rollout_logprobs: wire(k.rolloutLogprobs) } : {}),
              ...(k.trainerLogprobs ? { trainer_logprobs: wire(k.trainerLogprobs) } : {}),
              ...(k.entropies ? { entropies: wire(k.entropies) } : {}),
              ...(k.advantages ? { advantages: wire(k.advantages) } : {}),
            },
          }
        : {}),
      metadata: t.metadata,
    },
  };
}

/** ATIF's arguments are an object; a call whose arguments are not a JSON object keeps them as text. */
function parsedArguments(args: string): unknown {
  try {
    const v = JSON.parse(args) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? v : args;
  } catch {
    return args;
  }
}
