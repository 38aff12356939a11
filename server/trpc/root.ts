import { router } from './init.ts';
import { runsRouter } from './routers/runs.ts';
import { systemRouter } from './routers/system.ts';
import { datasetsRouter } from './routers/datasets.ts';
import { shareRouter } from './routers/share.ts';

export const appRouter = router({
  runs: runsRouter,
  system: systemRouter,
  datasets: datasetsRouter,
  share: shareRouter,
});

export type AppRouter = typeof appRouter;
