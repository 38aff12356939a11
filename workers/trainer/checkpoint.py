"""
What the trainer writes to disk and reads back. A checkpoint is a directory:

    config.json, model.safetensors (sharded with an index when large), generation_config.json, tokenizer files
                         the weights in plain HF format (a LoRA checkpoint: adapter_config.json and
                         adapter_model.safetensors instead, naming the base directory they apply to)
    optimizer/           AdamW's moments through torch.distributed.checkpoint: each rank writes its shard and any
                         number of ranks reads them back (resharded on load); metadata.json describes them
    trainer_state.json   step, schedule start, optimiser settings, LoRA settings, RNG states (as numbers)

Nothing is unpickled: weights are safetensors, the optimiser is DCP's tensor files (read with weights_only) plus its
metadata in JSON (dcp_metadata.py writes it in place of DCP's pickle and checks every field when it reads it back),
the rest is JSON. Everything is written owner-only (the trainer runs under
umask 077; the fresh directories are mkdtemp's 0700). A recipe names models, never files, and the trainer still trusts no path it is given.
The directory is written into a sibling and swapped in whole (write_dir), so a reader never sees half of one.
"""
import ctypes
import hashlib
import json
import os
import random
import shutil
import tempfile

import torch

import dcp_metadata
import dist
from validation import bad

STATE = "trainer_state.json"
OPTIMIZER = "optimizer"


def model_dir(path):
    """path, checked to be a directory in HF format (config.json plus safetensors weights or a LoRA adapter)."""
    if not isinstance(path, str) or not os.path.isdir(path):
        raise bad("path", f"no such model directory: {path!r}")
    names = os.listdir(path)
    if "config.json" not in names and "adapter_config.json" not in names:
        raise bad("path", f"{path} is not a model directory in HF format (no config.json)")
    if not any(n.endswith(".safetensors") for n in names):
        raise bad("path", f"{path} has no *.safetensors weights (pickled weights are never loaded)")
    return os.path.abspath(path)


def read_state(path):
    """trainer_state.json of a checkpoint directory, or None for a plain model directory."""
    f = os.path.join(path, STATE)
    if not os.path.isfile(f):
        return None
    with open(f) as fh:
        return json.load(fh)


