"""
One trainer, one process or a group of N ranks on this machine (docs/scaling-out.md "GPU trainers"):

    client.ts starts N processes of workers/trainer/trainer.py itself, with RANK, LOCAL_RANK, WORLD_SIZE,
    LOCAL_WORLD_SIZE and TOOLSMITH_TRAINER_STORE (a file in a private 0700 folder): the ranks meet through that
    dist.FileStore, so no rendezvous store listens on any socket and nothing pickled is exchanged to meet; gloo's and
    NCCL's own connections between the ranks are bound to loopback (GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME = lo).
    A group of one (one GPU) meets in an in-memory dist.HashStore.
    Placed by Ray (ray_group.py, several nodes): TOOLSMITH_TRAINER_MASTER=host:port, rank 0's node address and a port
    its actor picked; rank 0 hosts a TCPStore there (plain keys, nothing pickled, no elastic agent) with static ranks
    and world size. It is not authenticated: the cluster's network must be private (docs/scaling-out.md "Ray").
    Without either (torchrun started by hand) it is torchrun's env:// rendezvous: trusted networks only.

Rank 0 speaks the JSON-lines RPC (rpc.py) and broadcasts every request line to the other ranks, so all ranks run
the same method on the same batch; each rank takes its share of the micro-batches, FSDP2 (`fully_shard`, one unit
per decoder layer plus the root) shards parameters, gradients and optimiser state, and gathers them for each
layer's forward and backward. Every rank runs the same number of forward/backward passes (a rank with no real
micro-batch left runs a zero-weight one), because every FSDP all-gather is a collective. Backend: NCCL on GPUs
(RCCL under ROCm), gloo on CPU. A single process with no GPU uses no process group and no sharding.

Requests travel as UTF-8 bytes in a tensor: nothing is pickled between ranks either.
"""
import os
import stat
import sys

import torch
import torch.distributed as dist

WORLD = int(os.environ.get("WORLD_SIZE", "1"))
RANK = int(os.environ.get("RANK", "0"))
LOCAL_RANK = int(os.environ.get("LOCAL_RANK", "0"))


def is_main():
    return RANK == 0


def loopback_only():
    """gloo's and NCCL's listeners bind to the interface these name (else the host name's address, maybe public)."""
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    os.environ.setdefault("NCCL_SOCKET_IFNAME", "lo")
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")


def private_store(path):
    """A FileStore at path, whose folder must be this user's own and closed to others (client.ts makes it with
    mkdtemp): whoever can write the store can join the group."""
    folder = os.path.dirname(os.path.abspath(path))
    st = os.stat(folder)
    if st.st_uid != os.getuid() or stat.S_IMODE(st.st_mode) & 0o077:
        raise RuntimeError(f"TOOLSMITH_TRAINER_STORE: {folder} must be owned by this user and closed to others (0700)")
    return dist.FileStore(path, WORLD)


def setup():
    """Join the group of ranks (no-op in a single process). Returns the device this rank computes on."""
    cuda = torch.cuda.is_available() and os.environ.get("TOOLSMITH_TRAINER_DEVICE", "auto") != "cpu"
    if cuda:  # a Ray-placed rank sees only its own GPUs (CUDA_VISIBLE_DEVICES): index 0 there
        torch.cuda.set_device(int(os.environ.get("TOOLSMITH_TRAINER_CUDA_INDEX", LOCAL_RANK)))
    if WORLD > 1 and not dist.is_initialized():
        backend = "nccl" if cuda else "gloo"
        store = os.environ.get("TOOLSMITH_TRAINER_STORE")
        master = os.environ.get("TOOLSMITH_TRAINER_MASTER")
        if store:
            loopback_only()
            dist.init_process_group(backend, store=private_store(store), rank=RANK, world_size=WORLD)
        elif master:
            from datetime import timedelta
            host, port = master.rsplit(":", 1)
            tcp = dist.TCPStore(host, int(port), WORLD, is_master=RANK == 0, timeout=timedelta(seconds=300))
            dist.init_process_group(backend, store=tcp, rank=RANK, world_size=WORLD)
        else:  # started by torchrun by hand (several nodes): its rendezvous, on the network the operator chose
            print("trainer: no TOOLSMITH_TRAINER_STORE: joining through torchrun's env:// rendezvous, whose store "
                  "listens on the network; run it on a trusted network only", file=sys.stderr)
            dist.init_process_group(backend)
    return torch.device(f"cuda:{torch.cuda.current_device()}" if cuda else "cpu")


def active():
    return WORLD > 1 and dist.is_initialized()


def broadcast_text(text, device):
    """Rank 0's text on every rank (None on rank 0 means: stop)."""
    if not active():
        return text
    dev = device if device.type == "cuda" else torch.device("cpu")
    data = text.encode() if is_main() and text is not None else b""
    n = torch.tensor([-1 if is_main() and text is None else len(data)], dtype=torch.long, device=dev)
    dist.broadcast(n, 0)
    if n.item() < 0:
        return None
    buf = torch.empty(int(n.item()), dtype=torch.uint8, device=dev)
    if is_main() and data:
        buf.copy_(torch.frombuffer(bytearray(data), dtype=torch.uint8))
    dist.broadcast(buf, 0)
    return buf.cpu().numpy().tobytes().decode()  # a request can be megabytes: no per-byte Python list


def all_sum(values, device):
    """Element-wise sum over ranks of a list of floats (identity in one process)."""
    if not active():
        return list(values)
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t)
    return t.tolist()


def all_sum_tensor(t):
    if active():
        dist.all_reduce(t)
    return t


def barrier():
    if active():
        dist.barrier()


def shard(model, device, bf16):
    """FSDP2 over the decoder layers and the root, with bf16 compute and fp32 master weights when bf16. Sharding
    is used whenever there are several ranks or a GPU (so one GPU runs the same code as many); else the model
    stays a plain module."""
    if not (active() or device.type == "cuda"):
        return model
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    if not dist.is_initialized():  # one GPU: a group of one, meeting in memory (no store socket, no port)
        loopback_only()
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo", store=dist.HashStore(), rank=0, world_size=1)
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if bf16 else MixedPrecisionPolicy()
    base = getattr(model, "base_model", None)  # peft wraps the transformers model
    inner = base.model if base is not None and hasattr(base, "model") else model
    for layer in decoder_layers(inner):
        fully_shard(layer, mp_policy=mp)
    fully_shard(model, mp_policy=mp)
    return model


def decoder_layers(model):
    """The transformer blocks of a *ForCausalLM (model.model.layers for every Llama-family architecture)."""
    core = getattr(model, "model", None)
    layers = getattr(core, "layers", None)
    if layers is None:
        raise RuntimeError(f"{type(model).__name__}: no model.layers to shard")
    return list(layers)


def sharded():
    return dist.is_initialized()


def full_state_dict(model):
    """Every parameter and buffer, whole, on the CPU of rank 0 ({} on the others). A collective under FSDP."""
    if not sharded():
        return {k: v.detach().cpu() for k, v in model.state_dict().items()}
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
    sd = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    return sd if is_main() else {}


def to_local_scalar(x):
    """A norm that FSDP returns as a DTensor, as a float."""
    return float(x.full_tensor() if hasattr(x, "full_tensor") else x)
