import { publicProcedure, router } from '../init.ts';
import { latestDiagnostics, launchDiagnostics } from '../../lifecycle.ts';

export const systemRouter = router({
  health: publicProcedure.query(async ({ ctx }) => {
    const workers = await ctx.db.prisma.job.findMany({
      where: { status: 'leased' },
      select: { leaseOwner: true, kind: true, runId: true, heartbeatAt: true },
    });
    return { dialect: ctx.db.dialect, now: Date.now(), busyWorkers: workers };
  }),
  latestDiagnostics: publicProcedure.query(({ ctx }) => latestDiagnostics(ctx.db)),
  runDiagnostics: publicProcedure.mutation(({ ctx }) => launchDiagnostics(ctx.db)),
});
