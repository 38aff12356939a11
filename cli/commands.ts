import { config } from '../server/config.ts';
import { openDatabase } from '../server/db/client.ts';
import { migrate } from '../server/db/migrate.ts';
import { redact } from '../server/db/url.ts';
import { launchDiagnostics } from '../server/lifecycle.ts';
import { followRun } from './follow.ts';
import { parseFlags } from './args.ts';
import { UserError } from '../contracts/errors.ts';
import { datasetCommand } from './dataset.ts';
import { exportCommand, importCommand } from './import.ts';
import { verifyCommand } from './verify.ts';
import { planCommand } from './plan.ts';
import { serveModelCommand } from './serve-model.ts';
import { evalCommand } from './eval.ts';
import { trainCommand } from './train.ts';
import { rayEntryCommand } from './ray-entry.ts';
import { modelCommand } from './model.ts';
import { tokenCommand, userCommand } from './user.ts';

export interface Command {
  name: string;
  summary: string;
  usage?: string;
  run(args: string[]): Promise<number | void>;
}

/** Subcommands of `npx toolsmith`. Later issues add theirs here (sandbox, verify, serve-model, ...). */
export const commands: Command[] = [
  datasetCommand,
  planCommand,
  importCommand,
  exportCommand,
  modelCommand,
  userCommand,
  tokenCommand,
  {
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
  },
  {
    name: 'worker',
    summary: 'run a worker that leases jobs from DATABASE_URL (run several, on any machine)',
    usage: '[--kinds diagnostics,train]',
    async run(args) {
      const f = parseFlags(args, { kinds: 'string' });
      const { runWorker } = await import('../workers/main.ts');
      await runWorker({ kinds: typeof f.kinds === 'string' ? f.kinds.split(',').filter(Boolean) : undefined });
    },
  },
  {
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
        const { runId } = await launchDiagnostics(db);
        console.log(`queued diagnostics run ${runId}; waiting for a worker…`);
        return await followRun(db, runId);
      } finally {
        await db.close();
      }
    },
  },
  {
    name: 'sandbox',
    summary: 'the Python code sandbox: run one call from stdin, or serve a pool over HTTP for other machines',
    usage: `run|serve [options]

  sandbox run [--timeout S] [--memory MB]
      reads Python code from stdin, runs it in a one-interpreter pool, prints the SandboxResult as one JSON
      object on stdout; exits 0 whenever a result was produced, whatever its status (2 for bad options)

  sandbox serve [--token-file FILE] [--port P] [--host H] [--size N] [--allowed-hosts H,H]
                [--max-memory-mb M] [--max-timeout-s S] [--max-output-mb B]
      serves a sandbox pool over HTTP (POST /run, POST /run/batch, GET /health, GET /metrics; every route needs
      Authorization: Bearer TOKEN). The token comes from TOOLSMITH_SANDBOX_TOKEN or the first line of --token-file,
      never the command line; without one it refuses to start. Binds 127.0.0.1:8700 by default (--host 0.0.0.0 to
      serve other machines; Host names beyond this machine's addresses: --allowed-hosts). A call asking for more
      than --max-memory-mb (4096), --max-timeout-s (600) or --max-output-mb (64) is refused with 400. SIGTERM/SIGINT
      stop it cleanly. Workers use the nodes when TOOLSMITH_SANDBOX_URLS=http://host:port,... and
      TOOLSMITH_SANDBOX_TOKEN are set.`,
    async run(args) {
      const [sub, ...rest] = args;
      const { sandboxRun, sandboxServe } = await import('./sandbox.ts');
      if (sub === 'run') return sandboxRun(rest);
      if (sub === 'serve') return sandboxServe(rest);
      throw new UserError(sub ? `unknown sandbox subcommand "${sub}"` : 'sandbox needs a subcommand', {
        fix: 'use `npx toolsmith sandbox run` or `npx toolsmith sandbox serve` (see --help)',
      });
    },
  },
  verifyCommand,
  serveModelCommand,
  evalCommand,
  trainCommand,
  rayEntryCommand,
  {
    name: 'start',
    summary: 'set up and serve the workbench with one worker (same as npm start)',
    async run() {
      const { spawnSync } = await import('node:child_process');
      return spawnSync(process.execPath, ['scripts/start.mjs'], { stdio: 'inherit' }).status ?? 1;
    },
  },
];
