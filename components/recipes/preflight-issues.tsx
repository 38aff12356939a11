'use client';
import Link from 'next/link';
import type { PreflightIssue } from '../../contracts/preflight.ts';
import { useCatalogue } from '../catalogue/catalogue-table.tsx';

/**
 * What a worker would refuse the recipe for, as the designer shows it: each missing piece with the action that
 * fixes it — fetch the catalogue model or add the catalogue dataset right here (as a job; its run is linked), or the
 * command for one the catalogue does not have.
 */
export function PreflightIssues({ issues }: { issues: PreflightIssue[] }) {
  const models = useCatalogue('models');
  const datasets = useCatalogue('datasets');
  return (
    <div className="panel error" role="alert" aria-label="Before launch">
      <strong>Before launch</strong>
      <ul>
        {issues.map((i) => {
          const c = i.fix?.kind === 'fetch-model' ? models : i.fix?.kind === 'add-dataset' ? datasets : null;
          const row = i.fix && c?.rows.data?.find((r) => r.name === i.fix!.name);
          const verb = i.fix?.kind === 'fetch-model' ? 'Fetch' : 'Add';
          return (
            <li key={i.message}>
              {i.message}{' '}
              {i.fix && c && row?.run ? (
                <Link href={`/runs/${encodeURIComponent(row.run.id)}`}>
                  {row.run.status === 'queued' ? 'queued · waiting for a worker' : `${verb.toLowerCase()}ing…`}
                </Link>
              ) : i.fix && c ? (
                <button type="button" disabled={c.pending} onClick={() => c.start(i.fix!.name)}>
                  {verb} {i.fix.name}
                </button>
              ) : null}
              {c?.error && <span className="error"> {c.error}</span>}
            </li>
          );
        })}
      </ul>
    </div>
  );
}
