import { config } from '../server/config.ts';
import { openDatabase } from '../server/db/client.ts';
import { migrate } from '../server/db/migrate.ts';
import { redact } from '../server/db/url.ts';
import { parseFlags } from './args.ts';
import type { Command } from './command.ts';

/** The commands that set up and run the service itself: migrate, worker, diagnostics, start. */

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'apply the SQL migrations to DATABASE_URL and seed the built-in recipes (idempotent)',
  async run() {
    const url = config().databaseUrl;
    const r = await migrate(url);
    const db = await openDatabase(url);
    try {
      const { seedDefaultRecipes } = await import('../server/store/recipes.ts');
      await seedDefaultRecipes(db);
    } finally {
      await db.close();
    }
    console.log(
      `${r.dialect} ${redact(url)}: applied ${r.applied.length} migration(s)${r.applied.length ? ` (${r.applied.join(', ')})` : ''}, ${r.alreadyApplied} already applied; built-in recipes seeded`,
    );
  },
};

export const workerCommand: Command = {
  name: 'worker',
  summary: 'run a worker that leases jobs from DATABASE_URL (run several, on any machine)',
  usage: '[--kinds diagnostics,train]',
  async run(args) {
    const f = parseFlags(args, { kinds: 'string' });
    const { runWorker } = await import('../workers/main.ts');
    await runWorker({ kinds: typeof f.kinds === 'string' ? f.kinds.split(',').filter(Boolean) : undefined });
  },
};

export const diagnosticsCommand: Command = {
  name: 'diagnostics',
  summary:
    'check Python, its packages, bubblewrap, onnxruntime, the database, disk and cores, with a fix for each problem',
  usage: '[--queue]  (--queue: let a running worker do it and stream its events)',
  async run(args) {
    const f = parseFlags(args, { queue: 'boolean' });
    const url = config().databaseUrl;
    await migrate(url);
    const db = await openDatabase(url);
    try {
      if (!f.queue) {
        const { runChecks } = await import('../workers/diagnostics/checks.ts');
        const { checkDeps } = await import('../workers/handlers/diagnostics.ts');
        const report = await runChecks(db, checkDeps, (r) => {
          console.log(
            `${r.status === 'ok' ? 'ok  ' : r.status === 'warn' ? 'WARN' : 'FAIL'} ${r.name.padEnd(18)} ${r.detail}${r.fix ? `\n     fix: ${r.fix}` : ''}`,
          );
        });
        return report.ok ? 0 : 1;
      }
      const { launchDiagnostics } = await import('../server/lifecycle.ts');
      const { followRun } = await import('./follow.ts');
      const { runId } = await launchDiagnostics(db);
      console.log(`queued diagnostics run ${runId}; waiting for a worker…`);
      return await followRun(db, runId);
    } finally {
      await db.close();
    }
  },
};

export const startCommand: Command = {
  name: 'start',
  summary: 'set up and serve the workbench with one worker (same as npm start)',
  async run() {
    const { spawnSync } = await import('node:child_process');
    return spawnSync(process.execPath, ['scripts/start.mjs'], { stdio: 'inherit' }).status ?? 1;
  },
};
