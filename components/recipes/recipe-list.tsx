'use client';
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useTRPC } from '@/lib/trpc.ts';
import { formatTime } from '../ui/format.ts';

function NewFromTemplate() {
  return (
    <div className="row" role="group" aria-label="New from template">
      <span className="muted">New from template:</span>
      <Link className="rd-button-link" href="/recipes/new?template=embedded">
        embedded-arith
      </Link>
      <Link className="rd-button-link" href="/recipes/new?template=micro">
        micro
      </Link>
    </div>
  );
}

/** Every recipe name with its latest version. */
export function RecipeList() {
  const trpc = useTRPC();
  const list = useQuery(trpc.recipes.list.queryOptions());
  return (
    <div>
      <div className="row" style={{ justifyContent: 'space-between' }}>
        <h1>Recipes</h1>
        <NewFromTemplate />
      </div>
      {list.error && (
        <div className="panel error" role="alert">
          Could not list recipes: {list.error.message}
        </div>
      )}
      {!list.error && !list.data && <div className="panel empty">Loading recipes…</div>}
      {list.data && list.data.length === 0 && (
        <div className="panel empty">
          No recipes yet. Start from the embedded-arith template (SFT then three GRPO-RoC stages, ~15 min on a CPU) or
          the seconds-long micro one.
        </div>
      )}
      {list.data && list.data.length > 0 && (
        <table aria-label="Recipes">
          <thead>
            <tr>
              <th>Name</th>
              <th>Latest</th>
              <th>Versions</th>
              <th>Stages</th>
              <th>Total steps</th>
              <th>Saved</th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((r) => (
              <tr key={r.id}>
                <td>
                  <Link href={`/recipes/${encodeURIComponent(r.name)}`}>{r.name}</Link>
                  {r.description && <div className="muted recipe-desc">{r.description}</div>}
                </td>
                <td>
                  <Link
                    href={`/recipes/${encodeURIComponent(r.name)}?v=${r.version}`}
                    aria-label={`${r.name} version ${r.version}`}
                  >
                    v{r.version}
                  </Link>
                </td>
                <td>{r.versions}</td>
                <td>
                  <div className="stage-chips">
                    {r.stages.map((s, i) => (
                      <span key={i} className={`badge stage-chip ${s.type}`}>
                        {s.type} · {s.name}
                      </span>
                    ))}
                  </div>
                </td>
                <td>{r.totalSteps.toLocaleString()}</td>
                <td>{formatTime(r.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
