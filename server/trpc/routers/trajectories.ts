import type { StoredTrajectoryContent } from '../../../contracts/trajectory.ts';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { publicProcedure, router } from '../init.ts';
import type { Database } from '../../db/client.ts';

const id = z.string().min(1).max(100);
const stepNumber = z.number().int().min(-(2 ** 31)).max(2 ** 31 - 1);
const split = z.enum(['train', 'eval']);

export const trajectoryFilter = z.object({
  minReward: z.number().optional(),
  maxReward: z.number().optional(),
  selected: z.boolean().optional(),
  /** true: at least one tool call failed (toolErrors > 0); false: none did. */
  hasToolError: z.boolean().optional(),
  finishReason: z.string().min(1).max(100).optional(),
  /** Case-insensitive substring of the trajectory's content (prompt, turns, tool output, verdict). */
  search: z.string().min(1).max(500).optional(),
});
export type TrajectoryFilter = z.infer<typeof trajectoryFilter>;

export const trajectorySort = z.enum(['index', 'reward_desc', 'reward_asc', 'length_desc', 'length_asc']);
export type TrajectorySort = z.infer<typeof trajectorySort>;

export const listInput = z.object({
  runId: id,
  step: stepNumber.optional(),
  /** 'train' (default), 'eval', or 'all' splits. */
  split: z.enum(['train', 'eval', 'all']).default('train'),
  filter: trajectoryFilter.optional(),
  sort: trajectorySort.default('index'),
  limit: z.number().int().min(1).max(500).default(100),
  offset: z.number().int().min(0).max(2 ** 31 - 1).default(0),
});

async function assertRun(db: Database, runId: string) {
  const run = await db.prisma.run.findUnique({ where: { id: runId }, select: { id: true } });
  if (!run) throw new TRPCError({ code: 'NOT_FOUND', message: `run ${runId} not found` });
}

/**
 * The Prisma where for a list query: every filter runs in SQL. `search` is a literal, case-insensitive substring:
 * Prisma's `contains` is a LIKE whose `%` and `_` it does not escape. PostgreSQL's LIKE/ILIKE take a backslash
 * escape, so they are escaped there; SQLite's LIKE has no escape character without an ESCAPE clause, so there a
 * search holding `%` or `_` (Python's `%`, names with `_`) goes through listLiteralSqlite instead. SQLite's LIKE
 * already ignores ASCII case; PostgreSQL gets mode 'insensitive' (ILIKE).
 */
function whereOf(db: Database, q: { runId: string; step?: number; split: 'train' | 'eval' | 'all'; filter?: TrajectoryFilter }) {
  const f = q.filter ?? {};
  const reward = f.minReward !== undefined || f.maxReward !== undefined
    ? { ...(f.minReward !== undefined ? { gte: f.minReward } : {}), ...(f.maxReward !== undefined ? { lte: f.maxReward } : {}) }
    : undefined;
  const base = {
    runId: q.runId,
    ...(q.step !== undefined ? { step: q.step } : {}),
    ...(q.split !== 'all' ? { split: q.split } : {}),
  };
  let search: { content?: { contains: string } } = {};
  if (f.search !== undefined) {
    if (db.dialect === 'postgresql') {
      search = { content: { contains: f.search.replace(/[\\%_]/g, (c) => `\\${c}`), mode: 'insensitive' } as { contains: string } };
    } else {
      search = { content: { contains: f.search } };
    }
  }
  return {
    ...base,
    ...(reward ? { reward } : {}),
    ...(f.selected !== undefined ? { selected: f.selected } : {}),
    ...(f.hasToolError !== undefined ? { toolErrors: f.hasToolError ? { gt: 0 } : 0 } : {}),
    ...(f.finishReason !== undefined ? { finishReason: f.finishReason } : {}),
    ...search,
  };
}

/**
 * SQLite, search with `%` or `_`: the same filters and order in raw SQL with instr() for the literal substring; the
 * page's ids (at most 500) are then read with Prisma, so the rows have the same shape as the other path's.
 */
async function listLiteralSqlite(db: Database, input: z.output<typeof listInput>) {
  const f = input.filter ?? {};
  const conds: string[] = ['"runId" = ?'];
  const params: unknown[] = [input.runId];
  const add = (sql: string, ...p: unknown[]) => { conds.push(sql); params.push(...p); };
  if (input.step !== undefined) add('"step" = ?', input.step);
  if (input.split !== 'all') add('"split" = ?', input.split);
  if (f.minReward !== undefined) add('"reward" >= ?', f.minReward);
  if (f.maxReward !== undefined) add('"reward" <= ?', f.maxReward);
  if (f.selected !== undefined) add('"selected" = ?', f.selected ? 1 : 0);
  if (f.hasToolError !== undefined) add(f.hasToolError ? '"toolErrors" > 0' : '"toolErrors" = 0');
  if (f.finishReason !== undefined) add('"finishReason" = ?', f.finishReason);
  add('instr(lower("content"), lower(?)) > 0', f.search);
  const where = conds.join(' AND ');
  const order = orderOf(input.sort).map((o) => Object.entries(o).map(([k, d]) => `"${k}" ${d === 'desc' ? 'DESC' : 'ASC'}`)[0]).join(', ');
  const [ids, count] = await Promise.all([
    db.query<{ id: string }>(`SELECT "id" FROM "Trajectory" WHERE ${where} ORDER BY ${order} LIMIT ? OFFSET ?`, [...params, input.limit, input.offset]),
    db.query<{ n: number | bigint }>(`SELECT COUNT(*) AS "n" FROM "Trajectory" WHERE ${where}`, params),
  ]);
  const rows = await db.prisma.trajectory.findMany({ where: { id: { in: ids.map((r) => r.id) } }, omit: { content: true } });
  const byId = new Map(rows.map((r) => [r.id, r]));
  return { items: ids.map((r) => byId.get(r.id)!).filter(Boolean), total: Number(count[0]?.n ?? 0) };
}

