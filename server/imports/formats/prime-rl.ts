/**
 * prime-rl's files (src/prime_rl/monitors/file.py, trainer/rl/token_export.py of PrimeIntellect-ai/prime-rl):
 *
 * - `rollouts/step_N/{train,eval}/{all,effective}/traces.jsonl`: one verifiers v1 Episode per line
 *   (`Episode.to_record()`, verifiers/v1/episode.py, trace.py, graph.py: None fields and raw tensors left out):
 *   `id`, `env`, `task`, `group.id`, `run.work.{type, step, policy.{start, end}}`, `ok`, `errors`, and `traces[]`,
 *   each with its own `id`, `rewards{name: {score, weight} | null}`, `metrics`, `info`, `calls`, `tools` and a message
 *   graph `nodes[]` of `{parent, message, sampled, timestamp, token_ids, mask, logprobs, advantages?}`. A node's
 *   `token_ids`/`mask` are the tokens it adds to the sequence (its template scaffold too); `logprobs` and `advantages`
 *   cover only its sampled tokens (mask true). A root-to-leaf path is a branch: one training sample.
 * - `token_exports/step_N/rank_R.jsonl` (trainer.enable_token_export): one packed training sequence per line.
 * - `metrics.jsonl`: one `{step, time, ...}` row per logged step.
 *
 * The trajectory's reward is verifiers' `Trace.reward`, what prime-rl's advantages are computed from: the sum of
 * score × weight over the rewards that were scored; the components keep their unweighted scores. Pure.
 */
import type { ForeignMessage, ForeignProblem, ForeignTokens, Mapped } from '../../../contracts/foreign.ts';
import {
  asObject,
  chatMessage,
  field,
  flags,
  type Json,
  num,
  numbers,
  numeric,
  optNum,
  problem,
  RecordError,
  rest,
  splitAtCompletion,
  stepNum,
  str,
} from './common.ts';

type Where = { file: string; line: number; split?: 'train' | 'eval'; step?: number };

interface Node {
  parent?: number;
  message: ForeignMessage;
  sampled: boolean;
  ids: number[];
  mask: number[];
  logprobs: number[];
  advantages?: number[];
  extra: Json;
}

const NODE_USED = ['parent', 'message', 'sampled', 'timestamp', 'token_ids', 'mask', 'logprobs', 'advantages'];

/** One episode line: a trajectory per trace, or per branch of a trace that forked (compaction, subagents). */
export function mapPrimeRlLine(record: unknown, where: Where): Mapped {
  try {
    const o = asObject(record, 'the line');
    const episodeId = str(o, 'id');
    const work = field(o, 'run.work');
    const workStep = numeric(field(o, 'run.work.step'));
    if (work !== undefined && workStep === undefined) throw new RecordError('field "run.work.step" is not a number');
    // A standalone eval run (`run.type` eval) has no work: the step is the folder's.
    const step = workStep ?? where.step ?? stepOfPath(where.file);
    if (step === undefined) throw new RecordError('field "run.work.step" is missing');
    const workType = field(o, 'run.work.type');
    const split = workType === 'eval' || workType === 'train' ? workType : (where.split ?? 'train');
    const policy = policyOf(o);
    const groupId = groupOf(o, episodeId);
    const traces = o.traces;
    if (!Array.isArray(traces)) throw new RecordError('field "traces" is not a list');
    // `all` keeps failed episodes that produced no trace: nothing to import, so say why.
    if (traces.length === 0) throw new RecordError(`field "traces" is empty${failure(o)}`);
    const episode = rest(o, ['id', 'group', 'traces']);
    const trajectories = traces.flatMap((t, i) => {
      const trace = asObject(t, `traces[${i}]`);
      const traceId = typeof trace.id === 'string' ? trace.id : traces.length === 1 ? episodeId : `${episodeId}/${i}`;
      return traceTrajectories(trace, `traces[${i}]`).map((b, k, all) => ({
        // The trace's own id: `effective` regroups an episode's traces, so a position would change between files.
        id: all.length === 1 ? traceId : `${traceId}/b${k}`,
        step,
        split,
        groupId,
        messages: b.messages,
        promptMessages: b.promptMessages,
        ...b.scored,
        ...(b.tokens ? { tokens: b.tokens } : {}),
        ...(policy ? { policy } : {}),
        metadata: { ...b.metadata, episode },
        source: { file: where.file, line: where.line },
      }));
    });
    return { ok: true, trajectories };
  } catch (e) {
    return { ok: false, problem: problem(where.file, where.line, e) };
  }
}

