'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import { parseRewardWeights } from '../../contracts/reward-weights.ts';

/**
 * Import a run trained elsewhere (prime-rl, verl, NeMo-RL, TRL, ART, rLLM, ATIF): a folder under one of the server's
 * import roots, read once or followed while it trains. The server checks the path; the browser only names it.
 */
export function ImportRunDialog() {
  const trpc = useTRPC();
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [path, setPath] = useState('');
  const [format, setFormat] = useState('');
  const [name, setName] = useState('');
  // Off unless asked for, as in the API: a followed import holds a worker slot until it is stopped.
  const [follow, setFollow] = useState(false);
  const [weights, setWeights] = useState('');
  const [version, setVersion] = useState('');
  const [invalid, setInvalid] = useState<string | null>(null);
  const roots = useQuery({ ...trpc.runs.importRoots.queryOptions(), enabled: open });
  const launch = useMutation(
    trpc.runs.importFolder.mutationOptions({ onSuccess: ({ runId }) => router.push(`/runs/${runId}`) }),
  );
  if (!open)
    return (
      <button type="button" onClick={() => setOpen(true)}>
        Import run
      </button>
    );
  return (
    <form
      className="panel"
      aria-label="Import a run trained elsewhere"
      onSubmit={(e) => {
        e.preventDefault();
        let parsed: Record<string, number> | undefined;
        try {
          parsed = weights.trim() ? parseRewardWeights(weights, 'Reward weights') : undefined;
        } catch (err) {
          setInvalid((err as Error).message);
          return;
        }
        setInvalid(null);
        launch.mutate({
          path,
          follow,
          ...(format ? { format: format as never } : {}),
          ...(name.trim() ? { name: name.trim() } : {}),
          ...(parsed ? { weights: parsed } : {}),
          ...(version.trim() ? { frameworkVersion: version.trim() } : {}),
        });
      }}
    >
      <label>
        Folder{' '}
        <input
          aria-label="Folder"
          value={path}
          onChange={(e) => setPath(e.target.value)}
          placeholder={roots.data?.roots[0] ? `${roots.data.roots[0]}/…` : 'a folder under an import root'}
          size={48}
          required
        />
      </label>{' '}
      <label>
        Format{' '}
        <select aria-label="Format" value={format} onChange={(e) => setFormat(e.target.value)}>
          <option value="">detect from the layout</option>
          {roots.data?.formats.map((f) => (
            <option key={f} value={f}>
              {f}
            </option>
          ))}
        </select>
      </label>{' '}
      <label>
        Name <input aria-label="Name" value={name} onChange={(e) => setName(e.target.value)} size={20} />
      </label>{' '}
      <label>
        Reward weights (TRL){' '}
        <input
          aria-label="Reward weights"
          value={weights}
          onChange={(e) => setWeights(e.target.value)}
          placeholder="name=1,name=0.5"
          size={20}
        />
      </label>{' '}
      <label>
        Framework version{' '}
        <input aria-label="Framework version" value={version} onChange={(e) => setVersion(e.target.value)} size={10} />
      </label>{' '}
      <label>
        <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> Follow while it trains
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
      {invalid && (
        <p className="error" role="alert">
          {invalid}
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
