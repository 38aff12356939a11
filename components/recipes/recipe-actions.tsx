'use client';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import type { Spec } from './path.ts';
import { PreflightIssues } from './preflight-issues.tsx';
import type { RunPlacement } from '../../contracts/jobs.ts';

const keep = <T,>(previous: T | undefined) => previous;

/** Save as a new version, clone under a new name, launch a run. */
export function RecipeActions({
  spec,
  currentId,
  dirty,
  valid,
}: {
  spec: Spec;
  currentId: string | null;
  dirty: boolean;
  valid: boolean;
}) {
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
  const name = typeof spec.name === 'string' ? spec.name : '';

  return (
    <section className="recipe-actions panel" aria-label="Recipe actions">
      <div className="field">
        <label htmlFor="recipe-note">Version note</label>
        <input
          id="recipe-note"
          type="text"
          value={note}
          maxLength={2000}
          placeholder="what changed and why"
          onChange={(e) => setNote(e.target.value)}
        />
      </div>
      <div className="row">
        <button
          type="button"
          disabled={!valid || busy}
          onClick={() => save.mutate({ spec, note: note || null, parentId: currentId })}
        >
          {currentId ? 'Save as new version' : 'Save'}
        </button>
        <button
          type="button"
          disabled={!valid || busy || issues.length > 0 || preflight.isPending}
          title={
            issues.length > 0
              ? 'Something the run needs is missing: see "Before launch"'
              : dirty || !currentId
                ? 'Saves the edits as a version first, then launches it'
                : 'Launches this version'
          }
          onClick={() => launch.mutate({ ...(currentId && !dirty ? { id: currentId } : { spec }), cluster })}
        >
          Launch run
        </button>
        {placements.data?.ray && (
          <>
            <label htmlFor="recipe-cluster">on</label>
            <select
              id="recipe-cluster"
              value={cluster}
              title="Ray: the run is submitted to the Ray cluster as a job; its trainer ranks, sandbox nodes and rollout servers are placed there"
              onChange={(e) => setCluster(e.target.value as RunPlacement)}
            >
              <option value="local">the workers</option>
              <option value="ray">the Ray cluster</option>
            </select>
          </>
        )}
        {dirty && <span className="muted">unsaved edits{name ? ` (save goes to "${name}")` : ''}</span>}
      </div>
      <div className="row">
        <label htmlFor="recipe-clone-name">Clone as</label>
        <input
          id="recipe-clone-name"
          type="text"
          value={cloneName}
          placeholder="new-recipe-name"
          onChange={(e) => setCloneName(e.target.value)}
        />
        <button
          type="button"
          disabled={!valid || busy || cloneName.trim() === '' || cloneName.trim() === name}
          onClick={() => {
            const n = cloneName.trim();
            clone.mutate({ spec: { ...spec, name: n }, name: n, note: note || null, parentId: currentId });
          }}
        >
          Clone
        </button>
      </div>
      {!valid && <p className="muted">Fix the errors to save or launch.</p>}
      {issues.length > 0 && <PreflightIssues issues={issues} />}
      {message && (
        <p className="muted" role="status">
          {message}
        </p>
      )}
      {[save.error, clone.error, launch.error].map(
        (e, i) =>
          e && (
            <p key={i} className="error" role="alert">
              {['Save', 'Clone', 'Launch'][i]} failed: {e.message}
            </p>
          ),
      )}
    </section>
  );
}
