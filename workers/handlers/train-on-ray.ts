import fs from 'node:fs';
import { type Config, config } from '../../server/config.ts';
import { redact } from '../../server/db/url.ts';
import type { JobPayload } from '../../contracts/jobs.ts';
import type { ClusterEventData } from '../../contracts/cluster.ts';
import { RAY_TERMINAL, type RayJobInfo, RayJobsClient, RayJobsError, type RayJobStatus } from '../cluster/ray-jobs.ts';
import { sleep } from '../engines/sleep.ts';
import { PermanentJobError, type JobContext } from '../types.ts';
import { CLI_ENTRIES, TOOLSMITH_BIN_RELATIVE } from './cli-entries.ts';

/** cli/ray-entry.ts exits with this when the run cannot go on whatever is retried (a bad recipe, a NaN loss). */
export const RAY_PERMANENT_EXIT = 3;
const PERMANENT_MESSAGE = new RegExp(`exit code ${RAY_PERMANENT_EXIT}\\b`);
const POLL_MS = 1000;
/** How long the dashboard may stay unreachable before the run fails (its head is taken to be lost) is the operator's
 *  (TOOLSMITH_RAY_HEAD_LOST_S, 30 s). A head that takes connections but answers nothing is busy, not lost (on 2 cores
 *  beside another load its dashboard once answered nothing for over 30 s while the run went on): it fails the run
 *  only when it stays so this long. */
const HEAD_HUNG_MS = 300_000;
const LOG_LINES_PER_POLL = 50;
/** The log is read whole each time (the Jobs API has no offset): less often than the state. */
const LOG_EVERY_MS = 5000;

/** The cluster's token from TOOLSMITH_RAY_TOKEN_FILE (first line), or undefined when none is configured. */
function rayToken(file: string | undefined): string | undefined {
  if (!file) return undefined;
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new PermanentJobError(
      `TOOLSMITH_RAY_TOKEN_FILE: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  const token = text.split(/\r?\n/)[0]!.trim();
  if (!token) throw new PermanentJobError(`TOOLSMITH_RAY_TOKEN_FILE: ${file} is empty`);
  return token;
}

/** A POSIX shell word: the project folder goes into the entrypoint's `cd`. */
const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * A "train" job launched for the Ray cluster, as the worker that leased it runs it: submit the run's orchestrator as a
 * Ray job through the Jobs REST API (or attach to the one a dead worker left running), mirror its state and the tail
 * of its logs into the run's events, and end as it ends. The orchestrator there (cli/ray-entry.ts) runs the same
 * train handler against the same database, its trainer ranks placed by the cluster. Cancel and pause stop the Ray job
 * (Ray then removes its actors); a worker that shuts down leaves it running for the next worker to attach to.
 */
export async function trainOnRay(ctx: JobContext<JobPayload<'train'>>): Promise<unknown> {
  const cfg = config();
  if (!cfg.rayAddress)
    throw new PermanentJobError(
      'cluster: the run was launched for Ray but this worker has no TOOLSMITH_RAY_ADDRESS (docs/scaling-out.md "Ray")',
    );
  const ray = await connect(cfg);
  const job = await submitOrAttach(ctx, ray, cfg);
  if ('done' in job) return { rayJobId: job.done };
  return follow(ctx, ray, cfg, job.id);
}

/** The cluster's Jobs client, once it has accepted our token (or no token, when the operator allows that). */
async function connect(cfg: Config): Promise<RayJobsClient> {
  const ray = new RayJobsClient(cfg.rayAddress!, rayToken(cfg.rayTokenFile));
  try {
    await ray.checkAuth(cfg.rayAllowNoAuth);
  } catch (e) {
    // An unreachable cluster may come back (another attempt); one that refuses our token or has none will not.
    if (e instanceof RayJobsError && e.status === undefined && !/without a token|needs a token/.test(e.message))
      throw e;
    throw new PermanentJobError((e as Error).message);
  }
  return ray;
}

/**
 * The run's Ray job for this job: the one an earlier attempt left running, or a new submission; `done` when an
 * earlier attempt's job already succeeded.
 */
async function submitOrAttach(
  ctx: JobContext<JobPayload<'train'>>,
  ray: RayJobsClient,
  cfg: Config,
): Promise<{ id: string } | { done: string }> {
  const runId = ctx.job.runId!;
  const mine = (await ray.list()).filter((j) => j.metadata?.toolsmith_run === runId);
  // This job's work already done on the cluster (its follower died before it saw the end): done here too.
  const done = mine.find((j) => j.metadata?.toolsmith_job === ctx.job.id && j.status === 'SUCCEEDED');
  if (done) {
    await ctx.log(`the run's Ray job ${done.submission_id} had already succeeded`);
    return { done: done.submission_id };
  }
  const running = mine.find((j) => !RAY_TERMINAL.has(j.status));
  let id: string;
  if (running) {
    id = running.submission_id;
    await ctx.log(`following the run's Ray job ${id} on ${cfg.rayAddress} (started by an earlier attempt)`);
  } else {
    id = `toolsmith-${runId}-${ctx.job.attempts}-${Date.now().toString(36)}`;
    const dbUrl = cfg.rayDatabaseUrl ?? cfg.databaseUrl;
    await ray.submit({
      submission_id: id,
      entrypoint: `cd ${shellQuote(cfg.rayProjectDir)} && exec node ${TOOLSMITH_BIN_RELATIVE} ${CLI_ENTRIES.rayEntry} --job ${ctx.job.id}`,
      entrypoint_num_cpus: 0,
      runtime_env: {
        env_vars: {
          TOOLSMITH_ON_RAY: '1',
          // The dashboard shows a job's env_vars to whoever holds the cluster's token (who can run code there anyway).
          DATABASE_URL: dbUrl,
          TOOLSMITH_DATA_DIR: cfg.dataDir,
          TOOLSMITH_MODELS_DIR: cfg.modelsDir,
          TOOLSMITH_RAY_PLACEMENT_TIMEOUT_S: String(cfg.rayPlacementTimeoutS),
        },
      },
      metadata: { toolsmith_run: runId, toolsmith_job: ctx.job.id },
    });
    await ctx.log(`submitted to the Ray cluster at ${cfg.rayAddress} as job ${id} (database ${redact(dbUrl)})`);
  }
  return { id };
}

