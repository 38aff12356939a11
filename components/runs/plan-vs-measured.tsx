'use client';
/**
 * Predicted against measured step time on the run page: the plan of the run's frozen recipe on this
 * machine (contracts/plan.ts, the stated defaults, as `npx toolsmith plan --cluster local` prints it) beside the
 * median of the RL steps measured so far, and the same plan calibrated on those steps. The embedded model's size is
 * computed from its shape; a named model's is read from the models registry (none shown for one not registered).
 */
import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import { CLUSTER_PRESETS, DEFAULT_CONSTANTS, embeddedParams, parseCluster, planRun } from '../../contracts/plan.ts';
import { CALIBRATION_KEYS, calibrate, measuredSteps, medianStepSeconds } from '../../contracts/plan-calibration.ts';
import { validateRecipe } from '../../contracts/recipe.ts';

type Points = Record<string, { step: number; value: number }[]>;

export function PlanVsMeasured({ spec, series, runId }: { spec: unknown; series: Points; runId: string }) {
  const trpc = useTRPC();
  const recipe = useMemo(() => {
    const v = validateRecipe(spec);
    return v.ok ? v.recipe : null;
  }, [spec]);
  const named = recipe?.model.kind === 'model' ? recipe.model.name : null;
  const models = useQuery({ ...trpc.models.list.queryOptions(), enabled: named !== null });
  const namedParams = named ? (models.data?.find((m) => m.name === named)?.parameters ?? null) : null;
  const view = useMemo(() => {
    if (!recipe) return null;
    const params = recipe.model.kind === 'embedded' ? embeddedParams(recipe.model) : namedParams;
    if (!params) return null;
    const steps = measuredSteps(recipe, Object.fromEntries(CALIBRATION_KEYS.map((k) => [k, series[k] ?? []])));
    if (steps.length === 0) return null;
    const cluster = parseCluster(CLUSTER_PRESETS.local);
    return {
      predicted: planRun(recipe, params, cluster, DEFAULT_CONSTANTS).stepSeconds,
      calibrated: planRun(recipe, params, cluster, calibrate(steps, runId, undefined, params)).stepSeconds,
      measured: medianStepSeconds(steps),
      steps: steps.length,
    };
  }, [recipe, namedParams, series, runId]);
  if (!view) return null;
  const pct = (x: number) =>
    `${x >= view.measured ? '+' : ''}${((100 * (x - view.measured)) / view.measured).toFixed(0)}%`;
  return (
    <p className="muted" role="note" aria-label="Plan against measured">
      RL step: measured median {view.measured.toFixed(2)} s over {view.steps} step{view.steps > 1 ? 's' : ''}; planned
      before launch {view.predicted.toFixed(2)} s ({pct(view.predicted)}, the planner's defaults); calibrated on these
      steps {view.calibrated.toFixed(2)} s ({pct(view.calibrated)})
    </p>
  );
}
