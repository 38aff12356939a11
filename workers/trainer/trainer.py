"""
The trainer: one long-lived PyTorch process that owns the policy (workers/trainer/model.py) and its optimiser,
driven over JSON lines on stdin/stdout (client: workers/trainer/client.ts).

    /usr/bin/python3 -u workers/trainer/trainer.py

Protocol
--------
On start-up the process writes one line {"ready": true, "torch_version": ..., "cuda": bool, "pid": ...}.
Then each request is one line {"id": ..., "method": ..., "params": {...}} and each response one line, in order:
    {"id": ..., "result": {...}}    or    {"id": ..., "error": {"type": T, "message": "..."}}
T is "bad_request" (malformed params; the message starts with the offending field), "nan_loss" (a non-finite loss or
gradient norm: the update is NOT applied), "oom" (out of memory; gradients are dropped, the update is not applied),
"not_initialised", or "internal" (anything else, with the exception text). Every exception becomes an error
response and the loop carries on, so the worker never hangs; the caller decides whether the run failed.
stdout carries nothing but protocol lines: file descriptor 1 is pointed at stderr at start-up (so stray prints,
warnings and C++ messages from torch.onnx go to stderr), and responses go to a private duplicate of the original fd.
Numbers that are not finite are sent as null (JSON has no NaN).

Python never tokenises: token ids travel as JSON arrays of ints. The vocabulary (a list of strings, id = index) is
given to init, kept in checkpoints, and written to tokenizer.json on export.

Alignment: for a sequence s of length L, "the logprob of token t" is log p(s[t] | s[:t]), t = 1..L-1 (s[0] has none).
A response starts at index response_start (>= 1); response-aligned arrays (response_mask, old_logprobs and the
logprobs method's output when response_start is given) have one entry per token s[response_start:].

Methods (params → result)
-------------------------
init {model: GPTConfig fields (vocab_size defaults to len(vocab)), vocab: [str], seed: int,
      optim?: {lr, weight_decay, betas: [b1, b2], eps, warmup_steps, total_steps, schedule: "constant"|"cosine",
               min_lr_ratio, grad_clip}, device?: "auto"|"cpu"|"cuda"}
     → info.  Defaults: DEFAULT_OPTIM below (the paper's RL settings: lr 1e-6 constant after a 20-step warm-up).
load {path, optim?: overrides of the stored optimiser config, device?, reset_optimizer?: bool} → info.
     Restores model, optimiser state, RNG states (torch CPU, CUDA, Python), step, config and vocab. A bare
     checkpoint {"config","model","vocab"} (no optimiser) loads too, with a fresh optimiser.
save {path} → {path, bytes, step}.  torch.save to path + ".tmp-<pid>", fsync, then rename: never half-written.
     The checkpoint is {"format": 1, "config", "model", "vocab", "optimizer", "optim", "step", "rng"}; the first
     three are the format export_onnx.py --checkpoint reads.
set_optim {optim, reset?: bool} → {step, optim}.  A stage's optimiser settings: the schedule restarts at the current step.
reset_optimizer {} → {step}.  Fresh AdamW moments (stage 3 of the recipe); the step counter (and so the lr
     schedule) keeps going.
sft_step {sequences: [[int]], loss_masks?: [[int]] (aligned with sequences; 1 = train on predicting this token,
     entry 0 is ignored; default all ones), micro_batch?: int (sequences per forward/backward, default all)}
     → {loss, grad_norm, lr, tokens, masked_tokens, tokens_per_s, step}.  Loss = mean cross-entropy over all
     masked tokens of the batch (token-level).  grad_norm is the norm before clipping.
eval_loss {sequences, loss_masks?, micro_batch?} → {loss, tokens, masked_tokens, tokens_per_s} (no update).
logprobs {sequences, response_start?: [int], micro_batch?} → {logprobs: [[number|null]]}: without
     response_start, entry t of row i is the logprob of token t (entry 0 is null); with it, row i is aligned with
     the response tokens s[response_start[i]:].
policy_step {sequences, response_start: [int], response_mask: [[0|1]] (response-aligned; 1 = model token,
     0 = tool/env token), old_logprobs: [[number|null]] (response-aligned; null allowed where the mask is 0),
     advantages: [number] (one per sequence), eps_low?: 0.2, eps_high?: 0.28, dual_clip?: number|null,
     micro_batch?}
     → {loss, clip_frac_low, clip_frac_high, dual_clip_frac, approx_kl, entropy, grad_norm, lr, tokens,
        masked_tokens, tokens_per_s, step, skipped}.
     Loss (method.md §5): -(1 / Σ masked tokens) Σ_i Σ_t min(ρ Â_i, clip(ρ, 1-ε_low, 1+ε_high) Â_i), with
     dual-clip max(·, c Â_i) for Â_i < 0 when dual_clip = c; no KL term, no entropy term.
     clip_frac_low  = fraction of masked tokens where the lower clip binds (Â < 0 and ρ < 1-ε_low),
     clip_frac_high = fraction where the upper clip binds (Â > 0 and ρ > 1+ε_high),
     dual_clip_frac = fraction where the dual clip binds (Â < 0 and ρ > c);
     approx_kl = mean of (ρ - 1) - log ρ (the k3 estimator of KL(π_old || π_θ), ≥ 0); entropy = mean entropy of
     π_θ at the masked positions. Both are metrics only (computed without gradient).
     All advantages zero (or no masked token): the gradient is exactly zero, so the optimiser step is SKIPPED
     (skipped: true, step not advanced). AdamW would otherwise still move the weights through decoupled weight
     decay and the momentum of earlier steps, although the batch carries no signal.
export_onnx {dir} → {dir, files, step, seconds}.  Writes model.onnx, tokenizer.json, config.json into a fresh
     sibling directory dir + ".tmp-XXXX", then swaps it in with one atomic renameat2(RENAME_EXCHANGE) (Linux) and
     deletes the old one; where that call is missing, two renames (a loader may briefly find no directory, but never
     a half-written one).
digest {} → {model: sha256 hex of every parameter/buffer in state_dict order, step}.
info {} → {device, torch_version, params, step, initialised, config, optim}.
sleep {seconds} → {} (tests and diagnostics).
shutdown {} → {} and the process exits.

Device: CUDA when available and device is not "cpu" (same code path; tensors are created on the model's device).
TOOLSMITH_TRAINER_THREADS sets torch.set_num_threads.
"""
import copy
import ctypes
import hashlib
import json
import math
import os
import random
import shutil
import sys
import tempfile
import time
import traceback