function stepOfPath(file: string): number | undefined {
  const m = /(^|\/)step_(\d+)\//.exec(file);
  return m ? Number(m[2]) : undefined;
}

function policyOf(o: Json): { start?: number; end?: number } | undefined {
  const p = field(o, 'run.work.policy');
  if (p === undefined || p === null) return undefined;
  const span = asObject(p, 'field "run.work.policy"');
  const start = optNum(span, 'start');
  const end = optNum(span, 'end');
  return { ...(start === undefined ? {} : { start }), ...(end === undefined ? {} : { end }) };
}

/** The orchestrator's group; an ungrouped episode (a standalone eval) groups by its task. */
function groupOf(o: Json, episodeId: string): string {
  const g = field(o, 'group.id');
  if (typeof g === 'string' || typeof g === 'number') return String(g);
  const key = field(o, 'task.key') ?? field(o, 'task.hash');
  return typeof key === 'string' ? `task:${key}` : episodeId;
}

function failure(o: Json): string {
  const errors = Array.isArray(o.errors) ? o.errors : [];
  const last = errors.at(-1) as Json | undefined;
  if (!last || typeof last !== 'object') return '';
  return ` (the episode failed: ${String(last.type ?? 'error')}: ${String(last.message ?? '')})`;
}

interface BranchOut {
  messages: ForeignMessage[];
  promptMessages: number;
  scored: { reward?: number; rewards?: Record<string, number>; advantage?: number };
  tokens?: ForeignTokens;
  metadata: Json;
}

function traceTrajectories(trace: Json, what: string): BranchOut[] {
  if (!Array.isArray(trace.nodes)) throw new RecordError(`${what}.nodes is not a list`);
  const nodes = trace.nodes.map((n, i) => nodeOf(n, `${what}.nodes[${i}]`, trace.nodes as unknown[]));
  const scored = scoresOf(trace, what);
  const info = trace.info && typeof trace.info === 'object' ? rest(trace.info as Json, ['advantage']) : undefined;
  const metadata: Json = {
    ...rest(trace, ['id', 'nodes', 'rewards', 'info']),
    ...(info && Object.keys(info).length ? { info } : {}),
    ...(scored.weighted ? { rewards: trace.rewards } : {}),
  };
  const trained = new Set<number>();
  return branchesOf(nodes, what).map((path) => {
    const on = path.map((i) => nodes[i]!);
    const first = on.findIndex((n) => n.sampled);
    const extras = on.map((n) => n.extra);
    return {
      messages: on.map((n) => n.message),
      promptMessages: first < 0 ? on.length : first,
      scored: scored.fields,
      ...tokensOf(path, nodes, trained),
      metadata: { ...metadata, ...(extras.some((x) => Object.keys(x).length) ? { nodes: extras } : {}) },
    };
  });
}

function nodeOf(v: unknown, what: string, all: unknown[]): Node {
  const o = asObject(v, what);
  const { message, extra } = chatMessage(o.message, `${what}.message`);
  const parent = o.parent === undefined || o.parent === null ? undefined : num(o, 'parent');
  if (parent !== undefined && (!Number.isInteger(parent) || parent < 0 || parent >= all.length))
    throw new RecordError(`${what}.parent ${parent} is no node of the trace`);
  const ids = numbers(o, 'token_ids') ?? [];
  const mask = flags(o, 'mask') ?? [];
  if (mask.length !== ids.length)
    throw new RecordError(`${what}.mask has ${mask.length} entries for ${ids.length} token ids`);
  const advantages = numbers(o, 'advantages');
  const seconds = numeric(o.timestamp);
  return {
    ...(parent === undefined ? {} : { parent }),
    // verifiers stamps nodes in epoch seconds; messages keep epoch ms.
    message: seconds === undefined ? message : { ...message, time: Math.round(seconds * 1000) },
    sampled: o.sampled === true,
    ids,
    mask,
    logprobs: numbers(o, 'logprobs') ?? [],
    ...(advantages ? { advantages } : {}),
    extra: {
      ...rest(o, NODE_USED),
      ...(Object.keys(extra).length ? { message: extra } : {}),
    },
  };
}

