/**
 * The viewer's agent API: MCP tools over the same tRPC procedures the pages call, so an agent sees exactly what its
 * token's user may see (each call is authorised like a page's, and a revoked token stops at its next call). Read-only:
 * only viewer queries are reachable, whatever the token's scope. Transports: server/mcp/serve.ts.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { TRAJECTORY_SPLITS } from '../../contracts/trajectory-query.ts';
import { timeByKind } from '../../contracts/timeline.ts';
import { UserError } from '../../contracts/errors.ts';
import { createCallerFactory } from '../trpc/init.ts';
import { appRouter } from '../trpc/root.ts';
import type { Context } from '../trpc/init.ts';

const createCaller = createCallerFactory(appRouter);
export type ViewerCaller = ReturnType<typeof createCaller>;

export interface ViewerToolsOptions {
  /** The caller for the token, resolved for each tool call (over HTTP, each request is one): a revocation holds at the next. */
  caller: () => Promise<ViewerCaller>;
  /** The workbench's address, for citations (config().publicUrl). */
  publicUrl: string;
  version: string;
}

/** A caller acting for `context` (its principal from the request's token). */
export const callerOf = (context: Context): ViewerCaller => createCaller(context);

const READ_ONLY = { readOnlyHint: true, openWorldHint: false } as const;

/** One tool answer: the value as JSON text (what every MCP client shows) and as structured content. */
function answer(value: unknown): CallToolResult {
  const structured = Array.isArray(value) ? { items: value } : (value as Record<string, unknown>);
  return { content: [{ type: 'text', text: JSON.stringify(value, null, 1) }], structuredContent: structured };
}

/** A refusal or a bad argument is the tool's answer (isError), never a crash of the server. */
async function guarded(f: () => Promise<unknown>): Promise<CallToolResult> {
  try {
    return answer(await f());
  } catch (e) {
    if (e instanceof TRPCError || e instanceof UserError)
      return { isError: true, content: [{ type: 'text', text: e.message }] };
    throw e;
  }
}

export function trajectoryLink(publicUrl: string, id: string): string {
  return `${publicUrl}/trajectories/${encodeURIComponent(id)}`;
}

export function runLink(publicUrl: string, runId: string): string {
  return `${publicUrl}/runs/${encodeURIComponent(runId)}`;
}

export function viewerMcpServer(opts: ViewerToolsOptions): McpServer {
  const server = new McpServer({ name: 'toolsmith', version: opts.version });
  registerRunTools(server, opts);
  registerTrajectoryTools(server, opts);
  return server;
}

/** list_runs, read_metrics, step_timeline. */
function registerRunTools(server: McpServer, { caller, publicUrl }: ViewerToolsOptions): void {
  server.registerTool(
    'list_runs',
    {
      title: 'List runs',
      description: 'Runs the token may see, newest first: id, name, kind, status, steps, times, link.',
      inputSchema: {
        kind: z.string().max(40).optional().describe('only runs of this kind (train, eval, import, …)'),
        limit: z.number().int().min(1).max(200).default(50),
      },
      annotations: READ_ONLY,
    },
    ({ kind, limit }) =>
      guarded(async () =>
        (await (await caller()).runs.list({ kind, limit })).map((r) => ({
          id: r.id,
          name: r.name,
          kind: r.kind,
          status: r.status,
          createdAt: r.createdAt,
          link: runLink(publicUrl, r.id),
        })),
      ),
  );

  server.registerTool(
    'read_metrics',
    {
      title: 'Read metrics',
      description:
        "A run's metrics by step. Without `keys`, the names it has; with them, each one's [step, value] points.",
      inputSchema: {
        runId: z.string().min(1).max(100),
        keys: z.array(z.string().min(1).max(200)).max(20).optional(),
        fromStep: z.number().int().optional(),
        toStep: z.number().int().optional(),
      },
      annotations: READ_ONLY,
    },
    ({ runId, keys, fromStep, toStep }) =>
      guarded(async () => {
        const c = await caller();
        if (!keys?.length) return { runId, keys: await c.runs.metricKeys({ runId }) };
        const series: Record<string, [number, number][]> = {};
        for (const key of keys)
          series[key] = (await c.runs.series({ runId, key, fromStep, toStep })).map((p) => [p.step, p.value]);
        return { runId, series };
      }),
  );

  server.registerTool(
    'step_timeline',
    {
      title: 'Step timeline',
      description:
        "Where one step's time went: its wall time, the time in each phase (generation, tool calls, reward, RoC, training, weight sync, storage; work summed over trajectories), and its critical path, each block with its offset from the step's start and its duration, ms.",
      inputSchema: { runId: z.string().min(1).max(100), step: z.number().int().min(0) },
      annotations: READ_ONLY,
    },
    ({ runId, step }) =>
      guarded(async () => {
        const t = await (await caller()).runs.timeline({ runId, step });
        return {
          runId,
          step,
          wallMs: t.end - t.origin,
          trajectories: t.lanes.filter((l) => l.trajectoryId).length,
          msByKind: timeByKind(t),
          criticalPath: t.blocks
            .filter((b) => b.critical)
            .map((b) => ({
              lane: t.lanes[b.lane]?.label,
              block: b.label,
              atMs: b.start - t.origin,
              ms: b.end - b.start,
            })),
          phasesRecorded: t.phasesRecorded,
          untimed: t.untimed,
          link: runLink(publicUrl, runId),
        };
      }),
  );
}

