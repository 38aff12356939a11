import { router } from './init.ts';
import { runsRouter } from './routers/runs.ts';
import { systemRouter } from './routers/system.ts';
import { datasetsRouter } from './routers/datasets.ts';
import { shareRouter } from './routers/share.ts';
import { recipesRouter } from './routers/recipes.ts';
import { trajectoriesRouter } from './routers/trajectories.ts';
import { evalsRouter } from './routers/evals.ts';
import { modelsRouter } from './routers/models.ts';
import { adminRouter, authRouter } from './routers/admin.ts';

export const appRouter = router({
  runs: runsRouter,
  system: systemRouter,
  datasets: datasetsRouter,
  share: shareRouter,
  recipes: recipesRouter,
  trajectories: trajectoriesRouter,
  evals: evalsRouter,
  models: modelsRouter,
  admin: adminRouter,
  auth: authRouter,
});

export type AppRouter = typeof appRouter;
