import { config } from '../server/config.ts';
import { openDatabase } from '../server/db/client.ts';
import { migrate } from '../server/db/migrate.ts';
import { errorMessage } from '../contracts/errors.ts';
import { reportFatal } from '../server/errors.ts';
import { handlers } from './handlers/index.ts';
import { Worker } from './worker.ts';

/**
 * Worker process: `npx toolsmith worker` (npm start runs one). Any number may run against one PostgreSQL,
 * on any machine. SIGTERM/SIGINT: finish or release the current job, then exit 0.
 */
export async function runWorker(opts: { kinds?: string[] } = {}): Promise<void> {
  const cfg = config();
  await migrate(cfg.databaseUrl);
  const db = await openDatabase(cfg.databaseUrl);
  const worker = new Worker(db, handlers(), {
    id: cfg.workerId,
    leaseMs: cfg.leaseSeconds * 1000,
    heartbeatMs: cfg.heartbeatSeconds * 1000,
    pollMs: cfg.pollMs,
    shutdownGraceMs: cfg.shutdownGraceSeconds * 1000,
    kinds: opts.kinds,
  });
  // An exception escaping a handler (from a timer, a stream...) fails that job, not the worker.
  process.on('uncaughtException', (err) => {
    worker.log(
      `uncaught exception: ${errorMessage(err)}${worker.crashCurrent(err) ? ' (failing the current job)' : ''}`,
    );
  });
  process.on('unhandledRejection', (err) => {
    worker.log(
      `unhandled rejection: ${errorMessage(err)}${worker.crashCurrent(err) ? ' (failing the current job)' : ''}`,
    );
  });
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    worker.log(`${signal}: stopping`);
    worker.stop().then(
      () => db.close().finally(() => process.exit(0)),
      (e) => {
        reportFatal('worker', e);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  worker.log(
    `ready (${db.dialect}, lease ${cfg.leaseSeconds}s, kinds: ${opts.kinds?.join(',') || Object.keys(handlers()).join(', ')})`,
  );
  await worker.start();
}
