"""
What the trainer writes to disk and reads back: checkpoint files (written atomically), the RNG states they carry,
export directories swapped in whole, and a digest of the weights.
"""
import ctypes
import hashlib
import os
import random
import shutil
import tempfile

import torch

from validation import bad


def write(path, ckpt):
    """torch.save ckpt to path + ".tmp-<pid>", fsync, then rename: path is never half-written. Returns its size."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with open(tmp, "wb") as f:
            torch.save(ckpt, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return os.path.getsize(path)


def read(path):
    """The checkpoint dict at path, on the CPU; at least {"config", "model"}."""
    if not isinstance(path, str) or not os.path.isfile(path):
        raise bad("path", f"no such checkpoint file: {path!r}")
    # Never unpickle: a recipe can name this path. weights_only admits tensors and plain containers only, which is
    # all a checkpoint holds (the RNG states are a tensor and tuples of ints).
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # UnpicklingError for anything but tensors and plain containers; corrupt files too
        raise bad("path", f"not a checkpoint this trainer reads (only tensors and plain values are loaded): {str(e).splitlines()[0][:200]}")
    if not isinstance(ckpt, dict) or "config" not in ckpt or "model" not in ckpt:
        raise bad("path", "not a checkpoint (expected a dict with 'config' and 'model')")
    return ckpt


def rng_state():
    rng = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if torch.cuda.is_available():
        rng["cuda"] = torch.cuda.get_rng_state_all()
    return rng


def restore_rng(rng):
    """Put back what rng_state() saved; CUDA states only onto as many devices as they were saved from."""
    if "torch" in rng:
        torch.set_rng_state(rng["torch"])
    if "python" in rng:
        st = rng["python"]
        random.setstate((st[0], tuple(st[1]), st[2]))  # the inner tuple may come back as a list
    if "cuda" in rng and torch.cuda.is_available() and len(rng["cuda"]) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(rng["cuda"])


def digest(model):
    """sha256 hex over every parameter and buffer, in state_dict order: equal ⇔ bit-identical weights."""
    h = hashlib.sha256()
    for k, v in model.state_dict().items():
        h.update(k.encode())
        h.update(v.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def write_dir(out, fill):
    """fill(tmp) a fresh sibling directory of out, then swap it in whole (swap_in). Returns out, absolute."""
    out = os.path.abspath(out)
    parent = os.path.dirname(out)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(dir=parent, prefix=os.path.basename(out) + ".tmp-")
    try:
        fill(tmp)
        os.chmod(tmp, 0o755)  # mkdtemp makes it 0700
        swap_in(tmp, out)
    finally:
        if os.path.exists(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def swap_in(tmp, out):
    """Make directory tmp appear at out in one step (renameat2 RENAME_EXCHANGE), then drop the old contents.
    Where that call is missing, two renames: a loader may briefly find no directory, but never a half-written one."""
    if not os.path.exists(out):
        os.rename(tmp, out)
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
        AT_FDCWD, RENAME_EXCHANGE = -100, 2
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        if fn(AT_FDCWD, tmp.encode(), AT_FDCWD, out.encode(), RENAME_EXCHANGE) == 0:
            shutil.rmtree(tmp, ignore_errors=True)  # tmp now holds the old export
            return
    except (AttributeError, OSError):
        pass
    old = tempfile.mkdtemp(dir=os.path.dirname(out), prefix=os.path.basename(out) + ".old-")
    os.rmdir(old)
    os.rename(out, old)
    os.rename(tmp, out)
    shutil.rmtree(old, ignore_errors=True)
