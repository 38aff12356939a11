'use client';
import { useState } from 'react';
import { useImportRun } from './use-import-run.ts';

/**
 * Import a run trained elsewhere (prime-rl, verl, NeMo-RL, TRL, ART, rLLM, ATIF): a folder under one of the server's
 * import roots, read once or followed while it trains. The server checks the path; the browser only names it.
 */
export function ImportRunDialog() {
  const [open, setOpen] = useState(false);
  const f = useImportRun(open);
  const { roots, launch } = f;
  if (!open)
    return (
      <button type="button" onClick={() => setOpen(true)}>
        Import run
      </button>
    );
  return (
    <form className="panel" aria-label="Import a run trained elsewhere" onSubmit={f.submit}>
      <label>
        Folder{' '}
        <input
          aria-label="Folder"
          value={f.path}
          onChange={(e) => f.setPath(e.target.value)}
          placeholder={roots.data?.roots[0] ? `${roots.data.roots[0]}/…` : 'a folder under an import root'}
          size={48}
          required
        />
      </label>{' '}
      <label>
        Format{' '}
        <select aria-label="Format" value={f.format} onChange={(e) => f.setFormat(e.target.value)}>
          <option value="">detect from the layout</option>
          {roots.data?.formats.map((fmt) => (
            <option key={fmt} value={fmt}>
              {fmt}
            </option>
          ))}
        </select>
      </label>{' '}
      <label>
        Name <input aria-label="Name" value={f.name} onChange={(e) => f.setName(e.target.value)} size={20} />
      </label>{' '}
      <label>
        Reward weights (TRL){' '}
        <input
          aria-label="Reward weights"
          value={f.weights}
          onChange={(e) => f.setWeights(e.target.value)}
          placeholder="name=1,name=0.5"
          size={20}
        />
      </label>{' '}
      <label>
        Framework version{' '}
        <input
          aria-label="Framework version"
          value={f.version}
          onChange={(e) => f.setVersion(e.target.value)}
          size={10}
        />
      </label>{' '}
      <label>
        <input type="checkbox" checked={f.follow} onChange={(e) => f.setFollow(e.target.checked)} /> Follow while it
        trains
      </label>{' '}
      <button type="submit" disabled={launch.isPending}>
        {launch.isPending ? 'Importing…' : 'Import'}
      </button>{' '}
      <button type="button" onClick={() => setOpen(false)}>
        Close
      </button>
      {roots.data && (
        <p className="muted">import roots (TOOLSMITH_IMPORT_ROOTS): {roots.data.roots.join(', ') || 'none'}</p>
      )}
      {f.invalid && (
        <p className="error" role="alert">
          {f.invalid}
        </p>
      )}
      {launch.error && (
        <p className="error" role="alert">
          {launch.error.message}
        </p>
      )}
    </form>
  );
}
