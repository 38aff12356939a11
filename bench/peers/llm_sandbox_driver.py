"""bench:sandbox's driver for a peer: llm-sandbox's bubblewrap backend (PyPI `llm-sandbox`, MIT), used as its README
shows (`SandboxSession(backend="bubblewrap", lang="python")`, `session.run(code)`). Installed for the bench only
(bench/peers/llm-sandbox.ts), never a dependency of the product.

Opens `sys.argv[1]` sessions (one per concurrent caller: a session runs one command at a time), says
{"ready": n, "open_s": ...} on stdout, then answers JSON lines {"id", "code"} with {"id", "status", "stdout",
"stderr", "exitCode"} in the order they finish: each request goes to a free session on its own thread.
"""
import json
import queue
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from llm_sandbox import SandboxSession

TIMEOUT_S = 4

n = int(sys.argv[1])
t0 = time.monotonic()
# Last in, first out: fewer callers than sessions reuse the same few (a session lost to a timeout is not met by
# every later call in turn).
free = queue.LifoQueue()
with ThreadPoolExecutor(max_workers=min(n, 16)) as ex:
    sessions = list(ex.map(lambda _: SandboxSession(backend="bubblewrap", lang="python"), range(n)))
    list(ex.map(lambda s: s.open(), sessions))
for s in sessions:
    free.put(s)
out_lock = threading.Lock()


def say(obj):
    with out_lock:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


say({"ready": n, "open_s": time.monotonic() - t0})


def fresh_session():
    s = SandboxSession(backend="bubblewrap", lang="python")
    s.open()
    return s


def answer(req):
    s = free.get()
    try:
        # None: the session before was closed by a failure (llm-sandbox closes one whose command timed out); opening
        # its replacement counts against this call, as it would against a user's.
        if s is None:
            s = fresh_session()
        r = s.run(req["code"], timeout=TIMEOUT_S)
        status = "ok" if r.exit_code == 0 else "error"
        say({"id": req["id"], "status": status, "stdout": r.stdout, "stderr": r.stderr, "exitCode": r.exit_code})
    except Exception as e:  # a timeout or a backend failure is a result, not the driver's end
        say({"id": req["id"], "status": "timeout" if "imeout" in type(e).__name__ else "error", "stdout": "",
             "stderr": "%s: %s" % (type(e).__name__, e), "exitCode": None})
        try:
            if s is not None:
                s.close()
        except Exception:
            pass
        s = None
    finally:
        free.put(s)


pool = ThreadPoolExecutor(max_workers=n)
for line in sys.stdin:
    pool.submit(answer, json.loads(line))
pool.shutdown(wait=True)
for s in sessions:
    if s is not None:
        s.close()
