'use client';
import { useQuery } from '@tanstack/react-query';
import { useTRPC } from '@/lib/trpc.ts';
import { formatBytes, formatCount, formatTime } from '../ui/format.ts';

/** The registered models (the models folder, TOOLSMITH_MODELS_DIR): what a recipe can name. */
export function ModelsView() {
  const trpc = useTRPC();
  const list = useQuery(trpc.models.list.queryOptions());
  if (list.error)
    return (
      <div className="panel error" role="alert">
        Could not list models: {list.error.message}
      </div>
    );
  if (!list.data) return <div className="panel empty">Loading models…</div>;
  if (list.data.length === 0) {
    return (
      <div className="panel empty">
        No models yet. Make a small one with{' '}
        <code>npx toolsmith model init --name NAME --layers 4 --hidden 64 --heads 4 --tokenizer char</code>, or register
        a downloaded one with <code>npx toolsmith model import DIR --name NAME</code>, or fetch one from the catalogue
        below.
      </div>
    );
  }
  return (
    <table aria-label="Models">
      <thead>
        <tr>
          <th>Name</th>
          <th>Architecture</th>
          <th className="num">Parameters</th>
          <th className="num">Layers</th>
          <th className="num">Hidden</th>
          <th className="num">Heads (kv)</th>
          <th className="num">Vocab</th>
          <th>Dtype</th>
          <th className="num">Context</th>
          <th className="num">Size on disk</th>
          <th>Source</th>
          <th>Licence</th>
          <th>Created</th>
        </tr>
      </thead>
      <tbody>
        {list.data.map((m) => (
          <tr key={m.name} data-model={m.name}>
            <td title={m.dir}>
              {m.name}
              {m.problem && <div className="error">{m.problem}</div>}
            </td>
            <td>{m.architecture ?? m.modelType ?? '—'}</td>
            <td className="num" title={m.parameters === null ? undefined : m.parameters.toLocaleString()}>
              {formatCount(m.parameters)}
            </td>
            <td className="num">{m.layers ?? '—'}</td>
            <td className="num">{m.hidden ?? '—'}</td>
            <td className="num">{m.heads === null ? '—' : `${m.heads} (${m.kvHeads ?? m.heads})`}</td>
            <td className="num">{m.vocab ?? '—'}</td>
            <td>{m.dtype ?? '—'}</td>
            <td className="num">{m.context ?? '—'}</td>
            <td className="num">{formatBytes(m.sizeBytes)}</td>
            <td title={m.importedFrom ?? undefined}>
              {m.source}
              {m.origin ? <div className="muted">{m.origin}</div> : null}
            </td>
            <td>{m.license ?? '—'}</td>
            <td>{formatTime(m.createdAt)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