/** Root-to-leaf paths, one per node no other node continues, in node order (verifiers' `graph.leaves`). */
function branchesOf(nodes: Node[], what: string): number[][] {
  if (nodes.length === 0) return [[]];
  const parents = new Set(nodes.flatMap((n) => (n.parent === undefined ? [] : [n.parent])));
  return nodes.flatMap((_, leaf) => {
    if (parents.has(leaf)) return [];
    const path: number[] = [];
    for (let i: number | undefined = leaf; i !== undefined; i = nodes[i]!.parent) {
      if (path.length > nodes.length) throw new RecordError(`${what}.nodes: the parents form a cycle`);
      path.push(i);
    }
    return [path.reverse()];
  });
}

/**
 * The branch's tokens as prime-rl trains on it: node spans concatenated; a sampled node an earlier branch already
 * trained on is context here (mask 0). Logprobs and advantages, kept per sampled token, are spread onto the
 * sequence (0 elsewhere, as verifiers' `Branch.spread`), and only where every sampled node has them.
 */
function tokensOf(path: number[], nodes: Node[], trained: Set<number>): { tokens?: ForeignTokens } {
  const on = path.map((i) => nodes[i]!);
  if (on.every((n) => n.ids.length === 0)) return {};
  const ids: number[] = [];
  const mask: number[] = [];
  for (const [k, n] of on.entries()) {
    const i = path[k]!;
    const again = n.sampled && trained.has(i);
    ids.push(...n.ids);
    mask.push(...(again ? n.mask.map(() => 0) : n.mask));
    if (n.sampled && n.mask.includes(1)) trained.add(i);
  }
  const spread = (values: (n: Node) => number[] | undefined): number[] | undefined => {
    const out: number[] = [];
    for (const n of on) {
      const sampled = n.mask.filter((m) => m === 1).length;
      const v = values(n);
      if (sampled > 0 && v?.length !== sampled) return undefined;
      let j = 0;
      for (const m of n.mask) out.push(m === 1 ? v![j++]! : 0);
    }
    return out;
  };
  const rolloutLogprobs = spread((n) => n.logprobs);
  const advantages = spread((n) => n.advantages);
  return {
    tokens: splitAtCompletion({
      ids,
      mask,
      ...(rolloutLogprobs ? { rolloutLogprobs } : {}),
      ...(advantages ? { advantages } : {}),
    }),
  };
}

/** verifiers' `Trace.reward` (Σ score × weight over scored rewards); a reward that was never scored is absent. */
function scoresOf(
  trace: Json,
  what: string,
): { fields: { reward?: number; rewards?: Record<string, number>; advantage?: number }; weighted: boolean } {
  const rewards: Record<string, number> = {};
  let total = 0;
  let weighted = false;
  if (trace.rewards !== undefined && trace.rewards !== null) {
    for (const [name, v] of Object.entries(asObject(trace.rewards, `${what}.rewards`))) {
      if (v === null) continue;
      const r = asObject(v, `${what}.rewards.${name}`);
      const score = num(r, 'score');
      const weight = optNum(r, 'weight') ?? 1;
      if (weight !== 1) weighted = true;
      rewards[name] = score;
      total += score * weight;
    }
  }
  // prime-rl writes the trace's mean token advantage into `info.advantage` for the trained cohort.
  const advantage = numeric(field(trace, 'info.advantage'));
  const scored = Object.keys(rewards).length > 0;
  return {
    fields: {
      ...(scored ? { reward: total, rewards } : {}),
      ...(advantage === undefined ? {} : { advantage }),
    },
    weighted,
  };
}