type Order = { [k in 'step' | 'groupId' | 'sampleIndex' | 'reward' | 'responseTokens' | 'id']?: 'asc' | 'desc' };

/** Index order is (step, group, sample), the (runId, step, groupId, sampleIndex) index; the others tie-break on it. */
function orderOf(sort: TrajectorySort): Order[] {
  const index: Order[] = [{ step: 'asc' }, { groupId: 'asc' }, { sampleIndex: 'asc' }, { id: 'asc' }];
  switch (sort) {
    case 'index': return index;
    case 'reward_desc': return [{ reward: 'desc' }, ...index];
    case 'reward_asc': return [{ reward: 'asc' }, ...index];
    case 'length_desc': return [{ responseTokens: 'desc' }, ...index];
    case 'length_asc': return [{ responseTokens: 'asc' }, ...index];
  }
}

export async function listTrajectories(db: Database, input: z.output<typeof listInput>) {
  await assertRun(db, input.runId);
  if (db.dialect === 'sqlite' && input.filter?.search !== undefined && /[%_]/.test(input.filter.search)) return listLiteralSqlite(db, input);
  const where = whereOf(db, input);
  const [items, total] = await Promise.all([
    db.prisma.trajectory.findMany({ where, orderBy: orderOf(input.sort), skip: input.offset, take: input.limit, omit: { content: true } }),
    db.prisma.trajectory.count({ where }),
  ]);
  return { items, total };
}

export const trajectoriesRouter = router({
  /** One entry per stored step of the split, in step order: the step slider's stops. accuracy = mean reward. */
  steps: publicProcedure.input(z.object({ runId: id, split: split.default('train') })).query(async ({ ctx, input }) => {
    await assertRun(ctx.db, input.runId);
    const where = { runId: input.runId, split: input.split };
    const [all, sel] = await Promise.all([
      ctx.db.prisma.trajectory.groupBy({ by: ['step'], where, _count: { _all: true }, _avg: { reward: true }, orderBy: { step: 'asc' } }),
      ctx.db.prisma.trajectory.groupBy({ by: ['step'], where: { ...where, selected: true }, _count: { _all: true }, orderBy: { step: 'asc' } }),
    ]);
    const selected = new Map(sel.map((g) => [g.step, g._count._all]));
    return all.map((g) => ({ step: g.step, count: g._count._all, accuracy: g._avg.reward ?? 0, selected: selected.get(g.step) ?? 0 }));
  }),

  /** A page of trajectories (no content) with the total matching the filter. */
  list: publicProcedure.input(listInput).query(({ ctx, input }) => listTrajectories(ctx.db, input)),

  /** The k best or worst of one step by reward or response length (the list, sorted, first page). */
  topK: publicProcedure
    .input(z.object({
      runId: id, step: stepNumber, k: z.number().int().min(1).max(500), by: z.enum(['reward', 'length']), order: z.enum(['top', 'bottom']),
      split: z.enum(['train', 'eval', 'all']).default('train'),
    }))
    .query(async ({ ctx, input }) => {
      const sort: TrajectorySort = `${input.by}_${input.order === 'top' ? 'desc' : 'asc'}`;
      const r = await listTrajectories(ctx.db, { runId: input.runId, step: input.step, split: input.split, sort, limit: input.k, offset: 0 });
      return r.items;
    }),

  /** One trajectory: its row, its parsed content (prompt, turns, verdict) and its tool calls in turn order. */
  get: publicProcedure.input(z.object({ id })).query(async ({ ctx, input }) => {
    const row = await ctx.db.prisma.trajectory.findUnique({ where: { id: input.id } });
    if (!row) throw new TRPCError({ code: 'NOT_FOUND', message: `trajectory ${input.id} not found` });
    const toolCalls = await ctx.db.prisma.toolCall.findMany({ where: { trajectoryId: input.id }, orderBy: [{ turn: 'asc' }, { id: 'asc' }] });
    const { content, ...rest } = row;
    return { ...rest, content: JSON.parse(content) as StoredTrajectoryContent, toolCalls };
  }),

  /** Every trajectory of one problem in a run (no content), by step then sample: how answers to it evolved. */
  samePrompt: publicProcedure
    .input(z.object({ runId: id, problemId: z.string().min(1).max(500), split: z.enum(['train', 'eval', 'all']).default('all'), limit: z.number().int().min(1).max(5000).default(1000) }))
    .query(async ({ ctx, input }) => {
      await assertRun(ctx.db, input.runId);
      return ctx.db.prisma.trajectory.findMany({
        where: { runId: input.runId, problemId: input.problemId, ...(input.split !== 'all' ? { split: input.split } : {}) },
        orderBy: [{ step: 'asc' }, { sampleIndex: 'asc' }, { groupId: 'asc' }, { id: 'asc' }],
        omit: { content: true },
        take: input.limit,
      });
    }),
});
