import type { Database } from '../db/client.ts';
import { insertRows, inTransaction } from '../db/batch.ts';
import { newId } from '../ids.ts';
import type { StoredTrajectoryContent, TokenRecord } from '../../contracts/trajectory.ts';
import type { TrajectoryFilter, TrajectorySort, TrajectorySplitFilter } from '../../contracts/trajectory-query.ts';
import { decodeTokenRecord, encodeTokenRecord, type TokenColumns } from './token-codec.ts';

export interface ToolCallInput {
  turn: number;
  code: string;
  stdin?: string;
  stdout?: string;
  stderr?: string;
  status: string;
  exitCode?: number | null;
  errorType?: string | null;
  queuedAt?: number | null;
  startedAt?: number | null;
  finishedAt?: number | null;
  durationMs?: number | null;
  queueMs?: number | null;
}

export interface TrajectoryInput {
  id?: string;
  runId: string;
  step: number;
  stage: number;
  split?: string;
  problemId?: string | null;
  groupId: string;
  sampleIndex: number;
  reward: number;
  correct?: boolean | null;
  selected?: boolean;
  selectReason?: string | null;
  pErr?: number | null;
  pFormat?: number | null;
  promptTokens?: number;
  responseTokens?: number;
  toolTokens?: number;
  turns?: number;
  toolErrors?: number;
  finishReason: string;
  answer?: string | null;
  content: unknown;
  toolCalls: ToolCallInput[];
  /** The token-level record (a TrajectoryTokens row, written in the same transaction); absent: none stored. */
  tokens?: TokenRecord | null;
}

const T_COLS = [
  'id',
  'runId',
  'step',
  'stage',
  'split',
  'problemId',
  'groupId',
  'sampleIndex',
  'reward',
  'correct',
  'selected',
  'selectReason',
  'pErr',
  'pFormat',
  'promptTokens',
  'responseTokens',
  'toolTokens',
  'turns',
  'toolCalls',
  'toolErrors',
  'finishReason',
  'answer',
  'content',
  'createdAt',
];
const C_COLS = [
  'id',
  'trajectoryId',
  'runId',
  'step',
  'turn',
  'code',
  'stdin',
  'stdout',
  'stderr',
  'status',
  'exitCode',
  'errorType',
  'queuedAt',
  'startedAt',
  'finishedAt',
  'durationMs',
  'queueMs',
];
const K_COLS = [
  'trajectoryId',
  'n',
  'ids',
  'mask',
  'turn',
  'chars',
  'rolloutLogprobs',
  'entropy',
  'trainerLogprobs',
  'weights',
  'clip',
  'advantage',
];

function rowsOf(db: Database, t: TrajectoryInput): { traj: unknown[]; calls: unknown[][]; tokens: unknown[] | null } {
  const id = t.id ?? newId('tr_');
  // Raw SQL needs a dialect's boolean and timestamp: 0/1 and ISO text on SQLite (what Prisma's adapter writes).
  const bool = (b: boolean | null | undefined) =>
    b === null || b === undefined ? null : db.dialect === 'sqlite' ? (b ? 1 : 0) : b;
  const created = db.dialect === 'sqlite' ? new Date().toISOString() : new Date();
  const toolErrors = t.toolErrors ?? t.toolCalls.filter((c) => c.status !== 'ok').length;
  const traj = [
    id,
    t.runId,
    t.step,
    t.stage,
    t.split ?? 'train',
    t.problemId ?? null,
    t.groupId,
    t.sampleIndex,
    t.reward,
    bool(t.correct),
    bool(t.selected ?? false),
    t.selectReason ?? null,
    t.pErr ?? null,
    t.pFormat ?? null,
    t.promptTokens ?? 0,
    t.responseTokens ?? 0,
    t.toolTokens ?? 0,
    t.turns ?? 0,
    t.toolCalls.length,
    toolErrors,
    t.finishReason,
    t.answer ?? null,
    JSON.stringify(t.content),
    created,
  ];
  const calls = t.toolCalls.map((c) => [
    newId('tc_'),
    id,
    t.runId,
    t.step,
    c.turn,
    c.code,
    c.stdin ?? '',
    c.stdout ?? '',
    c.stderr ?? '',
    c.status,
    c.exitCode ?? null,
    c.errorType ?? null,
    c.queuedAt ?? null,
    c.startedAt ?? null,
    c.finishedAt ?? null,
    c.durationMs ?? null,
    c.queueMs ?? null,
  ]);
  let tokens: unknown[] | null = null;
  if (t.tokens) {
    const k = encodeTokenRecord(t.tokens);
    tokens = [
      id,
      k.n,
      k.ids,
      k.mask,
      k.turn,
      k.chars,
      k.rolloutLogprobs,
      k.entropy,
      k.trainerLogprobs,
      k.weights,
      k.clip,
      k.advantage,
    ];
  }
  return { traj, calls, tokens };
}