def save(path, weights, model, opt, state):
    """The checkpoint directory at path (every rank calls this: the optimiser state is gathered collectively).
    weights(tmp) writes the weight files on rank 0."""
    import torch.distributed.checkpoint as dcp
    tensors = optimizer_tensors(model, opt)[1] if opt.state else None
    tmp = dist.broadcast_text(fresh_sibling(path) if dist.is_main() else "", torch.device("cpu")) if dist.active() else fresh_sibling(path)
    try:
        if dist.is_main():
            weights(tmp)
        if tensors is not None:
            written = dcp.save(tensors, checkpoint_id=os.path.join(tmp, OPTIMIZER))
            if dist.is_main():  # the metadata in JSON, DCP's pickle of it deleted (dcp_metadata.py)
                dcp_metadata.write(os.path.join(tmp, OPTIMIZER), written)
        dist.barrier()
        if dist.is_main():
            with open(os.path.join(tmp, STATE), "w") as f:
                json.dump({**state, "format": 2, "has_optimizer": tensors is not None, "rng": rng_state()}, f)
            fsync_tree(tmp)
            swap_in(tmp, os.path.abspath(path))
        dist.barrier()
    finally:
        if dist.is_main() and os.path.exists(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
    return os.path.abspath(path)


def optimizer_tensors(model, opt):
    """(DCP's optimiser state dict, its tensors flat: "<param fqn>.<exp_avg|exp_avg_sq|step>" → tensor). Only the
    tensors go to disk: the hyper-parameters come from the optimiser config, so DCP never stores a pickled value."""
    from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict
    osd = get_optimizer_state_dict(model, opt)
    flat = {}
    for fqn, st in osd["state"].items():
        for k, v in st.items():
            if not torch.is_tensor(v):
                raise RuntimeError(f"optimizer state {fqn}.{k} is not a tensor")
            flat[f"{fqn}.{k}"] = v
    return osd, flat


def has_optimizer(path):
    st = read_state(path) or {}
    return bool(st.get("has_optimizer")) and os.path.isdir(os.path.join(path, OPTIMIZER))


def load_optimizer(path, model, opt):
    """Read the optimiser state into opt (initialised first: DCP loads into the tensors it finds), for any number
    of ranks, whatever the number that wrote it. The metadata is read from JSON and checked (dcp_metadata.py): a
    crafted or older folder is refused with a bad_request naming path, before DCP reads anything."""
    from torch.distributed.checkpoint.state_dict import set_optimizer_state_dict
    import torch.distributed.checkpoint as dcp
    osd, flat = optimizer_tensors(model, opt)
    folder = os.path.join(path, OPTIMIZER)
    try:
        dcp_metadata.read(folder)  # here first: DCP would wrap the refusal in an exception of its own
        dcp.load(flat, storage_reader=dcp_metadata.reader(folder), planner=dcp_metadata.planner())
    except dcp_metadata.MetadataError as e:
        raise bad("path", f"{path}: not an optimiser checkpoint this trainer reads ({str(e)[:300]})")
    except Exception as e:  # noqa: BLE001 - DCP wraps what its reader and planner raise (CheckpointException)
        refused = [f for f in _failures(e) if isinstance(f, dcp_metadata.MetadataError)]
        if refused:
            raise bad("path", f"{path}: not an optimiser checkpoint this trainer reads ({str(refused[0])[:300]})")
        raise
    for fqn, st in osd["state"].items():
        for k in st:
            st[k] = flat[f"{fqn}.{k}"]
    set_optimizer_state_dict(model, opt, osd)


def _failures(e):
    """The exceptions inside a DCP CheckpointException (rank → (exception, traceback)), else e itself."""
    failures = getattr(e, "failures", None)
    if not isinstance(failures, dict):
        return [e]
    return [v[0] if isinstance(v, tuple) and v else v for v in failures.values()]


def write_adapter(out, tensors, model, base_dir):
    """A LoRA checkpoint's weights: peft's adapter_config.json (base_model_name_or_path = the base directory, so
    transformers' and vLLM's LoRA loaders find it) and adapter_model.safetensors."""
    from safetensors.torch import save_file
    cfg = model.peft_config["default"]
    cfg.base_model_name_or_path = base_dir
    cfg.save_pretrained(out)
    save_file({k: v.contiguous() for k, v in tensors.items()}, os.path.join(out, "adapter_model.safetensors"))


def read_adapter(path):
    from safetensors.torch import load_file
    f = os.path.join(path, "adapter_model.safetensors")
    if not os.path.isfile(f):
        raise bad("path", f"{path} is a LoRA checkpoint without adapter_model.safetensors")
    return load_file(f)


def dir_bytes(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


def fsync_tree(path):
    for d, _, fs in os.walk(path):
        for f in fs:
            with open(os.path.join(d, f), "rb") as fh:
                os.fsync(fh.fileno())


def fresh_sibling(out):
    out = os.path.abspath(out)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    return tempfile.mkdtemp(dir=os.path.dirname(out), prefix=os.path.basename(out) + ".tmp-")


def rng_state():
    """The RNG states as JSON numbers (torch's are byte tensors)."""
    rng = {"torch": torch.get_rng_state().tolist(), "python": random.getstate()}
    if torch.cuda.is_available():
        rng["cuda"] = [s.tolist() for s in torch.cuda.get_rng_state_all()]
    return rng


def restore_rng(rng):
    """Put back what rng_state() saved; CUDA states only onto as many devices as they were saved from."""
    if "torch" in rng:
        torch.set_rng_state(torch.tensor(rng["torch"], dtype=torch.uint8))
    if "python" in rng:
        st = rng["python"]
        random.setstate((st[0], tuple(st[1]), st[2]))  # JSON turns the inner tuple into a list
    if "cuda" in rng and torch.cuda.is_available() and len(rng["cuda"]) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all([torch.tensor(s, dtype=torch.uint8) for s in rng["cuda"]])


def digest_state(sd):
    """sha256 hex over every tensor of a state dict, in its order: equal ⇔ bit-identical weights."""
    h = hashlib.sha256()
    for k, v in sd.items():
        h.update(k.encode())
        h.update(v.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def write_dir(out, fill):
    """fill(tmp) a fresh sibling directory of out, then swap it in whole (swap_in). Returns out, absolute."""
    out = os.path.abspath(out)
    tmp = fresh_sibling(out)
    try:
        fill(tmp)  # mkdtemp made tmp 0700: it stays owner-only
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
