'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import type { RunPlacement } from '../../contracts/jobs.ts';
import type { Spec } from './path.ts';

const keep = <T>(previous: T | undefined) => previous;

/**
 * The recipe actions' state: the version note and clone name, save, clone and launch (each opening what it made),
 * where a run goes (the workers or the Ray cluster, when there is one), and the preflight of the spec.
 */
export function useRecipeActions(spec: Spec, valid: boolean) {
  const trpc = useTRPC();
  const router = useRouter();
  const queryClient = useQueryClient();
  const [note, setNote] = useState('');
  const [cloneName, setCloneName] = useState('');
  const [message, setMessage] = useState<string | null>(null);
  const [cluster, setCluster] = useState<RunPlacement>('local');
  const placements = useQuery(trpc.recipes.placements.queryOptions());

  const onSaved = (r: { status: string; recipe: { name: string; version: number } }) => {
    void queryClient.invalidateQueries(trpc.recipes.pathFilter());
    setMessage(
      r.status === 'unchanged'
        ? `Unchanged: same as ${r.recipe.name} v${r.recipe.version}; nothing saved.`
        : `Saved ${r.recipe.name} v${r.recipe.version}.`,
    );
    if (r.status === 'created') {
      setNote('');
      setCloneName('');
    }
    router.push(`/recipes/${encodeURIComponent(r.recipe.name)}?v=${r.recipe.version}`);
  };
  const save = useMutation(trpc.recipes.save.mutationOptions({ onSuccess: onSaved }));
  const clone = useMutation(trpc.recipes.save.mutationOptions({ onSuccess: onSaved }));
  const launch = useMutation(
    trpc.recipes.launch.mutationOptions({
      onSuccess: (r) => router.push(`/runs/${encodeURIComponent(r.runId)}`),
    }),
  );
  // The worker's preflight with what the web server knows: a missing model or dataset is named, with its
  // fix when the catalogue has it, and Launch waits until nothing is missing.
  const preflight = useQuery(trpc.recipes.preflight.queryOptions({ spec }, { enabled: valid, placeholderData: keep }));
  const issues = valid ? (preflight.data ?? []) : [];
  const busy = save.isPending || clone.isPending || launch.isPending;
  return {
    note,
    setNote,
    cloneName,
    setCloneName,
    message,
    cluster,
    setCluster,
    placements,
    save,
    clone,
    launch,
    preflight,
    issues,
    busy,
  };
}