# Protocol output goes to a private copy of the original stdout; fd 1 (and sys.stdout) now point at stderr.
_PROTO = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
os.dup2(2, 1)
sys.stdout = sys.stderr

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from model import GPT, GPTConfig  # noqa: E402
import export_onnx  # noqa: E402

if os.environ.get("TOOLSMITH_TRAINER_THREADS"):
    torch.set_num_threads(int(os.environ["TOOLSMITH_TRAINER_THREADS"]))

DEFAULT_OPTIM = {
    "lr": 1e-6, "weight_decay": 0.01, "betas": [0.9, 0.999], "eps": 1e-8, "warmup_steps": 20,
    "total_steps": None, "schedule": "constant", "min_lr_ratio": 0.0, "grad_clip": 1.0,
}


class RpcError(Exception):
    def __init__(self, type_, message):
        super().__init__(message)
        self.type = type_


def bad(field, msg):
    return RpcError("bad_request", f"{field}: {msg}")


def log(*a):
    print("[trainer]", *a, file=sys.stderr, flush=True)


def finite_or_none(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def clean(o):
    if isinstance(o, dict):
        return {k: clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [clean(v) for v in o]
    return finite_or_none(o)


def is_oom(e):
    oom_cls = getattr(torch.cuda, "OutOfMemoryError", None)
    if oom_cls is not None and isinstance(e, oom_cls):
        return True
    return isinstance(e, MemoryError) or (isinstance(e, RuntimeError) and "out of memory" in str(e))


# ----------------------------------------------------------------------------------------------------------------
# Parameter checking


def get_int(params, name, default=None, lo=None):
    v = params.get(name, default)
    if v is None:
        if default is None and name not in params:
            raise bad(name, "required")
        return v
    if isinstance(v, bool) or not isinstance(v, int):
        raise bad(name, f"expected an integer, got {type(v).__name__}")
    if lo is not None and v < lo:
        raise bad(name, f"must be >= {lo}")
    return v


def get_num(params, name, default=None, required=False):
    v = params.get(name, default)
    if v is None:
        if required:
            raise bad(name, "required")
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise bad(name, f"expected a number, got {type(v).__name__}")
    return float(v)


def get_sequences(params, vocab_size, block_size, name="sequences"):
    seqs = params.get(name)
    if not isinstance(seqs, list) or len(seqs) == 0:
        raise bad(name, "expected a non-empty array of token-id arrays")
    for i, s in enumerate(seqs):
        if not isinstance(s, list) or len(s) < 2:
            raise bad(f"{name}[{i}]", "expected an array of at least 2 token ids")
        if len(s) > block_size:
            raise bad(f"{name}[{i}]", f"length {len(s)} exceeds block_size {block_size}")
        for j, t in enumerate(s):
            if isinstance(t, bool) or not isinstance(t, int) or t < 0 or t >= vocab_size:
                raise bad(f"{name}[{i}][{j}]", f"token id {t!r} not an integer in [0, {vocab_size})")
    return seqs


def get_aligned(params, name, lengths, kind, required=True, allow_null=False):
    """An array of arrays with row i of length lengths[i]; kind 'mask' (0/1) or 'num'."""
    rows = params.get(name)
    if rows is None:
        if required:
            raise bad(name, "required")
        return None
    if not isinstance(rows, list) or len(rows) != len(lengths):
        raise bad(name, f"expected an array of {len(lengths)} arrays")
    for i, (r, n) in enumerate(zip(rows, lengths)):
        if not isinstance(r, list) or len(r) != n:
            raise bad(f"{name}[{i}]", f"expected an array of length {n}")
        for j, v in enumerate(r):
            if kind == "mask":
                if v not in (0, 1) or isinstance(v, float) and not v.is_integer():
                    raise bad(f"{name}[{i}][{j}]", f"expected 0 or 1, got {v!r}")
            else:
                if v is None and allow_null:
                    continue
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                    raise bad(f"{name}[{i}][{j}]", f"expected a finite number, got {v!r}")
    return rows


# ----------------------------------------------------------------------------------------------------------------
# The trainer


def forward_logits(model, idx, attn):
    """Logits [B, T, V] for right-padded idx [B, T] with attn [B, T] 0/1: model.py's forward, no past."""
    B, T = idx.shape
    pos = torch.arange(T, dtype=torch.long, device=idx.device).unsqueeze(0).expand(B, T)
    logits, _ = model(idx, None, pos, attn)
    return logits


# Fault injection for tests, named as such: TOOLSMITH_TRAINER_FAULT_NAN_AT_STEP=N makes update N report a NaN loss.
FAULT_NAN_AT_STEP = int(os.environ["TOOLSMITH_TRAINER_FAULT_NAN_AT_STEP"]) if os.environ.get("TOOLSMITH_TRAINER_FAULT_NAN_AT_STEP") else None


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


class Trainer:
    def __init__(self):
        self.model = None
        self.opt = None
        self.cfg = None
        self.vocab = None
        self.optim_cfg = None
        self.step = 0
        self.sched_start = 0  # the step the current optimiser schedule (warm-up, cosine) started at
        self.device = torch.device("cpu")

    # -- set-up ------------------------------------------------------------------------------------------------

    def _pick_device(self, want):
        want = want or "auto"
        if want not in ("auto", "cpu", "cuda"):
            raise bad("device", "expected 'auto', 'cpu' or 'cuda'")
        if want == "cuda" and not torch.cuda.is_available():
            raise bad("device", "cuda requested but not available")
        return torch.device("cuda" if want != "cpu" and torch.cuda.is_available() else "cpu")

    def _optim_cfg(self, given, base=None):
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

    def _make_optimizer(self):
        o = self.optim_cfg
        decay, no_decay = [], []
        for p in self.model.parameters():  # parameters() de-duplicates the tied embedding/head weight
            (decay if p.dim() >= 2 else no_decay).append(p)
        groups = [{"params": decay, "weight_decay": o["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}]
        self.opt = torch.optim.AdamW(groups, lr=o["lr"], betas=tuple(o["betas"]), eps=o["eps"])

    def lr_at(self, step):
        o = self.optim_cfg
        step -= self.sched_start
        lr, w = o["lr"], o["warmup_steps"]
        if w and step < w:
            return lr * (step + 1) / w
        if o["schedule"] == "cosine":
            span = max(1, o["total_steps"] - w)
            p = min(1.0, (step - w) / span)
            lo = lr * o["min_lr_ratio"]
            return lo + (lr - lo) * 0.5 * (1 + math.cos(math.pi * p))
        return lr

    def need_model(self):
        if self.model is None:
            raise RpcError("not_initialised", "call init or load first")

    def info(self, _params=None):
        return {
            "device": str(self.device), "torch_version": torch.__version__, "cuda": torch.cuda.is_available(),
            "initialised": self.model is not None, "step": self.step,
            "params": sum(p.numel() for p in self.model.parameters()) if self.model is not None else 0,
            "config": self.cfg.to_dict() if self.cfg is not None else None, "optim": self.optim_cfg,
        }

    def init(self, p):
        vocab = p.get("vocab")
        if not isinstance(vocab, list) or len(vocab) < 2 or not all(isinstance(v, str) for v in vocab):
            raise bad("vocab", "expected an array of at least 2 strings")
        mc = p.get("model", {})
        if not isinstance(mc, dict):
            raise bad("model", "expected an object of GPTConfig fields")
        fields = set(GPTConfig.__dataclass_fields__)
        for k in mc:
            if k not in fields and k != "head_dim":
                raise bad(f"model.{k}", "unknown GPTConfig field")
        mc = {k: v for k, v in mc.items() if k != "head_dim"}
        for k, v in mc.items():
            if k == "init_std":
                get_num(mc, k, required=True)
            elif k == "pos_emb":
                if v not in ("learned", "rope"):
                    raise bad("model.pos_emb", "must be learned or rope")
            else:
                get_int(mc, k, lo=1)
        mc.setdefault("vocab_size", len(vocab))
        if mc["vocab_size"] != len(vocab):
            raise bad("model.vocab_size", f"{mc['vocab_size']} != len(vocab) {len(vocab)}")
        cfg = GPTConfig(**mc)
        if cfg.n_embd % cfg.n_head:
            raise bad("model.n_head", "must divide n_embd")
        seed = get_int(p, "seed", 0)
        optim = self._optim_cfg(p.get("optim"))
        device = self._pick_device(p.get("device"))
        random.seed(seed)
        torch.manual_seed(seed)  # also seeds every CUDA device
        model = GPT(cfg).to(device)
        self.model, self.cfg, self.vocab, self.optim_cfg, self.device, self.step = model, cfg, list(vocab), optim, device, 0
        self.sched_start = 0
        self._make_optimizer()
        return self.info()

    def reset_optimizer(self, _p):
        self.need_model()
        self._make_optimizer()
        return {"step": self.step}

    def set_optim(self, p):
        """A new stage's optimiser settings: its schedule (warm-up, cosine) restarts at the current step; the AdamW
        moments carry over unless reset is true (the report resets them for stage 3)."""
        self.need_model()
        self.optim_cfg = self._optim_cfg(p.get("optim"), base=self.optim_cfg)
        self.sched_start = self.step
        if p.get("reset"):
            self._make_optimizer()
        for g, wd in zip(self.opt.param_groups, (self.optim_cfg["weight_decay"], 0.0)):
            g["weight_decay"], g["betas"], g["eps"] = wd, tuple(self.optim_cfg["betas"]), self.optim_cfg["eps"]
        return {"step": self.step, "optim": self.optim_cfg}

    # -- checkpoints -------------------------------------------------------------------------------------------

    def save(self, p):
        self.need_model()
        path = p.get("path")
        if not isinstance(path, str) or not path:
            raise bad("path", "expected a file path")
        rng = {"torch": torch.get_rng_state(), "python": random.getstate()}
        if torch.cuda.is_available():
            rng["cuda"] = torch.cuda.get_rng_state_all()
        ckpt = {
            "format": 1, "config": self.cfg.to_dict(), "vocab": self.vocab,
            "model": {k: v.detach().cpu() for k, v in self.model.state_dict().items()},
            "optimizer": self.opt.state_dict(), "optim": self.optim_cfg, "step": self.step, "rng": rng,
            "sched_start": self.sched_start,
        }
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
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
        return {"path": path, "bytes": os.path.getsize(path), "step": self.step}

    def load(self, p):
        path = p.get("path")
        if not isinstance(path, str) or not os.path.isfile(path):
            raise bad("path", f"no such checkpoint file: {path!r}")
        kw = {"map_location": "cpu"}
        import inspect
        if "weights_only" in inspect.signature(torch.load).parameters:
            kw["weights_only"] = False  # our own file: it holds Python RNG state and plain dicts
        ckpt = torch.load(path, **kw)
        if not isinstance(ckpt, dict) or "config" not in ckpt or "model" not in ckpt:
            raise bad("path", "not a checkpoint (expected a dict with 'config' and 'model')")
        cd = dict(ckpt["config"])
        cd.pop("head_dim", None)
        cfg = GPTConfig(**cd)
        vocab = ckpt.get("vocab") or export_onnx.default_vocab()
        device = self._pick_device(p.get("device"))
        optim = self._optim_cfg(p.get("optim"), base=self._optim_cfg(ckpt.get("optim")))
        model = GPT(cfg)
        model.load_state_dict(ckpt["model"])
        model.to(device)
        self.model, self.cfg, self.vocab, self.optim_cfg, self.device = model, cfg, list(vocab), optim, device
        self.step = int(ckpt.get("step", 0))
        self.sched_start = int(ckpt.get("sched_start", 0))
        self._make_optimizer()
        if ckpt.get("optimizer") is not None and not p.get("reset_optimizer"):
            self.opt.load_state_dict(ckpt["optimizer"])
            # load_state_dict restores the stored hyper-parameters; the config (possibly overridden) wins.
            for g, wd in zip(self.opt.param_groups, (optim["weight_decay"], 0.0)):
                g["weight_decay"], g["betas"], g["eps"] = wd, tuple(optim["betas"]), optim["eps"]
        rng = ckpt.get("rng") or {}
        if "torch" in rng:
            torch.set_rng_state(rng["torch"])
        if "python" in rng:
            st = rng["python"]
            random.setstate((st[0], tuple(st[1]), st[2]))
        if "cuda" in rng and torch.cuda.is_available() and len(rng["cuda"]) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all(rng["cuda"])
        return self.info()

    def digest(self, _p):
        self.need_model()
        h = hashlib.sha256()
        for k, v in self.model.state_dict().items():
            h.update(k.encode())
            h.update(v.detach().cpu().contiguous().numpy().tobytes())
        return {"model": h.hexdigest(), "step": self.step}

    def export_onnx(self, p):
        self.need_model()
        out = p.get("dir")
        if not isinstance(out, str) or not out:
            raise bad("dir", "expected a directory path")
        t0 = time.time()
        out = os.path.abspath(out)
        parent = os.path.dirname(out)
        os.makedirs(parent, exist_ok=True)
        tmp = tempfile.mkdtemp(dir=parent, prefix=os.path.basename(out) + ".tmp-")
        try:
            m = copy.deepcopy(self.model).cpu().eval()
            with torch.random.fork_rng(devices=[]):  # export() draws example inputs; keep the training RNG intact
                export_onnx.write_dir(m, self.cfg, self.vocab, tmp)
            os.chmod(tmp, 0o755)
            swap_in(tmp, out)
        finally:
            if os.path.exists(tmp):
                shutil.rmtree(tmp, ignore_errors=True)
        return {"dir": out, "files": sorted(os.listdir(out)), "step": self.step, "seconds": time.time() - t0}

    # -- batching ----------------------------------------------------------------------------------------------

    def _micro_batches(self, n, lengths, p):
        mb = get_int(p, "micro_batch", n, lo=1)
        order = sorted(range(n), key=lambda i: lengths[i])  # similar lengths together: less padding
        return [order[k:k + mb] for k in range(0, n, mb)]

    def _pad(self, seqs, idxs):
        T = max(len(seqs[i]) for i in idxs)
        ids = torch.zeros(len(idxs), T, dtype=torch.long)
        attn = torch.zeros(len(idxs), T, dtype=torch.float32)
        for r, i in enumerate(idxs):
            s = seqs[i]
            ids[r, :len(s)] = torch.tensor(s, dtype=torch.long)
            attn[r, :len(s)] = 1
        return ids.to(self.device), attn.to(self.device), T

    def _token_logprobs(self, ids, attn):
        """logits → (logp [B, T-1] of token t+1 at column t, log_softmax [B, T-1, V])."""
        logits = forward_logits(self.model, ids, attn).float()
        lsm = F.log_softmax(logits[:, :-1], dim=-1)
        lp = lsm.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
        return lp, lsm

    def _apply_update(self, loss_sum, t0, tokens, masked):
        """Gradients are accumulated; check, clip, step. Raises nan_loss without stepping on non-finite values."""
        params = [q for q in self.model.parameters()]
        max_norm = self.optim_cfg["grad_clip"]
        gn = torch.nn.utils.clip_grad_norm_(params, max_norm if max_norm else float("inf"))
        gn = float(gn)
        if FAULT_NAN_AT_STEP is not None and self.step + 1 == FAULT_NAN_AT_STEP:
            loss_sum = float("nan")  # fault injection (tests): a real tiny model will not diverge on demand
        if not math.isfinite(loss_sum) or not math.isfinite(gn):
            self.opt.zero_grad(set_to_none=True)
            what = "loss" if not math.isfinite(loss_sum) else "gradient norm"
            raise RpcError("nan_loss", f"non-finite {what} at step {self.step} (loss {loss_sum}, grad_norm {gn}); "
                                       "update not applied")
        lr = self.lr_at(self.step)
        for g in self.opt.param_groups:
            g["lr"] = lr
        self.opt.step()
        self.opt.zero_grad(set_to_none=True)
        self.step += 1
        sync(self.device)
        dt = max(time.time() - t0, 1e-9)
        return {"grad_norm": gn, "lr": lr, "tokens": tokens, "masked_tokens": masked, "tokens_per_s": tokens / dt,
                "step": self.step}

    # -- SFT ---------------------------------------------------------------------------------------------------

    def _sft(self, p, train):
        self.need_model()
        seqs = get_sequences(p, self.cfg.vocab_size, self.cfg.block_size)
        lens = [len(s) for s in seqs]
        masks = get_aligned(p, "loss_masks", lens, "mask", required=False)
        if masks is None:
            masks = [[0] + [1] * (n - 1) for n in lens]
        masked = sum(sum(m[1:]) for m in masks)
        if masked == 0:
            raise bad("loss_masks", "no token to train on (all zero after position 0)")
        t0 = time.time()
        self.model.train(train)
        if train:
            self.opt.zero_grad(set_to_none=True)
        loss_sum = 0.0
        with torch.set_grad_enabled(train):
            for idxs in self._micro_batches(len(seqs), lens, p):
                ids, attn, T = self._pad(seqs, idxs)
                lm = torch.zeros(len(idxs), T, dtype=torch.float32)
                for r, i in enumerate(idxs):
                    lm[r, :lens[i]] = torch.tensor(masks[i], dtype=torch.float32)
                lm = lm[:, 1:].to(self.device)
                # Fused cross-entropy (no [B, T, V] log-softmax kept for backward): what raw PyTorch training does.
                logits = forward_logits(self.model, ids, attn)
                nll = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), reduction="none")
                loss = (nll.view(lm.shape) * lm).sum() / masked
                if train:
                    loss.backward()
                loss_sum += float(loss.detach())
        tokens = sum(lens)
        if not train:
            if not math.isfinite(loss_sum):
                raise RpcError("nan_loss", f"non-finite eval loss ({loss_sum})")
            sync(self.device)
            return {"loss": loss_sum, "tokens": tokens, "masked_tokens": masked,
                    "tokens_per_s": tokens / max(time.time() - t0, 1e-9)}
        return {"loss": loss_sum, **self._apply_update(loss_sum, t0, tokens, masked)}

    def sft_step(self, p):
        return self._sft(p, True)

    def eval_loss(self, p):
        return self._sft(p, False)

    # -- log-probs ---------------------------------------------------------------------------------------------

    def _response_start(self, p, lens, required):
        rs = p.get("response_start")
        if rs is None:
            if required:
                raise bad("response_start", "required")
            return None
        if not isinstance(rs, list) or len(rs) != len(lens):
            raise bad("response_start", f"expected an array of {len(lens)} integers")
        for i, (r, n) in enumerate(zip(rs, lens)):
            if isinstance(r, bool) or not isinstance(r, int) or r < 1 or r > n:
                raise bad(f"response_start[{i}]", f"expected an integer in [1, {n}], got {r!r}")
        return rs

    def logprobs(self, p):
        self.need_model()
        seqs = get_sequences(p, self.cfg.vocab_size, self.cfg.block_size)
        lens = [len(s) for s in seqs]
        rs = self._response_start(p, lens, False)
        out = [None] * len(seqs)
        self.model.eval()
        with torch.no_grad():
            for idxs in self._micro_batches(len(seqs), lens, p):
                ids, attn, _ = self._pad(seqs, idxs)
                lp, _ = self._token_logprobs(ids, attn)
                lp = lp.cpu().tolist()
                for r, i in enumerate(idxs):
                    row = [None] + lp[r][:lens[i] - 1]
                    out[i] = row[rs[i]:] if rs is not None else row
        return {"logprobs": [[finite_or_none(x) for x in row] for row in out]}

    # -- policy ------------------------------------------------------------------------------------------------

    def policy_step(self, p):
        self.need_model()
        seqs = get_sequences(p, self.cfg.vocab_size, self.cfg.block_size)
        lens = [len(s) for s in seqs]
        rs = self._response_start(p, lens, True)
        rlens = [n - r for n, r in zip(lens, rs)]
        rmask = get_aligned(p, "response_mask", rlens, "mask")
        old = get_aligned(p, "old_logprobs", rlens, "num", allow_null=True)
        for i, (mrow, orow) in enumerate(zip(rmask, old)):
            for j, (m, o) in enumerate(zip(mrow, orow)):
                if m and o is None:
                    raise bad(f"old_logprobs[{i}][{j}]", "null where response_mask is 1")
        adv = p.get("advantages")
        if not isinstance(adv, list) or len(adv) != len(seqs):
            raise bad("advantages", f"expected an array of {len(seqs)} numbers")
        for i, a in enumerate(adv):
            if isinstance(a, bool) or not isinstance(a, (int, float)) or not math.isfinite(a):
                raise bad(f"advantages[{i}]", f"expected a finite number, got {a!r}")
        eps_low = get_num(p, "eps_low", 0.2)
        eps_high = get_num(p, "eps_high", 0.28)
        if not (0 <= eps_low < 1):
            raise bad("eps_low", "expected a number in [0, 1)")
        if eps_high < 0:
            raise bad("eps_high", "expected a number >= 0")
        dual = get_num(p, "dual_clip", None)
        if dual is not None and dual <= 1:
            raise bad("dual_clip", "expected a number > 1 (or null)")
        masked = sum(sum(m) for m in rmask)
        skip = masked == 0 or all(a == 0 for a in adv)

        t0 = time.time()
        self.model.train()
        self.opt.zero_grad(set_to_none=True)
        sums = {"loss": 0.0, "low": 0.0, "high": 0.0, "dual": 0.0, "kl": 0.0, "ent": 0.0}
        denom = max(masked, 1)
        with torch.set_grad_enabled(not skip):
            for idxs in self._micro_batches(len(seqs), lens, p):
                ids, attn, T = self._pad(seqs, idxs)
                B = len(idxs)
                m = torch.zeros(B, T - 1, dtype=torch.float32)
                o = torch.zeros(B, T - 1, dtype=torch.float32)
                for r, i in enumerate(idxs):
                    if rlens[i] == 0:
                        continue
                    # response token t (t >= rs) is predicted at column t - 1
                    m[r, rs[i] - 1:lens[i] - 1] = torch.tensor(rmask[i], dtype=torch.float32)
                    o[r, rs[i] - 1:lens[i] - 1] = torch.tensor([x if x is not None else 0.0 for x in old[i]])
                m, o = m.to(self.device), o.to(self.device)
                a = torch.tensor([float(adv[i]) for i in idxs], dtype=torch.float32, device=self.device).unsqueeze(1)
                lp, lsm = self._token_logprobs(ids, attn)
                log_ratio = (lp - o) * m  # 0 at unmasked positions: keeps exp() finite there
                ratio = torch.exp(log_ratio)
                s1 = ratio * a
                s2 = torch.clamp(ratio, 1 - eps_low, 1 + eps_high) * a
                obj = torch.min(s1, s2)
                if dual is not None:
                    obj = torch.where(a < 0, torch.max(obj, dual * a), obj)
                loss = -(obj * m).sum() / denom
                if not skip:
                    loss.backward()
                with torch.no_grad():
                    r_ = ratio.detach()
                    sums["loss"] += float(loss.detach())
                    sums["low"] += float(((a < 0) & (r_ < 1 - eps_low)).float().mul(m).sum())
                    sums["high"] += float(((a > 0) & (r_ > 1 + eps_high)).float().mul(m).sum())
                    if dual is not None:
                        sums["dual"] += float(((a < 0) & (r_ > dual)).float().mul(m).sum())
                    sums["kl"] += float(((r_ - 1) - log_ratio.detach()).mul(m).sum())
                    ent = -(lsm.detach().exp() * lsm.detach()).sum(-1)
                    sums["ent"] += float((ent * m).sum())
        tokens = sum(lens)
        metrics = {"loss": sums["loss"], "clip_frac_low": sums["low"] / denom, "clip_frac_high": sums["high"] / denom,
                   "dual_clip_frac": sums["dual"] / denom, "approx_kl": sums["kl"] / denom,
                   "entropy": sums["ent"] / denom}
        if skip:
            sync(self.device)
            return {**metrics, "grad_norm": 0.0, "lr": self.lr_at(self.step), "tokens": tokens, "masked_tokens": masked,
                    "tokens_per_s": tokens / max(time.time() - t0, 1e-9), "step": self.step, "skipped": True}
        return {**metrics, **self._apply_update(sums["loss"], t0, tokens, masked), "skipped": False}

    def sleep(self, p):
        time.sleep(get_num(p, "seconds", 0.0))
        return {}


def swap_in(tmp, out):
    """Make directory tmp appear at out in one step (renameat2 RENAME_EXCHANGE), then drop the old contents."""
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


METHODS = {"init", "load", "save", "reset_optimizer", "set_optim", "sft_step", "eval_loss", "logprobs", "policy_step",
           "export_onnx", "digest", "info", "sleep"}


def send(obj):
    _PROTO.write(json.dumps(clean(obj), allow_nan=False) + "\n")
    _PROTO.flush()


def main():
    trainer = Trainer()
    send({"ready": True, "torch_version": torch.__version__, "cuda": torch.cuda.is_available(), "pid": os.getpid()})
    for line in sys.stdin:
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
            if method not in METHODS:
                raise bad("method", f"unknown method {method!r}")
            send({"id": rid, "result": getattr(trainer, method)(params)})
        except RpcError as e:
            send({"id": rid, "error": {"type": e.type, "message": str(e)}})
        except Exception as e:  # noqa: BLE001 - every failure becomes a response; the loop goes on
            if trainer.opt is not None:
                trainer.opt.zero_grad(set_to_none=True)
            if is_oom(e):
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                send({"id": rid, "error": {"type": "oom", "message": f"out of memory: {e}"}})
            else:
                traceback.print_exc(file=sys.stderr)
                send({"id": rid, "error": {"type": "internal", "message": f"{type(e).__name__}: {e}"}})


if __name__ == "__main__":
    main()
