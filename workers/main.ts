import { config } from '../server/config.ts';
import { openDatabase } from '../server/db/client.ts';
import { migrate } from '../server/db/migrate.ts';
import { errorMessage } from '../contracts/errors.ts';
import { isSideJobKind } from '../contracts/jobs.ts';
import { reportFatal } from '../server/errors.ts';
import { handlers } from './handlers/index.ts';
import { workerLanes } from './lanes.ts';
import { runningJob } from './worker.ts';

/**
 * Worker process: `npx toolsmith worker` (npm start runs one). Any number may run against one PostgreSQL,
 * on any machine. One main lane (one job at a time) and TOOLSMITH_WORKER_SIDE_SLOTS side lanes for imports and
 * diagnostics (workers/lanes.ts). SIGTERM/SIGINT: finish or release the running jobs, then exit 0.
 */
export async function runWorker(opts: { kinds?: string[] } = {}): Promise<void> {
  const cfg = config();
  await migrate(cfg.databaseUrl);
  const db = await openDatabase(cfg.databaseUrl);
  const lanes = workerLanes(db, handlers(), {
    id: cfg.workerId,
    leaseMs: cfg.leaseSeconds * 1000,
    heartbeatMs: cfg.heartbeatSeconds * 1000,
    pollMs: cfg.pollMs,
    shutdownGraceMs: cfg.shutdownGraceSeconds * 1000,
    kinds: opts.kinds,
    sideSlots: cfg.workerSideSlots,
  });
  if (lanes.length === 0) throw new Error(`no job kinds to run (asked for: ${opts.kinds?.join(', ')})`);
  const worker = lanes[0]!;
  /**
   * An exception escaping a handler (from a timer, a stream...) fails that handler's job, found by its async context;
   * one with no job context fails the main lane's (the process's one job before there were lanes). Never the worker.
   */
  const crash = (err: unknown) => {
    const jobId = runningJob.getStore();
    const lane = (jobId && lanes.find((l) => l.isRunning(jobId))) || worker;
    return lane.crashCurrent(err);
  };
  process.on('uncaughtException', (err) => {
    worker.log(`uncaught exception: ${errorMessage(err)}${crash(err) ? ' (failing the job it came from)' : ''}`);
  });
  process.on('unhandledRejection', (err) => {
    worker.log(`unhandled rejection: ${errorMessage(err)}${crash(err) ? ' (failing the job it came from)' : ''}`);
  });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    worker.log(`${signal}: stopping`);
    Promise.all(lanes.map((l) => l.stop())).then(
      () => db.close().finally(() => process.exit(0)),
      (e) => {
        reportFatal('worker', e);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  const side = lanes.filter((l) => l.kinds.every(isSideJobKind));
  const main = lanes.filter((l) => !side.includes(l));
  worker.log(
    `ready (${db.dialect}, lease ${cfg.leaseSeconds}s, kinds: ${main.flatMap((l) => l.kinds).join(', ') || 'none'}${side.length ? `; ${side.length} side slots: ${side[0]!.kinds.join(', ')}` : ''})`,
  );
  await Promise.all(lanes.map((l) => l.start()));
}
