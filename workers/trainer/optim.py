"""
The optimiser: its config (checked and merged over defaults), AdamW construction, and the learning-rate schedule
(linear warm-up, then constant or cosine decay).
"""
import math

import torch

from validation import bad, get_int, get_num

# The paper's RL settings (docs/method.md §5): lr 1e-6 constant after a 20-step warm-up.
DEFAULT_OPTIM = {
    "lr": 1e-6, "weight_decay": 0.01, "betas": [0.9, 0.999], "eps": 1e-8, "warmup_steps": 20,
    "total_steps": None, "schedule": "constant", "min_lr_ratio": 0.0, "grad_clip": 1.0,
}


def optim_config(given, base=None):
    """The fields of given (None: none) over base (default DEFAULT_OPTIM), checked."""
    out = dict(base or DEFAULT_OPTIM)
    if given is None:
        return out
    if not isinstance(given, dict):
        raise bad("optim", "expected an object")
    for k, v in given.items():
        if k not in DEFAULT_OPTIM:
            raise bad(f"optim.{k}", "unknown field")
        out[k] = v
    for k in ("lr", "weight_decay", "eps", "min_lr_ratio"):
        get_num(out, k, required=True)
    if out["grad_clip"] is not None:
        get_num(out, "grad_clip")
    b = out["betas"]
    if not (isinstance(b, (list, tuple)) and len(b) == 2 and all(isinstance(x, (int, float)) for x in b)):
        raise bad("optim.betas", "expected [beta1, beta2]")
    out["betas"] = [float(b[0]), float(b[1])]
    get_int(out, "warmup_steps", 0, lo=0)
    if out["total_steps"] is not None:
        get_int(out, "total_steps", lo=1)
    if out["schedule"] not in ("constant", "cosine"):
        raise bad("optim.schedule", "expected 'constant' or 'cosine'")
    if out["schedule"] == "cosine" and out["total_steps"] is None:
        raise bad("optim.total_steps", "required with schedule 'cosine'")
    return out


def make_optimizer(model, o):
    """AdamW with weight decay on matrices only (not on biases and norm gains), over the trainable parameters."""
    decay, no_decay = [], []
    for p in model.parameters():  # parameters() de-duplicates the tied embedding/head weight
        if p.requires_grad:  # under LoRA only the adapter trains
            (decay if p.dim() >= 2 else no_decay).append(p)
    groups = [{"params": decay, "weight_decay": o["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=o["lr"], betas=tuple(o["betas"]), eps=o["eps"])


def set_hyperparameters(opt, o):
    """Write o's weight decay, betas and eps into opt's groups (make_optimizer's order: decay, no decay)."""
    for g, wd in zip(opt.param_groups, (o["weight_decay"], 0.0)):
        g["weight_decay"], g["betas"], g["eps"] = wd, tuple(o["betas"]), o["eps"]


def lr_at(o, step):
    """The learning rate of update step (counted from the start of the schedule, 0-based)."""
    lr, w = o["lr"], o["warmup_steps"]
    if w and step < w:
        return lr * (step + 1) / w
    if o["schedule"] == "cosine":
        span = max(1, o["total_steps"] - w)
        p = min(1.0, (step - w) / span)
        lo = lr * o["min_lr_ratio"]
        return lo + (lr - lo) * 0.5 * (1 + math.cos(math.pi * p))
    return lr


def init_state(opt):
    """Give a fresh AdamW its state tensors (zero moments) without moving a weight: one step at lr 0 on zero
    gradients. torch.distributed.checkpoint loads into the state it finds, so a resume needs them first."""
    if opt.state:
        return
    lrs = [g["lr"] for g in opt.param_groups]
    for g in opt.param_groups:
        g["lr"] = 0.0
        for p in g["params"]:
            if p.requires_grad:
                p.grad = torch.zeros_like(p)
    opt.step()  # decoupled weight decay is lr × wd: 0 as well
    for g, lr in zip(opt.param_groups, lrs):
        g["lr"] = lr
    opt.zero_grad(set_to_none=True)