/** Store trajectories, their tool calls and token records: multi-row INSERTs per chunk inside one transaction. */
export async function insertTrajectories(db: Database, items: TrajectoryInput[]): Promise<void> {
  const rows = items.map((t) => rowsOf(db, t));
  const tokens = rows.flatMap((r) => (r.tokens ? [r.tokens] : []));
  await inTransaction(db, async (tx) => {
    await insertRows(
      db,
      'Trajectory',
      T_COLS,
      rows.map((r) => r.traj),
      { on: tx },
    );
    await insertRows(
      db,
      'ToolCall',
      C_COLS,
      rows.flatMap((r) => r.calls),
      { on: tx },
    );
    // Few rows per statement: each carries ~30 KB of blobs, and one statement's parameters are held at once.
    await insertRows(db, 'TrajectoryTokens', K_COLS, tokens, { on: tx, maxParams: 64 * K_COLS.length });
  });
}

/** One statement per row, each its own commit: the naive path bench:db compares against. */
export async function insertTrajectorySingle(db: Database, t: TrajectoryInput): Promise<void> {
  const { traj, calls, tokens } = rowsOf(db, t);
  await insertRows(db, 'Trajectory', T_COLS, [traj]);
  for (const c of calls) await insertRows(db, 'ToolCall', C_COLS, [c]);
  if (tokens) await insertRows(db, 'TrajectoryTokens', K_COLS, [tokens]);
}

/** The token record of one trajectory; null when none was stored (older rows, engines without a tokenizer). */
export async function readTrajectoryTokens(db: Database, trajectoryId: string): Promise<TokenRecord | null> {
  const row = await db.prisma.trajectoryTokens.findUnique({ where: { trajectoryId } });
  return row ? decodeTokenRecord(row as TokenColumns) : null;
}

/** Replace a stored token record (the same tokens, more of their arrays: a trainer's side that arrived later). */
export async function replaceTrajectoryTokens(db: Database, trajectoryId: string, record: TokenRecord): Promise<void> {
  const k = encodeTokenRecord(record);
  const cols = K_COLS.filter((c) => c !== 'trajectoryId');
  await db.execute(
    `UPDATE "TrajectoryTokens" SET ${cols.map((c) => `"${c}" = ?`).join(', ')} WHERE "trajectoryId" = ?`,
    [...cols.map((c) => k[c as keyof TokenColumns]), trajectoryId],
  );
}

/**
 * Token records of many trajectories at once (a step's worth), by trajectory id; missing ones are absent. Raw SQL:
 * Prisma's model layer adds ~60% to a 70 MB read of blobs (bench:db).
 */
export async function readTokensOf(db: Database, trajectoryIds: string[]): Promise<Map<string, TokenRecord>> {
  const out = new Map<string, TokenRecord>();
  // Chunks keep the IN list under both databases' parameter limits.
  for (let i = 0; i < trajectoryIds.length; i += 1000) {
    const ids = trajectoryIds.slice(i, i + 1000);
    const rows = await db.query<TokenColumns & { trajectoryId: string }>(
      `SELECT ${K_COLS.map((c) => `"${c}"`).join(', ')} FROM "TrajectoryTokens" WHERE "trajectoryId" IN (${ids.map(() => '?').join(', ')})`,
      ids,
    );
    for (const r of rows) out.set(r.trajectoryId, decodeTokenRecord({ ...r, n: Number(r.n) }));
  }
  return out;
}

/**
 * One step of a run (all groups, all samples), in group order: one scan of the (runId, step, groupId, sampleIndex)
 * index. `trajectoryId` keeps only that trajectory; `offset` and `limit` page through the step.
 */
