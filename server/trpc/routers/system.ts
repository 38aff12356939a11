import { adminProcedure, publicProcedure, router } from '../init.ts';
import { latestDiagnostics, launchDiagnostics } from '../../lifecycle.ts';
import { listLeasedJobs } from '../../store/jobs.ts';

export const systemRouter = router({
  health: publicProcedure.query(async ({ ctx }) => {
    const busyWorkers = await listLeasedJobs(ctx.db);
    return { dialect: ctx.db.dialect, now: Date.now(), busyWorkers };
  }),
  latestDiagnostics: adminProcedure.query(({ ctx }) => latestDiagnostics(ctx.db)),
  runDiagnostics: adminProcedure.mutation(({ ctx }) => launchDiagnostics(ctx.db)),
});
