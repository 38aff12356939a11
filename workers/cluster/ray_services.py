"""
Services of a run placed by a Ray cluster as actors, one per chosen node: sandbox nodes (`toolsmith sandbox serve`)
and rollout servers (`toolsmith serve-model`, or SGLang / vLLM by their own command lines). ray-services.ts starts
this process with a JSON spec in argv (no secret: the service's token reaches it through the environment variable the
spec names) and reads what it writes to stdout: one {"services": [...]} line each time the set of serving
services changes (url, node, address, actor pid, child pid, restarts).

    .venv/bin/python -u ray_services.py '{"name": "sandbox", "argv": [...], "secret_env": "TOOLSMITH_SANDBOX_TOKEN", ...}'

Each actor runs the service as its child (SIGKILLed when the actor dies), on port 0, and reads the URL it prints;
when the child exits the actor exits too, and Ray restarts the actor on the same node (max_restarts): the driver
then announces the new URL. A command with "{port}" in its argv (SGLang, vLLM) gets a free port picked by the actor
and is up once `health_path` answers. Nodes: those offering the custom resource `resource` (one actor each, holding one unit),
else every live node without GPUs (`gpu_nodes: false`) or every node. The actors belong to this driver: when it
exits (end of input, or its parent dies), Ray removes them.
"""
import json
import os
import sys
import threading
import time

_PROTO = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
os.dup2(2, 1)
sys.stdout = sys.stderr

import signal  # noqa: E402

import ray  # noqa: E402
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy  # noqa: E402

POLL_S = 1.0


def fail(message, code=3):
    print(f"ray: {message}", file=sys.stderr, flush=True)
    os._exit(code)


@ray.remote
class Service:
    """One service: its process a child of this actor, the actor's life tied to the child's."""

    def __init__(self, argv, env, url_pattern, start_timeout_s, health_path):
        import ctypes
        import re
        import socket
        import subprocess
        import urllib.error
        import urllib.request

        self.node = ray.get_runtime_context().get_node_id()
        self.address = ray.util.get_node_ip_address()
        port = None
        if any("{port}" in a for a in argv):  # a server that cannot pick its own port (SGLang, vLLM): pick one here
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.bind((self.address, 0))
                port = s.getsockname()[1]
        argv = [a.replace("{host}", self.address).replace("{port}", str(port)) for a in argv]

        def die_with_actor():
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG

        self.proc = subprocess.Popen(argv, env={**os.environ, **env}, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=None, text=True, preexec_fn=die_with_actor)
        self.url = None
        deadline = time.monotonic() + start_timeout_s
        if port is not None:
            threading.Thread(target=self._follow, daemon=True).start()
            url = f"http://{self.address}:{port}"
            while time.monotonic() < deadline and self.proc.poll() is None:
                try:
                    urllib.request.urlopen(url + (health_path or "/"), timeout=5).close()
                    self.url = url
                    break
                except urllib.error.HTTPError:  # it answers: up, whatever the status
                    self.url = url
                    break
                except OSError:  # not listening yet
                    time.sleep(1)
            if self.url is None:
                self.proc.kill()
                raise RuntimeError(f"{argv[:3]} did not answer on {url} (exit {self.proc.poll()})")
            return
        pattern = re.compile(url_pattern)
        for line in self.proc.stdout:
            sys.stderr.write(line)
            m = pattern.search(line)
            if m:
                self.url = m.group(1)
                break
            if time.monotonic() > deadline:
                break
        if self.url is None:
            self.proc.kill()
            raise RuntimeError(f"{argv[:3]} printed no URL (exit {self.proc.poll()})")
        threading.Thread(target=self._follow, daemon=True).start()

    def _follow(self):
        for line in self.proc.stdout:  # keep its later output moving (and visible in the actor's log)
            sys.stderr.write(line)
        self.proc.wait()
        os._exit(1)  # the child is gone: so is this actor, and Ray restarts it

    def info(self):
        return {"url": self.url, "node": self.node, "address": self.address, "pid": os.getpid(),
                "child": self.proc.pid}


