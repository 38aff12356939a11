import { router } from './init.ts';
import { runsRouter } from './routers/runs.ts';
import { systemRouter } from './routers/system.ts';

export const appRouter = router({
  runs: runsRouter,
  system: systemRouter,
});

export type AppRouter = typeof appRouter;
