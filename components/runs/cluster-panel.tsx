'use client';
import type { ClusterService, ClusterView } from '../../contracts/cluster.ts';

const resources = (r: Record<string, number>) =>
  Object.entries(r)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');

function Services({ title, list }: { title: string; list: ClusterService[] }) {
  if (!list.length) return null;
  return (
    <>
      <h3>{title}</h3>
      <table className="table">
        <thead>
          <tr>
            <th>url</th>
            <th>node</th>
            <th>restarts</th>
          </tr>
        </thead>
        <tbody>
          {list.map((s) => (
            <tr key={s.url}>
              <td>
                <code>{s.url}</code>
              </td>
              <td title={s.node}>{s.address}</td>
              <td>{s.restarts}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/**
 * Where a run on a Ray cluster runs (contracts/cluster.ts foldCluster over its `cluster` events): the cluster, the
 * Ray job and its state, each trainer rank's node and resources, the sandbox nodes and rollout servers with their
 * restarts.
 */
export function ClusterPanel({ view }: { view: ClusterView | null }) {
  if (!view) return null;
  return (
    <section aria-label="Cluster" className="panel">
      <h2>Cluster</h2>
      <p>
        Ray at <code>{view.cluster}</code>, job <code>{view.rayJobId || '—'}</code>: <strong>{view.state}</strong>
      </p>
      {view.ranks.length > 0 && (
        <table className="table">
          <thead>
            <tr>
              <th>rank</th>
              <th>node</th>
              <th>resources</th>
            </tr>
          </thead>
          <tbody>
            {view.ranks.map((r) => (
              <tr key={r.rank}>
                <td>{r.rank}</td>
                <td title={r.node}>
                  {r.address} <span className="muted">{r.node.slice(0, 8)}</span>
                </td>
                <td>{resources(r.resources)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Services title="Sandbox nodes" list={view.sandboxes} />
      <Services title="Rollout servers" list={view.rollout} />
    </section>
  );
}