/** Mirrors the Ray job's state and log tail into the run's events until it ends, or this job is stopped. */
async function follow(ctx: JobContext<JobPayload<'train'>>, ray: RayJobsClient, cfg: Config, id: string) {
  const event = (state: RayJobStatus): ClusterEventData => ({
    kind: 'ray',
    cluster: cfg.rayAddress!,
    rayJobId: id,
    state,
  });
  let state = '';
  let seen = '';
  let unreachableSince: number | null = null;
  let logsAt = 0;
  for (;;) {
    if (ctx.signal.aborted) {
      const reason = typeof ctx.signal.reason === 'string' ? ctx.signal.reason : 'crashed';
      if (reason === 'cancelled') {
        await ray.stop(id).catch(() => false);
        await ctx.log(`stopped the Ray job ${id}`, { type: 'cluster', data: event('STOPPED') });
      }
      // shutdown / lease lost: the Ray job keeps running; whichever worker leases the job next attaches to it.
      return { rayJobId: id };
    }
    let info: RayJobInfo;
    try {
      info = await ray.status(id);
      unreachableSince = null;
    } catch (e) {
      if (!(e instanceof RayJobsError) || e.status !== undefined) throw e;
      unreachableSince ??= Date.now();
      const limit = e.busy ? HEAD_HUNG_MS : cfg.rayHeadLostS * 1000;
      if (Date.now() - unreachableSince > limit)
        throw new PermanentJobError(
          `the Ray cluster's head at ${cfg.rayAddress} stopped answering for ${limit / 1000} s (${e.message}): the run's Ray job ${id} and its actors are lost with it; resume the run once the cluster is back (it continues from the last checkpoint)`,
        );
      await sleep(POLL_MS, ctx.signal);
      continue;
    }
    if (info.status !== state) {
      state = info.status;
      await ctx.log(`Ray job ${id}: ${state}${info.message ? ` (${info.message})` : ''}`, {
        type: 'cluster',
        data: event(info.status),
      });
    }
    const terminal = RAY_TERMINAL.has(info.status);
    if (!terminal && Date.now() - logsAt < LOG_EVERY_MS) {
      await sleep(POLL_MS, ctx.signal);
      continue;
    }
    logsAt = Date.now();
    const logs = await ray.logs(id).catch(() => seen);
    const whole = logs.slice(0, logs.lastIndexOf('\n') + 1);
    if (whole.length > seen.length && whole.startsWith(seen)) {
      const lines = whole
        .slice(seen.length)
        .split('\n')
        .filter((l) => l.trim());
      for (const l of lines.slice(-LOG_LINES_PER_POLL)) await ctx.log(`[ray] ${l}`, { level: 'debug' });
      seen = whole;
    }
    if (terminal) {
      if (info.status === 'SUCCEEDED') return { rayJobId: id };
      const tail = seen.trim().split('\n').slice(-5).join(' | ');
      const why = `the run's Ray job ${id} ${info.status.toLowerCase()}${info.message ? `: ${info.message}` : ''}${tail ? `; its last lines: ${tail}` : ''}`;
      // Ray reports the entrypoint's exit code in driver_exit_code, or (older versions) only in the message.
      if (info.driver_exit_code === RAY_PERMANENT_EXIT || PERMANENT_MESSAGE.test(info.message ?? ''))
        throw new PermanentJobError(why);
      throw new Error(why); // another attempt resubmits it, and the run resumes from its last checkpoint
    }
    await sleep(POLL_MS, ctx.signal);
  }
}
