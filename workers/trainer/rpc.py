"""
The JSON-lines loop on stdin/stdout: read a request, call the trainer's method, write the result or the error
(framing and error types: trainer.py's docstring). With several ranks, rank 0 reads and answers; every request line is
broadcast to the other ranks first (dist.py), so all ranks run every method together.

Import this module before torch: on import it keeps a private copy of stdout for protocol lines and points fd 1
(and sys.stdout) at stderr, so that stray prints, warnings and C++ messages (torch.onnx) cannot corrupt the stream.
"""
import json
import math
import os
import sys
import traceback

_PROTO = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
os.dup2(2, 1)
sys.stdout = sys.stderr

import torch  # noqa: E402

import dist  # noqa: E402
from validation import RpcError, bad  # noqa: E402


def clean(o):
    """o with every non-finite float replaced by None (JSON has no NaN)."""
    if isinstance(o, dict):
        return {k: clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [clean(v) for v in o]
    if isinstance(o, float) and not math.isfinite(o):
        return None
    return o


def send(obj):
    if not dist.is_main():
        return
    _PROTO.write(json.dumps(clean(obj), allow_nan=False) + "\n")
    _PROTO.flush()


def is_oom(e):
    oom_cls = getattr(torch.cuda, "OutOfMemoryError", None)  # added in torch 1.13
    if oom_cls is not None and isinstance(e, oom_cls):
        return True
    return isinstance(e, MemoryError) or (isinstance(e, RuntimeError) and "out of memory" in str(e))


def serve(trainer, methods):
    """Answer requests in order until shutdown or end of input. methods: the names callable as trainer.<name>(params).
    Every exception becomes an error response and the loop goes on, so the worker never hangs."""
    send({"ready": True, "torch_version": torch.__version__, "cuda": torch.cuda.is_available(), "pid": os.getpid(),
          "world_size": dist.WORLD})
    while True:
        line = (sys.stdin.readline() or None) if dist.is_main() else None
        line = dist.broadcast_text(line, trainer.home)
        if line is None:  # end of input
            return
        line = line.strip()
        if not line:
            continue
        rid = None
        try:
            try:
                req = json.loads(line)
            except ValueError as e:
                raise RpcError("bad_request", f"request: not JSON ({e})")
            if not isinstance(req, dict):
                raise RpcError("bad_request", "request: expected an object")
            rid = req.get("id")
            method = req.get("method")
            params = req.get("params") or {}
            if not isinstance(params, dict):
                raise bad("params", "expected an object")
            if method == "shutdown":
                send({"id": rid, "result": {}})
                return
            if method not in methods:
                raise bad("method", f"unknown method {method!r}")
            send({"id": rid, "result": getattr(trainer, method)(params)})
        except RpcError as e:
            send({"id": rid, "error": {"type": e.type, "message": str(e)}})
        except Exception as e:  # noqa: BLE001 - every failure becomes a response; the loop goes on
            trainer.drop_gradients()  # a half-done step must not leak into the next one
            if is_oom(e):
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                send({"id": rid, "error": {"type": "oom", "message": f"out of memory: {e}"}})
            else:
                traceback.print_exc(file=sys.stderr)
                send({"id": rid, "error": {"type": "internal", "message": f"{type(e).__name__}: {e}"}})
