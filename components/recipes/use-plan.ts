'use client';
import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import { CLUSTER_PRESETS, DEFAULT_CONSTANTS, embeddedParams, parseCluster, planRun } from '../../contracts/plan.ts';
import type { Recipe } from '../../contracts/recipe.ts';

export type Preset = keyof typeof CLUSTER_PRESETS;

/**
 * The Plan panel's state: the cluster preset, the model's parameter count (an embedded model's from its shape, a
 * registered one's from the registry, else typed in), the stored evaluation sets' sizes, and the plan over them.
 */
export function usePlan(recipe: Recipe | null) {
  const trpc = useTRPC();
  const [preset, setPreset] = useState<Preset>('local');
  // No default size for a named model: a plan for the wrong size would read as true.
  const [paramsText, setParamsText] = useState('');
  const modelName = recipe?.model.kind === 'model' ? recipe.model.name : null;
  const models = useQuery(trpc.models.list.queryOptions(undefined, { enabled: modelName !== null }));
  const registered = modelName ? models.data?.find((m) => m.name === modelName) : undefined;
  const registeredParams = registered?.parameters ?? null;
  const askParams = modelName !== null && models.isSuccess && registeredParams === null;
  const given = paramsText.trim() === '' ? Number.NaN : Number(paramsText);
  const params = recipe
    ? recipe.model.kind === 'embedded'
      ? embeddedParams(recipe.model)
      : (registeredParams ?? (askParams ? given : Number.NaN))
    : Number.NaN;
  // Stored evaluation sets are sized from the datasets registry (a set not found is named as not counted).
  const storedEval = recipe?.eval?.datasets.some((d) => d.kind === 'stored') ?? false;
  const datasets = useQuery(trpc.datasets.list.queryOptions({ latestOnly: true, limit: 500 }, { enabled: storedEval }));
  const plan = useMemo(() => {
    if (!recipe || !Number.isFinite(params) || params < 1) return null;
    const datasetSplits = Object.fromEntries((datasets.data ?? []).map((d) => [d.name, d.splits]));
    return planRun(recipe, params, parseCluster(CLUSTER_PRESETS[preset]), DEFAULT_CONSTANTS, { datasetSplits });
  }, [recipe, params, preset, datasets.data]);
  return { preset, setPreset, paramsText, setParamsText, modelName, registeredParams, askParams, given, plan };
}
