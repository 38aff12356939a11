'use client';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';

const show = (v: unknown) => (v === undefined ? '—' : JSON.stringify(v));

/** Leaf differences between another stored version (old) and the one shown (new). */
export function VersionDiff({
  currentId,
  versions,
}: {
  currentId: string;
  versions: { id: string; version: number; name: string }[];
}) {
  const trpc = useTRPC();
  const others = versions.filter((v) => v.id !== currentId);
  const [other, setOther] = useState('');
  const diff = useQuery(trpc.recipes.diff.queryOptions({ a: other, b: currentId }, { enabled: other !== '' }));
  return (
    <section className="recipe-diff" aria-label="Compare versions">
      <h2>Compare versions</h2>
      {others.length === 0 ? (
        <p className="muted">This is the only version; save a change to compare.</p>
      ) : (
        <div className="row">
          <label htmlFor="diff-with">Compare with</label>
          <select id="diff-with" value={other} onChange={(e) => setOther(e.target.value)}>
            <option value="">choose a version…</option>
            {others.map((v) => (
              <option key={v.id} value={v.id}>
                {v.name} v{v.version}
              </option>
            ))}
          </select>
          <span className="muted">(stored versions; unsaved edits are not included)</span>
        </div>
      )}
      {diff.error && (
        <p className="error" role="alert">
          Could not diff: {diff.error.message}
        </p>
      )}
      {other !== '' && diff.isPending && <p className="muted">Comparing…</p>}
      {diff.data && diff.data.length === 0 && <p className="muted">No differences.</p>}
      {diff.data && diff.data.length > 0 && (
        <table aria-label="Version differences" className="diff-table">
          <thead>
            <tr>
              <th>Path</th>
              <th>Change</th>
              <th>Old</th>
              <th>New</th>
            </tr>
          </thead>
          <tbody>
            {diff.data.map((d) => (
              <tr key={d.path} className={d.kind}>
                <td>
                  <code>{d.path || '(root)'}</code>
                </td>
                <td>{d.kind}</td>
                <td>
                  <code>{show(d.a)}</code>
                </td>
                <td>
                  <code>{show(d.b)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
