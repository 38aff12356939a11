/**
 * Where a run runs when a cluster runs it (docs/scaling-out.md "Ray"): written as `cluster` events by the worker
 * that submitted the run (the Ray job and its state) and by the run's orchestrator on the cluster (each trainer
 * rank's node and resources); the run page shows the latest of each.
 */

/** One trainer rank as Ray placed it. */
export interface ClusterRank {
  rank: number;
  /** Ray's node id. */
  node: string;
  /** The node's address in the cluster. */
  address: string;
  pid: number;
  resources: Record<string, number>;
}

export interface ClusterEventData {
  kind: 'ray';
  /** The cluster's dashboard URL. */
  cluster: string;
  /** Ray's submission id of the run's job. */
  rayJobId: string;
  /** PENDING, RUNNING, STOPPED, SUCCEEDED or FAILED (Ray's job states). */
  state: string;
  /** The trainer's ranks, once the orchestrator has placed them. */
  ranks?: ClusterRank[];
  /** The run's services the cluster runs (sandbox nodes, rollout servers), each time that set changes. */
  services?: ClusterService[];
}

/** A service a Ray actor runs for the run (workers/cluster/ray_services.py). */
export interface ClusterService {
  kind: 'sandbox' | 'rollout';
  url: string;
  node: string;
  address: string;
  /** Times Ray restarted it after it died. */
  restarts: number;
}

/** What the run page shows of where a run runs: the latest of each part the cluster events reported. */
export interface ClusterView {
  cluster: string;
  rayJobId: string;
  state: string;
  ranks: ClusterRank[];
  sandboxes: ClusterService[];
  rollout: ClusterService[];
}

/**
 * Fold one cluster event into the view: the follower's events carry the Ray job's state, the orchestrator's the
 * ranks (a new placement replaces the old after a resume) or one kind of service (the latest set replaces the last).
 */
export function foldCluster(prev: ClusterView | null, e: ClusterEventData): ClusterView {
  const v: ClusterView = prev ?? {
    cluster: e.cluster,
    rayJobId: e.rayJobId,
    state: e.state,
    ranks: [],
    sandboxes: [],
    rollout: [],
  };
  const next = { ...v };
  if (e.ranks) next.ranks = e.ranks;
  else if (e.services) {
    const kind = e.services[0]?.kind;
    if (kind === 'sandbox') next.sandboxes = e.services;
    else if (kind === 'rollout') next.rollout = e.services;
  } else {
    next.cluster = e.cluster;
    next.rayJobId = e.rayJobId;
    next.state = e.state;
  }
  return next;
}