export function readStep(
  db: Database,
  runId: string,
  step: number,
  opts: { withContent?: boolean; trajectoryId?: string; offset?: number; limit?: number } = {},
) {
  return readStepRows(db, runId, step, opts);
}

/** readStep plus each trajectory's decoded token record (null where none was stored). */
export async function readStepWithTokens(
  db: Database,
  runId: string,
  step: number,
  opts: { withContent?: boolean; offset?: number; limit?: number } = {},
) {
  const rows = await readStepRows(db, runId, step, opts);
  const tokens = await readTokensOf(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((r) => ({ ...r, tokens: tokens.get(r.id) ?? null }));
}

function readStepRows(
  db: Database,
  runId: string,
  step: number,
  opts: { withContent?: boolean; trajectoryId?: string; offset?: number; limit?: number },
) {
  return db.prisma.trajectory.findMany({
    where: { runId, step, ...(opts.trajectoryId !== undefined ? { id: opts.trajectoryId } : {}) },
    orderBy: [{ groupId: 'asc' }, { sampleIndex: 'asc' }, { id: 'asc' }],
    omit: opts.withContent ? undefined : { content: true },
    skip: opts.offset,
    take: opts.limit,
  });
}

/** One trajectory with its content parsed and its tool calls in turn order; null when there is none. */
export async function getTrajectoryWithToolCalls(db: Database, trajectoryId: string) {
  const row = await db.prisma.trajectory.findUnique({ where: { id: trajectoryId } });
  if (!row) return null;
  const toolCalls = await db.prisma.toolCall.findMany({
    where: { trajectoryId },
    orderBy: [{ turn: 'asc' }, { id: 'asc' }],
  });
  const { content, ...rest } = row;
  return { ...rest, content: JSON.parse(content) as StoredTrajectoryContent, toolCalls };
}

/** The run and step a trajectory belongs to ({ id, runId, step }), or null when there is no such trajectory. */
export function getTrajectoryRun(db: Database, trajectoryId: string) {
  return db.prisma.trajectory.findUnique({
    where: { id: trajectoryId },
    select: { id: true, runId: true, step: true, problemId: true },
  });
}

/** Per stored step of one split, in step order: how many trajectories, their mean reward, how many were selected. */
export async function listStepStats(db: Database, runId: string, split: 'train' | 'eval') {
  const where = { runId, split };
  const [all, sel] = await Promise.all([
    db.prisma.trajectory.groupBy({
      by: ['step'],
      where,
      _count: { _all: true },
      _avg: { reward: true },
      orderBy: { step: 'asc' },
    }),
    db.prisma.trajectory.groupBy({
      by: ['step'],
      where: { ...where, selected: true },
      _count: { _all: true },
      orderBy: { step: 'asc' },
    }),
  ]);
  const selected = new Map(sel.map((g) => [g.step, g._count._all]));
  return all.map((g) => ({
    step: g.step,
    count: g._count._all,
    accuracy: g._avg.reward ?? 0,
    selected: selected.get(g.step) ?? 0,
  }));
}

/** Per RL step, the tokens the policy generated in its stored rollouts (the train split's response tokens less the tool results'). */
export async function generatedTokensByStep(db: Database, runId: string): Promise<{ step: number; value: number }[]> {
  const rows = await db.prisma.trajectory.groupBy({
    by: ['step'],
    where: { runId, split: 'train' },
    _sum: { responseTokens: true, toolTokens: true },
    orderBy: { step: 'asc' },
  });
  // A response holds the tool results appended to it too, which the engine prefilled, not sampled.
  return rows.map((r) => ({ step: r.step, value: (r._sum.responseTokens ?? 0) - (r._sum.toolTokens ?? 0) }));
}

/**
 * Per problem, a run's stored outcomes (training rollouts and evaluation samples) from step `fromStep` to `toStep`
 * and how many were correct: the pass-rate curriculum's estimate (workers/rl/curriculum.ts). Two group-bys over
 * the (runId, problemId, step) index.
 */
export async function listProblemOutcomes(
  db: Database,
  q: { runId: string; fromStep: number; toStep: number },
): Promise<{ problemId: string; n: number; correct: number }[]> {
  if (q.toStep < q.fromStep) return [];
  const where = { runId: q.runId, step: { gte: q.fromStep, lte: q.toStep }, problemId: { not: null } };
  const [all, right] = await Promise.all([
    db.prisma.trajectory.groupBy({ by: ['problemId'], where, _count: { _all: true } }),
    db.prisma.trajectory.groupBy({ by: ['problemId'], where: { ...where, correct: true }, _count: { _all: true } }),
  ]);
  const correct = new Map(right.map((g) => [g.problemId, g._count._all]));
  return all.map((g) => ({ problemId: g.problemId!, n: g._count._all, correct: correct.get(g.problemId) ?? 0 }));
}

/** Every trajectory of one problem in a run (no content), by step then sample. */
export function listTrajectoriesOfProblem(
  db: Database,
  q: { runId: string; problemId: string; split: TrajectorySplitFilter; limit: number },
) {
  return db.prisma.trajectory.findMany({
    where: { runId: q.runId, problemId: q.problemId, ...(q.split !== 'all' ? { split: q.split } : {}) },
    orderBy: [{ step: 'asc' }, { sampleIndex: 'asc' }, { groupId: 'asc' }, { id: 'asc' }],
    omit: { content: true },
    take: q.limit,
  });
}

/** What an evaluation needs of the samples it already stored for one benchmark (group ids `<benchmark>:…`) at one step. */
export function listEvalSampleOutcomes(db: Database, q: { runId: string; step: number; benchmark: string }) {
  return db.prisma.trajectory.findMany({
    where: { runId: q.runId, split: 'eval', step: q.step, groupId: { startsWith: `${q.benchmark}:` } },
    select: {
      groupId: true,
      correct: true,
      responseTokens: true,
      toolCalls: true,
      toolErrors: true,
      finishReason: true,
    },
  });
}

// ---- filtered, sorted pages (the trajectory explorer) ----------------------------------------------------------

export interface TrajectoryPageQuery {
  runId: string;
  step?: number;
  split: TrajectorySplitFilter;
  filter?: TrajectoryFilter;
  sort: TrajectorySort;
  limit: number;
  offset: number;
}

/**
 * The Prisma where for a list query: every filter runs in SQL. `search` is a literal, case-insensitive substring:
 * Prisma's `contains` is a LIKE whose `%` and `_` it does not escape. PostgreSQL's LIKE/ILIKE take a backslash
 * escape, so they are escaped there; SQLite's LIKE has no escape character without an ESCAPE clause, so there a
 * search holding `%` or `_` (Python's `%`, names with `_`) goes through pageLiteralSqlite instead. SQLite's LIKE
 * already ignores ASCII case; PostgreSQL gets mode 'insensitive' (ILIKE).
 */
function whereOf(
  db: Database,
  q: { runId: string; step?: number; split: TrajectorySplitFilter; filter?: TrajectoryFilter },
) {
  const f = q.filter ?? {};
  const reward =
    f.minReward !== undefined || f.maxReward !== undefined
      ? {
          ...(f.minReward !== undefined ? { gte: f.minReward } : {}),
          ...(f.maxReward !== undefined ? { lte: f.maxReward } : {}),
        }
      : undefined;
  const base = {
    runId: q.runId,
    ...(q.step !== undefined ? { step: q.step } : {}),
    ...(q.split !== 'all' ? { split: q.split } : {}),
  };
  let search: { content?: { contains: string } } = {};
  if (f.search !== undefined) {
    if (db.dialect === 'postgresql') {
      search = {
        content: { contains: f.search.replace(/[\\%_]/g, (c) => `\\${c}`), mode: 'insensitive' } as {
          contains: string;
        },
      };
    } else {
      search = { content: { contains: f.search } };
    }
  }
  return {
    ...base,
    ...(reward ? { reward } : {}),
    ...(f.selected !== undefined ? { selected: f.selected } : {}),
    ...(f.correct !== undefined ? { correct: f.correct } : {}),
    ...(f.hasToolError !== undefined ? { toolErrors: f.hasToolError ? { gt: 0 } : 0 } : {}),
    ...(f.finishReason !== undefined ? { finishReason: f.finishReason } : {}),
    ...search,
  };
}

/**
 * SQLite, search with `%` or `_`: the same filters and order in raw SQL with instr() for the literal substring; the
 * page's ids (at most 500) are then read with Prisma, so the rows have the same shape as the other path's.
 */
async function pageLiteralSqlite(db: Database, input: TrajectoryPageQuery) {
  const f = input.filter ?? {};
  const conds: string[] = ['"runId" = ?'];
  const params: unknown[] = [input.runId];
  const add = (sql: string, ...p: unknown[]) => {
    conds.push(sql);
    params.push(...p);
  };
  if (input.step !== undefined) add('"step" = ?', input.step);
  if (input.split !== 'all') add('"split" = ?', input.split);
  if (f.minReward !== undefined) add('"reward" >= ?', f.minReward);
  if (f.maxReward !== undefined) add('"reward" <= ?', f.maxReward);
  if (f.selected !== undefined) add('"selected" = ?', f.selected ? 1 : 0);
  if (f.correct !== undefined) add('"correct" = ?', f.correct ? 1 : 0);
  if (f.hasToolError !== undefined) add(f.hasToolError ? '"toolErrors" > 0' : '"toolErrors" = 0');
  if (f.finishReason !== undefined) add('"finishReason" = ?', f.finishReason);
  add('instr(lower("content"), lower(?)) > 0', f.search);
  const where = conds.join(' AND ');
  const order = orderOf(input.sort)
    .map((o) => Object.entries(o).map(([k, d]) => `"${k}" ${d === 'desc' ? 'DESC' : 'ASC'}`)[0])
    .join(', ');
  const [ids, count] = await Promise.all([
    db.query<{ id: string }>(`SELECT "id" FROM "Trajectory" WHERE ${where} ORDER BY ${order} LIMIT ? OFFSET ?`, [
      ...params,
      input.limit,
      input.offset,
    ]),
    db.query<{ n: number | bigint }>(`SELECT COUNT(*) AS "n" FROM "Trajectory" WHERE ${where}`, params),
  ]);
  const rows = await db.prisma.trajectory.findMany({
    where: { id: { in: ids.map((r) => r.id) } },
    omit: { content: true },
  });
  const byId = new Map(rows.map((r) => [r.id, r]));
  return { items: ids.map((r) => byId.get(r.id)!).filter(Boolean), total: Number(count[0]?.n ?? 0) };
}

type Order = { [k in 'step' | 'groupId' | 'sampleIndex' | 'reward' | 'responseTokens' | 'id']?: 'asc' | 'desc' };

/** Index order is (step, group, sample), the (runId, step, groupId, sampleIndex) index; the others tie-break on it. */
function orderOf(sort: TrajectorySort): Order[] {
  const index: Order[] = [{ step: 'asc' }, { groupId: 'asc' }, { sampleIndex: 'asc' }, { id: 'asc' }];
  switch (sort) {
    case 'index':
      return index;
    case 'reward_desc':
      return [{ reward: 'desc' }, ...index];
    case 'reward_asc':
      return [{ reward: 'asc' }, ...index];
    case 'length_desc':
      return [{ responseTokens: 'desc' }, ...index];
    case 'length_asc':
      return [{ responseTokens: 'asc' }, ...index];
  }
}

/** A page of a run's trajectories (no content) matching the filter, in the sort's order, with the total that match. */
export async function listTrajectoryPage(db: Database, input: TrajectoryPageQuery) {
  if (db.dialect === 'sqlite' && input.filter?.search !== undefined && /[%_]/.test(input.filter.search))
    return pageLiteralSqlite(db, input);
  const where = whereOf(db, input);
  const [items, total] = await Promise.all([
    db.prisma.trajectory.findMany({
      where,
      orderBy: orderOf(input.sort),
      skip: input.offset,
      take: input.limit,
      omit: { content: true },
    }),
    db.prisma.trajectory.count({ where }),
  ]);
  return { items, total };
}

/** A page of a run's trajectories with their content, in id order after `afterId` (an export pages through a run). */
export function listRunTrajectoryContents(db: Database, runId: string, afterId: string | null, limit: number) {
  return db.prisma.trajectory.findMany({
    where: { runId, ...(afterId ? { id: { gt: afterId } } : {}) },
    orderBy: { id: 'asc' },
    take: limit,
    select: { id: true, step: true, split: true, groupId: true, reward: true, answer: true, content: true },
  });
}