/** search_trajectories, open_trajectory, cite_trajectory. */
function registerTrajectoryTools(server: McpServer, { caller, publicUrl }: ViewerToolsOptions): void {
  server.registerTool(
    'search_trajectories',
    {
      title: 'Search trajectories',
      description:
        "A run's trajectories matching every filter given: text in the prompt, answer or turns, the verdict, a reward range, a failed tool call; with links.",
      inputSchema: {
        runId: z.string().min(1).max(100),
        text: z.string().min(1).max(500).optional().describe('case-insensitive substring of prompt, turns, answer'),
        correct: z.boolean().optional().describe('the verifier said right (true) or wrong (false)'),
        minReward: z.number().optional(),
        maxReward: z.number().optional(),
        toolError: z.boolean().optional().describe('true: at least one tool call failed'),
        step: z.number().int().optional(),
        split: z.enum(TRAJECTORY_SPLITS).default('all'),
        limit: z.number().int().min(1).max(100).default(20),
        offset: z.number().int().min(0).default(0),
      },
      annotations: READ_ONLY,
    },
    (a) =>
      guarded(async () => {
        const page = await (await caller()).trajectories.list({
          runId: a.runId,
          step: a.step,
          split: a.split,
          filter: {
            search: a.text,
            correct: a.correct,
            minReward: a.minReward,
            maxReward: a.maxReward,
            hasToolError: a.toolError,
          },
          limit: a.limit,
          offset: a.offset,
        });
        return {
          total: page.total,
          items: page.items.map((t) => ({
            id: t.id,
            step: t.step,
            reward: t.reward,
            correct: t.correct,
            toolCalls: t.toolCalls,
            toolErrors: t.toolErrors,
            finishReason: t.finishReason,
            answer: t.answer,
            link: trajectoryLink(publicUrl, t.id),
          })),
        };
      }),
  );

  server.registerTool(
    'open_trajectory',
    {
      title: 'Open a trajectory',
      description: 'One trajectory in full: prompt, every turn, each tool call with its code and output, the verdict.',
      inputSchema: { id: z.string().min(1).max(100) },
      annotations: READ_ONLY,
    },
    ({ id }) =>
      guarded(async () => ({
        ...(await (await caller()).trajectories.get({ id })),
        link: trajectoryLink(publicUrl, id),
      })),
  );

  server.registerTool(
    'cite_trajectory',
    {
      title: 'Cite a trajectory',
      description:
        'A link to a trajectory in the workbench (for a report), with its run, step, reward and verdict; the reader signs in to open it.',
      inputSchema: { id: z.string().min(1).max(100) },
      annotations: READ_ONLY,
    },
    ({ id }) =>
      guarded(async () => {
        const t = await (await caller()).trajectories.get({ id });
        return {
          id,
          runId: t.runId,
          step: t.step,
          reward: t.reward,
          correct: t.correct,
          link: trajectoryLink(publicUrl, id),
          markdown: `[trajectory ${id} (run ${t.runId}, step ${t.step}, reward ${t.reward})](${trajectoryLink(publicUrl, id)})`,
        };
      }),
  );
}