export type TokenExportMapped =
  | {
      ok: true;
      step: number;
      rank?: number;
      /** The sequence's index in its rank file (`export_sequence_idx`). */
      sequence?: number;
      envName?: string;
      tokens: ForeignTokens;
      /** The record's other columns, as written (mismatch KL, importance ratios, masking, loss weights, ...). */
      metadata: Json;
    }
  | { ok: false; problem: ForeignProblem };

const EXPORT_COLUMNS: [string, keyof ForeignTokens][] = [
  ['inference_logprobs', 'rolloutLogprobs'],
  ['trainer_logprobs', 'trainerLogprobs'],
  ['entropy', 'entropies'],
  ['advantages', 'advantages'],
];

/**
 * A token export line (`token_exports/step_N/rank_R.jsonl`, prime-rl's TokenExporter): one training sample as the
 * trainer saw it, `token_ids`, `loss_mask` and per-token `advantages`, `inference_logprobs`, `trainer_logprobs`,
 * `entropy`, with `step`, `rank`, `micro_step`, `micro_sequence_idx`, `export_sequence_idx`, `env_name`. prime-rl
 * writes no episode or trace id into it: it joins an episode only by its token sequence (a branch's ids), in the
 * same step. A non-finite value is written as null: a column holding one stays out of the tokens (in metadata).
 */
export function mapPrimeRlTokenExportLine(record: unknown, where: { file: string; line: number }): TokenExportMapped {
  try {
    const o = asObject(record, 'the line');
    const step = stepNum(o, 'step');
    const ids = numbers(o, 'token_ids');
    if (!ids) throw new RecordError('field "token_ids" is missing');
    const mask = flags(o, 'loss_mask');
    if (mask && mask.length !== ids.length)
      throw new RecordError(`field "loss_mask" has ${mask.length} entries for ${ids.length} token ids`);
    const tokens: ForeignTokens = { ids, ...(mask ? { mask } : {}) };
    const used = ['step', 'rank', 'export_sequence_idx', 'env_name', 'token_ids', 'loss_mask'];
    for (const [column, key] of EXPORT_COLUMNS) {
      const v = o[column];
      if (v === undefined || v === null) continue;
      if (!Array.isArray(v) || v.some((x) => x !== null && typeof x !== 'number'))
        throw new RecordError(`field "${column}" is not a list of numbers`);
      if (v.length !== ids.length)
        throw new RecordError(`field "${column}" has ${v.length} entries for ${ids.length} token ids`);
      if (v.includes(null)) continue;
      (tokens as unknown as Record<string, number[]>)[key] = v as number[];
      used.push(column);
    }
    const rank = optNum(o, 'rank');
    const sequence = optNum(o, 'export_sequence_idx');
    return {
      ok: true,
      step,
      ...(rank === undefined ? {} : { rank }),
      ...(sequence === undefined ? {} : { sequence }),
      ...(typeof o.env_name === 'string' ? { envName: o.env_name } : {}),
      tokens: splitAtCompletion(tokens),
      metadata: rest(o, used),
    };
  } catch (e) {
    return { ok: false, problem: problem(where.file, where.line, e) };
  }
}

export type MetricsMapped =
  | { ok: true; step: number; time?: number; values: Record<string, number>; metadata: Json }
  | { ok: false; problem: ForeignProblem };

/**
 * A `metrics.jsonl` row (FileMonitor.log_metrics): `step`, `time` (epoch seconds) and the logged values by name
 * (`perf/throughput`, `time/step`, ...), non-finite ones already dropped by prime-rl. Values that are not numbers
 * are kept in metadata.
 */
export function mapPrimeRlMetricsLine(record: unknown, where: { file: string; line: number }): MetricsMapped {
  try {
    const o = asObject(record, 'the line');
    const step = stepNum(o, 'step');
    const time = optNum(o, 'time');
    const values: Record<string, number> = {};
    const metadata: Json = {};
    for (const [k, v] of Object.entries(rest(o, ['step', 'time']))) {
      const n = numeric(v);
      if (n === undefined) metadata[k] = v;
      else values[k] = n;
    }
    return { ok: true, step, ...(time === undefined ? {} : { time }), values, metadata };
  } catch (e) {
    return { ok: false, problem: problem(where.file, where.line, e) };
  }
}
