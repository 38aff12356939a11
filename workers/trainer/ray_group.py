"""
The trainer's ranks placed by a Ray cluster (docs/scaling-out.md "Ray"). client.ts starts this process where it
would start trainer.py, and it speaks the same JSON-lines protocol on stdin/stdout: it reserves a placement group
(ray_placement.py: one bundle per rank), starts one Ray actor per rank, each running workers/trainer/trainer.py as
its own child process, and relays every request line to rank 0's trainer and every answer back. trainer.py stays
the one implementation of the trainer's work; this file only places and relays.

    .venv/bin/python -u ray_group.py '{"nodes": 2, "ranks": 1, "cpus": 1, "gpus": 0, "timeout_s": 60, "env": {…}}'

Meeting: static ranks and world size from the placement; rank 0's actor picks a free port on its node and its
trainer hosts a torch TCPStore there (plain keys, nothing pickled; no elastic agent); gloo's and NCCL's connections
use the interface that holds each node's Ray address. That store and those connections are not authenticated: the
cluster's network must be a private one (docs/scaling-out.md "Ray"). Ray's own traffic needs the cluster's token (RAY_AUTH_MODE=token,
RAY_AUTH_TOKEN_PATH), read from the environment, never from argv.

Before rank 0's ready line this writes one {"placement": [...]} line (each rank's node, address and resources).
A rank whose actor or process dies ends this process (code 1, the reason on stderr): the group lives and dies
together, and the caller resumes from its last checkpoint. Its actors and placement group belong to this Ray
driver: when it exits, however it exits, Ray removes them.
"""
import json
import os
import sys
import threading
import time

_PROTO = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
os.dup2(2, 1)  # Ray and its workers' log lines go to stderr, never into the protocol
sys.stdout = sys.stderr

import asyncio  # noqa: E402
import signal  # noqa: E402

import ray  # noqa: E402
from ray.util.placement_group import placement_group, placement_group_table  # noqa: E402
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy  # noqa: E402

import ray_placement  # noqa: E402
from lifeline import die_with_parent  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
READ_WAIT_S = 0.5
# How long the driver waits for a peer rank's actor to say it lives, when rank 0 answers with an error (relay below).
# A live actor answers at once; a dead one as soon as Ray knows it died; this only bounds an actor that hangs.
PEER_CHECK_S = 60


def send(obj):
    _PROTO.write(json.dumps(obj) + "\n")
    _PROTO.flush()


def fail(message, code=3):
    print(f"ray: {message}", file=sys.stderr, flush=True)
    os._exit(code)


@ray.remote(max_restarts=0, max_task_retries=0)
class Rank:
    """One rank: trainer.py as a child of this actor (dies with it: TOOLSMITH_TRAINER_PARENT_PID), its stdout and
    stderr kept as lines until the driver reads them."""

    def __init__(self):
        self.proc = None
        self.lines = []
        self.wake = None
        self.exit = None

    async def where(self, pick_port):
        import socket

        import psutil
        ip = ray.util.get_node_ip_address()
        port = None
        if pick_port:  # free now; the trainer binds it a moment later (another process could take it first: rare)
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind((ip, 0))
                port = s.getsockname()[1]
        ifname = next((name for name, addrs in psutil.net_if_addrs().items()
                       if any(a.address == ip for a in addrs)), None)
        return {"ip": ip, "port": port, "ifname": ifname, "node": ray.get_runtime_context().get_node_id(),
                "pid": os.getpid()}

    async def start(self, script, env):
        import asyncio.subprocess as sp
        self.wake = asyncio.Event()
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-u", script, stdin=sp.PIPE, stdout=sp.PIPE, stderr=sp.PIPE,
            # This node's environment (Ray's CUDA_VISIBLE_DEVICES for the actor's GPUs included), then the group's.
            env={**os.environ, **env, "TOOLSMITH_TRAINER_PARENT_PID": str(os.getpid())}, cwd=os.path.dirname(script),
            limit=1 << 30)  # an answer line can be megabytes (logprobs of a batch)
        loop = asyncio.get_running_loop()
        loop.create_task(self._pump(self.proc.stdout, "out"))
        loop.create_task(self._pump(self.proc.stderr, "err"))
        loop.create_task(self._reap())
        return self.proc.pid

    async def _pump(self, stream, kind):
        while True:
            line = await stream.readline()
            if not line:
                return
            self.lines.append((kind, line.decode("utf-8", "replace")))
            self.wake.set()

    async def _reap(self):
        code = await self.proc.wait()
        await asyncio.sleep(0.2)  # its last stderr lines first
        self.exit = code
        self.wake.set()

    async def send(self, line):
        self.proc.stdin.write(line.encode())
        await self.proc.stdin.drain()

    async def end_input(self):
        self.proc.stdin.close()

    async def read(self, wait_s):
        """What it wrote since the last read (waiting up to wait_s for something), and its exit code once it ended."""
        if not self.lines and self.exit is None:
            self.wake.clear()
            try:
                await asyncio.wait_for(self.wake.wait(), wait_s)
            except asyncio.TimeoutError:
                pass
        out, self.lines = self.lines, []
        return {"lines": out, "exit": self.exit}  # its lines first: _reap sets exit only after the pipes drained

    async def alive(self):
        """Whether this rank's trainer process still runs."""
        return self.proc is not None and self.proc.returncode is None

    async def kill(self):
        if self.proc and self.proc.returncode is None:
            self.proc.kill()


