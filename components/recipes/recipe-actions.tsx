'use client';
import type { RunPlacement } from '../../contracts/jobs.ts';
import type { Spec } from './path.ts';
import { PreflightIssues } from './preflight-issues.tsx';
import { useRecipeActions } from './use-recipe-actions.ts';

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
  const a = useRecipeActions(spec, valid);
  const { note, setNote, message, cluster, setCluster, placements } = a;
  const { save, clone, launch, preflight, issues, busy } = a;
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
      <CloneRow a={a} spec={spec} name={name} valid={valid} currentId={currentId} />
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

/** Clone the recipe under a new name, with the version note. */
function CloneRow({
  a,
  spec,
  name,
  valid,
  currentId,
}: {
  a: ReturnType<typeof useRecipeActions>;
  spec: Spec;
  name: string;
  valid: boolean;
  currentId: string | null;
}) {
  return (
    <div className="row">
      <label htmlFor="recipe-clone-name">Clone as</label>
      <input
        id="recipe-clone-name"
        type="text"
        value={a.cloneName}
        placeholder="new-recipe-name"
        onChange={(e) => a.setCloneName(e.target.value)}
      />
      <button
        type="button"
        disabled={!valid || a.busy || a.cloneName.trim() === '' || a.cloneName.trim() === name}
        onClick={() => {
          const n = a.cloneName.trim();
          a.clone.mutate({ spec: { ...spec, name: n }, name: n, note: a.note || null, parentId: currentId });
        }}
      >
        Clone
      </button>
    </div>
  );
}
