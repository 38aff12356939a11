"""
Where a trainer group goes on a Ray cluster: pure functions, no Ray import (ray_group.py does the I/O).

A recipe's trainer is `nodes` machines × `ranks` ranks each, every rank with `cpus` CPUs and `gpus` GPUs. Ray gets
one bundle per rank; the strategy asks for the shape: one node → all bundles on it (STRICT_PACK); one rank per node
→ one bundle per distinct node (STRICT_SPREAD); otherwise PACK (fill a node before the next: with GPUs the node's
count bounds it), and `assign` checks the placement Ray made has exactly `ranks` bundles on each of `nodes` nodes.
Ranks are numbered node by node (node of bundle 0 first), so the ranks of a node are contiguous and LOCAL_RANK is
the index on that node, as torchrun numbers them.
"""


def rank_bundle(cpus, gpus):
    """One rank's resources as Ray names them (no GPU key when it takes none: {"GPU": 0} is still a constraint)."""
    b = {"CPU": float(cpus)}
    if gpus:
        b["GPU"] = float(gpus)
    return b


def bundles(nodes, ranks, cpus, gpus):
    return [rank_bundle(cpus, gpus) for _ in range(nodes * ranks)]


def strategy(nodes, ranks):
    if nodes == 1:
        return "STRICT_PACK"
    if ranks == 1:
        return "STRICT_SPREAD"
    return "PACK"


def assign(bundle_nodes, nodes, ranks):
    """bundle_nodes[i]: the node id Ray put bundle i on. Returns [{rank, bundle, node, node_rank, local_rank}] in
    rank order, or raises ValueError saying how the placement differs from nodes × ranks."""
    order = []
    by_node = {}
    for i, node in enumerate(bundle_nodes):
        if node not in by_node:
            by_node[node] = []
            order.append(node)
        by_node[node].append(i)
    counts = [len(by_node[n]) for n in order]
    if len(order) != nodes or any(c != ranks for c in counts):
        raise ValueError(f"the cluster placed the {len(bundle_nodes)} ranks as {counts} per node; "
                         f"the recipe asks for {nodes} node{'s' if nodes != 1 else ''} × {ranks} rank{'s' if ranks != 1 else ''}")
    out = []
    for node_rank, node in enumerate(order):
        for local_rank, b in enumerate(by_node[node]):
            out.append({"rank": len(out), "bundle": b, "node": node, "node_rank": node_rank, "local_rank": local_rank})
    return out


def fmt_resources(r):
    """{CPU: 2, GPU: 8} with Ray's own resources (memory, node:… labels) left out, integers without .0."""
    keys = [k for k in ("CPU", "GPU") if k in r] + sorted(
        k for k in r if k not in ("CPU", "GPU", "memory", "object_store_memory") and not k.startswith("node:")
        and not k.startswith("accelerator_type:"))
    parts = []
    for k in keys:
        v = r[k]
        parts.append(f"{k}: {int(v) if float(v).is_integer() else round(v, 2)}")
    return "{" + ", ".join(parts) + "}"


def shortfall(nodes, ranks, cpus, gpus, cluster_nodes, free, waited_s):
    """The refusal when the bundles could not be placed: what the group needs, what each live node has and what is
    free now. cluster_nodes: [{"address": str, "total": {...}}]; free: the cluster's available resources."""
    need = f"{nodes * ranks} × {fmt_resources(rank_bundle(cpus, gpus))}"
    shape = f"{nodes} node{'s' if nodes != 1 else ''} × {ranks} rank{'s' if ranks != 1 else ''}"
    if nodes > 1 and ranks == 1:
        shape += " on distinct nodes"
    elif nodes == 1 and ranks > 1:
        shape += " on one node"
    have = ", ".join(f"{n['address']} {fmt_resources(n['total'])}" for n in cluster_nodes) or "no live node"
    return (f"trainer: the cluster could not place the ranks within {waited_s:g} s: needs {need} ({shape}); "
            f"the cluster has {len(cluster_nodes)} node{'s' if len(cluster_nodes) != 1 else ''}: {have}; "
            f"free now {fmt_resources(free)}")