def live_nodes():
    return [{"address": n.get("NodeManagerAddress", "?"), "total": n.get("Resources", {})}
            for n in ray.nodes() if n.get("Alive")]


def place(spec):
    """The placement group, ready, and the rank layout; or the refusal naming what is missing."""
    nodes, ranks, cpus, gpus = spec["nodes"], spec["ranks"], spec["cpus"], spec["gpus"]
    pg = placement_group(ray_placement.bundles(nodes, ranks, cpus, gpus),
                         strategy=ray_placement.strategy(nodes, ranks), name=spec.get("name", ""))
    ready, _ = ray.wait([pg.ready()], timeout=spec["timeout_s"])
    if not ready:
        fail(ray_placement.shortfall(nodes, ranks, cpus, gpus, live_nodes(), ray.available_resources(),
                                     spec["timeout_s"]))
    table = placement_group_table(pg)
    bundle_nodes = [table["bundles_to_node_id"][i] for i in range(nodes * ranks)]
    try:
        return pg, ray_placement.assign(bundle_nodes, nodes, ranks)
    except ValueError as e:
        fail(str(e))


def rank_env(base, r, world, master, where, spec):
    env = {**base, "RANK": str(r["rank"]), "LOCAL_RANK": str(r["local_rank"]), "WORLD_SIZE": str(world),
           "LOCAL_WORLD_SIZE": str(spec["ranks"]), "GROUP_RANK": str(r["node_rank"]),
           "MASTER_ADDR": master["ip"], "MASTER_PORT": str(master["port"]),
           "TOOLSMITH_TRAINER_MASTER": f"{master['ip']}:{master['port']}",
           "PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    if spec["gpus"]:
        env["TOOLSMITH_TRAINER_CUDA_INDEX"] = "0"  # Ray gives the actor its GPUs as CUDA_VISIBLE_DEVICES
    if where.get("ifname"):
        env["GLOO_SOCKET_IFNAME"] = env["NCCL_SOCKET_IFNAME"] = where["ifname"]
    env.pop("TOOLSMITH_TRAINER_STORE", None)
    return env


def read_spec(arg):
    """The group's spec (nodes, ranks, cpus, gpus, timeout_s, ...) from the command line, with its defaults."""
    spec = json.loads(arg)
    for k in ("nodes", "ranks"):
        if not isinstance(spec.get(k), int) or spec[k] < 1:
            fail(f"{k}: expected a positive integer, not {spec.get(k)!r}")
    spec.setdefault("cpus", 1)
    spec.setdefault("gpus", 0)
    spec.setdefault("timeout_s", 60)
    return spec


def start_group(spec):
    """Places the ranks, starts a trainer in each, and reports the placement: (actors, each one's where)."""
    address = os.environ.get("RAY_ADDRESS") or "auto"
    try:
        ray.init(address=address, namespace=spec.get("namespace") or None, log_to_driver=False,
                 logging_level="WARNING")
    except Exception as e:  # noqa: BLE001
        fail(f"cannot reach the Ray cluster at {address}: {type(e).__name__}: {e}")
    pg, layout = place(spec)
    world = len(layout)
    actors = [Rank.options(num_cpus=spec["cpus"], num_gpus=spec["gpus"] or 0,
                           scheduling_strategy=PlacementGroupSchedulingStrategy(
                               placement_group=pg, placement_group_bundle_index=r["bundle"])).remote()
              for r in layout]
    wheres = ray.get([a.where.remote(i == 0) for i, a in enumerate(actors)])
    master = wheres[0]
    script = spec.get("script") or os.path.join(HERE, "trainer.py")
    base = spec.get("env") or {}
    ray.get([a.start.remote(script, rank_env(base, r, world, master, w, spec))
             for a, r, w in zip(actors, layout, wheres)])
    send({"placement": [{"rank": r["rank"], "node": r["node"], "address": w["ip"], "pid": w["pid"],
                         "resources": ray_placement.rank_bundle(spec["cpus"], spec["gpus"])}
                        for r, w in zip(layout, wheres)]})
    return actors, wheres


def main():
    die_with_parent()
    spec = read_spec(sys.argv[1])
    actors, wheres = start_group(spec)

    def stop(code, why=None):
        if why:
            print(f"ray: {why}", file=sys.stderr, flush=True)
        for a in actors:
            try:
                a.kill.remote()
            except Exception:  # noqa: BLE001 - best effort: Ray removes the actors with this driver anyway
                pass
        time.sleep(0.2)
        os._exit(code)

    def dead_peer():
        """The first other rank whose actor or trainer is gone, with why; None when all answer alive (or one does not
        answer within PEER_CHECK_S: then nothing is known, and the error goes to the caller as it is)."""
        for j, a in enumerate(actors[1:], start=1):
            try:
                if not ray.get(a.alive.remote(), timeout=PEER_CHECK_S):
                    return f"rank {j} of the trainer exited"
            except ray.exceptions.GetTimeoutError:
                continue
            except Exception as e:  # noqa: BLE001 - the actor died (node lost, killed)
                return f"rank {j}'s actor on {wheres[j]['ip']} died: {type(e).__name__}: {str(e)[:300]}"
        return None

    def lost_peer(line):
        """Rank 0 answered with an error and a peer is gone: the group is lost, and that is the answer. A collective
        fails on rank 0 the moment a peer dies, often before Ray reports the peer's actor dead; relayed as it is,
        the caller would read the collective's symptom (an internal error) instead of the loss of the group."""
        if len(actors) < 2 or '"error"' not in line:
            return None
        try:
            if not isinstance(json.loads(line).get("error"), dict):
                return None
        except ValueError:
            return None
        return dead_peer()

    def relay(i, actor):
        while True:
            try:
                got = ray.get(actor.read.remote(READ_WAIT_S))
            except Exception as e:  # noqa: BLE001 - an actor that died (node lost, killed) ends the group
                stop(1, f"rank {i}'s actor on {wheres[i]['ip']} died: {type(e).__name__}: {str(e)[:300]}")
                return
            for kind, line in got["lines"]:
                if i == 0 and kind == "out":
                    lost = lost_peer(line)
                    if lost:
                        stop(1, lost)
                        return
                    _PROTO.write(line)
                    _PROTO.flush()
                else:
                    sys.stderr.write(line if i == 0 else f"[rank {i}] {line}")
            if got["exit"] is not None:
                if got["exit"] == 0:  # trainer.py exits 0 only when asked (shutdown or end of input)
                    if i == 0:
                        stop(0)
                    return  # rank 0's own exit follows
                stop(1, f"rank {i} of the trainer exited (code {got['exit']})")
                return

    for i, a in enumerate(actors):
        threading.Thread(target=relay, args=(i, a), daemon=True).start()
    signal.signal(signal.SIGTERM, lambda *_: stop(143))
    for line in sys.stdin:
        actors[0].send.remote(line)  # one caller, one actor: Ray runs these in the order sent
    # end of input: rank 0 shuts down (a clean exit), the others follow
    ray.get(actors[0].end_input.remote())
    time.sleep(spec.get("exit_grace_s", 30))
    stop(1, "rank 0 did not exit after the end of its input")


if __name__ == "__main__":
    main()
