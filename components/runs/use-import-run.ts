'use client';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { type FormEvent, useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import { parseRewardWeights } from '../../contracts/reward-weights.ts';

/** The import form's fields, the server's import roots and formats (read while open), and the import itself. */
export function useImportRun(open: boolean) {
  const trpc = useTRPC();
  const router = useRouter();
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
  const submit = (e: FormEvent) => {
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
  };
  return {
    path,
    setPath,
    format,
    setFormat,
    name,
    setName,
    follow,
    setFollow,
    weights,
    setWeights,
    version,
    setVersion,
    invalid,
    roots,
    launch,
    submit,
  };
}
