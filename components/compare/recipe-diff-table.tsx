import { formatValue } from '../ui/format.ts';
import type { SpecDiff } from '../../contracts/recipe-diff.ts';
import { recipeDiffRows } from './recipe-diff.ts';

/** The recipe differences of the runs: one row per differing path, one column per run (the first is the base). */
export function RecipeDiffTable({
  runs,
  recipeDiff,
}: {
  runs: { id: string; name: string; recipeSpec?: unknown }[];
  recipeDiff: { runId: string; diff: SpecDiff[] }[];
}) {
  const ids = runs.map((r) => r.id);
  const specs = Object.fromEntries(runs.filter((r) => r.recipeSpec !== undefined).map((r) => [r.id, r.recipeSpec]));
  const rows = recipeDiffRows(ids, recipeDiff, Object.keys(specs).length === runs.length ? specs : undefined);
  if (rows.length === 0)
    return (
      <section className="panel empty" aria-label="Recipe differences">
        The runs' recipes are identical.
      </section>
    );
  return (
    // Focusable so that a keyboard can scroll a wide diff sideways.
    <section className="cmp-diff-wrap" aria-label="Recipe differences" tabIndex={0}>
      <table className="cmp-diff" aria-label="Recipe differences table">
        <thead>
          <tr>
            <th scope="col">Path</th>
            {runs.map((r, i) => (
              <th scope="col" key={r.id}>
                {i === 0 ? `${r.name} (base)` : r.name}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.path || '(root)'}>
              <th scope="row">
                <code>{row.path || '(whole recipe)'}</code>
              </th>
              {row.cells.map((c, i) => (
                <td key={ids[i]} className={c.same ? 'cmp-same' : i > 0 ? 'cmp-changed' : undefined}>
                  {c.present ? (
                    <code title={formatValue(c.value, 10_000)}>{formatValue(c.value)}</code>
                  ) : (
                    <span className="muted">(absent)</span>
                  )}
                  {c.same && <span className="muted"> same</span>}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** The recipe differences with their heading, the base run named: the compare page's and a shared comparison's. */
export function RecipeSection({
  runs,
  recipeDiff,
}: {
  runs: { id: string; name: string; recipeSpec?: unknown }[];
  recipeDiff: { runId: string; diff: SpecDiff[] }[];
}) {
  return (
    <section aria-label="Recipe">
      <h2>
        Recipe differences <span className="muted">(from {runs[0]?.name})</span>
      </h2>
      <RecipeDiffTable runs={runs} recipeDiff={recipeDiff} />
    </section>
  );
}