def choose_nodes(spec):
    nodes = [n for n in ray.nodes() if n.get("Alive")]
    res = spec.get("resource")
    if res:
        picked = [n for n in nodes if n.get("Resources", {}).get(res, 0) >= 1]
        if picked:
            return picked
    if not spec.get("gpu_nodes", False):
        cpu_only = [n for n in nodes if not n.get("Resources", {}).get("GPU")]
        if cpu_only:
            return cpu_only
    return nodes


def main():
    import ctypes
    parent = os.environ.get("TOOLSMITH_SERVICES_PARENT_PID")
    if parent:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != int(parent):
            os._exit(1)
    spec = json.loads(sys.argv[1])
    env = dict(spec.get("env") or {})
    secret_env = spec.get("secret_env")
    if secret_env:
        if not os.environ.get(secret_env):
            fail(f"{secret_env} is not set: the {spec['name']} services need their token")
        env[secret_env] = os.environ[secret_env]
    try:
        ray.init(address=os.environ.get("RAY_ADDRESS") or "auto", namespace=spec.get("namespace") or None,
                 log_to_driver=False, logging_level="WARNING")
    except Exception as e:  # noqa: BLE001
        fail(f"cannot reach the Ray cluster: {type(e).__name__}: {e}")
    nodes = choose_nodes(spec)
    if spec.get("max_nodes"):
        nodes = nodes[:spec["max_nodes"]]
    if not nodes:
        fail(f"no live node to run the {spec['name']} services on")
    actors = []
    for n in nodes:
        argv = list(spec["argv"])
        if spec.get("size_to_cores"):  # a pool sized to the node's cores
            argv += [spec["size_to_cores"], str(max(1, int(n.get("Resources", {}).get("CPU", 1))))]
        opts = {"num_cpus": spec.get("cpus", 0), "max_restarts": spec.get("max_restarts", 5),
                "scheduling_strategy": NodeAffinitySchedulingStrategy(n["NodeID"], soft=False)}
        if spec.get("gpus"):
            opts["num_gpus"] = spec["gpus"]
        if spec.get("resource") and n.get("Resources", {}).get(spec["resource"], 0) >= 1:
            opts["resources"] = {spec["resource"]: 1}
        actors.append(Service.options(**opts).remote(argv, env, spec.get("url_pattern", r"\bon (https?://[^\s/]+)"),
                                                     spec.get("start_timeout_s", 120), spec.get("health_path")))

    def stop(code):
        for a in actors:
            try:
                ray.kill(a, no_restart=True)
            except Exception:  # noqa: BLE001 - Ray removes them with this driver anyway
                pass
        os._exit(code)

    signal.signal(signal.SIGTERM, lambda *_: stop(0))

    def watch():
        last = None  # what was last announced: [(url, actor pid)]
        restarts = [0] * len(actors)
        pending = {}  # actor index -> its outstanding info() call
        current = {}  # actor index -> its last info, while it serves
        pids = {}  # actor index -> the actor process last seen (a new one: Ray restarted it)
        while True:
            for i, a in enumerate(actors):
                if i not in pending:
                    pending[i] = a.info.remote()
            ready, _ = ray.wait(list(pending.values()), num_returns=len(pending), timeout=POLL_S)
            for i, ref in list(pending.items()):
                if ref not in ready:
                    continue
                del pending[i]
                try:
                    info = ray.get(ref)
                except Exception as e:  # noqa: BLE001 - died: Ray restarts it (or its node is gone)
                    current.pop(i, None)
                    print(f"ray: {spec['name']} service {i}: {type(e).__name__}: {str(e)[:200]}", file=sys.stderr,
                          flush=True)
                    continue
                if i in pids and pids[i] != info["pid"]:
                    restarts[i] += 1
                pids[i] = info["pid"]
                current[i] = {**info, "index": i, "restarts": restarts[i]}
            now = [current[i] for i in sorted(current)]
            key = [(s["url"], s["pid"]) for s in now]
            if key != last:
                last = key
                _PROTO.write(json.dumps({"services": now, "expected": len(actors)}) + "\n")
                _PROTO.flush()
            time.sleep(POLL_S)

    threading.Thread(target=watch, daemon=True).start()
    for _ in sys.stdin:  # nothing is read; the end of input is the signal to stop
        pass
    stop(0)


if __name__ == "__main__":
    main()
