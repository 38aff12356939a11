'use client';
import { CatalogueTable, useCatalogue } from './catalogue-table.tsx';

/** The Models page's "Fetch a model" and the Datasets page's "Add a dataset" panels. */
export function CataloguePanel({ kind }: { kind: 'models' | 'datasets' }) {
  const c = useCatalogue(kind);
  const label = kind === 'models' ? 'Model catalogue' : 'Dataset catalogue';
  if (c.rows.error)
    return (
      <div className="panel error" role="alert">
        Could not read the catalogue: {c.rows.error.message}
      </div>
    );
  if (!c.rows.data) return <div className="panel empty">Loading the catalogue…</div>;
  return (
    <CatalogueTable
      label={label}
      verb={kind === 'models' ? 'Fetch' : 'Add'}
      rows={c.rows.data}
      start={c.start}
      pending={c.pending}
      error={c.error}
    />
  );
}
