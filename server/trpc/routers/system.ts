import { adminProcedure, publicProcedure, router } from '../init.ts';
import { latestDiagnostics, launchDiagnostics } from '../../lifecycle.ts';
import { listLeasedJobs } from '../../store/jobs.ts';
import { config } from '../../config.ts';
import { readSupervisor } from '../../system/supervisor.ts';

export const systemRouter = router({
  health: publicProcedure.query(async ({ ctx }) => {
    const busyWorkers = await listLeasedJobs(ctx.db);
    return { dialect: ctx.db.dialect, now: Date.now(), busyWorkers };
  }),
  latestDiagnostics: adminProcedure.query(({ ctx }) => latestDiagnostics(ctx.db)),
  /** The worker's restarts under `npm start` (null when the web server runs without its supervisor). */
  supervisor: adminProcedure.query(() => readSupervisor(config().dataDir)),
  runDiagnostics: adminProcedure.mutation(({ ctx }) => launchDiagnostics(ctx.db)),
});
