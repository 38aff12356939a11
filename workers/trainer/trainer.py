"""
The trainer: one long-lived PyTorch process that owns the policy (workers/trainer/model.py) and its optimiser,
driven over JSON lines on stdin/stdout (client: workers/trainer/client.ts).

    .venv/bin/python -u workers/trainer/trainer.py   (the virtual environment set-up builds from requirements.txt)

This file holds the Trainer (model, optimiser, steps) and is the entry point; the rest, by job:
rpc.py (the JSON-lines loop), validation.py (params), optim.py (AdamW, lr schedule), checkpoint.py (files and
directories on disk), losses.py (the losses and metrics, pure tensor functions), model.py (the GPT), export_onnx.py (the ONNX export).

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
     Loss (docs/method.md §5): -(1 / Σ masked tokens) Σ_i Σ_t min(ρ Â_i, clip(ρ, 1-ε_low, 1+ε_high) Â_i), with
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
import math
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the sibling modules, from any cwd
import rpc  # noqa: E402  (first: it points fd 1 at stderr before torch is imported)

import torch  # noqa: E402

import checkpoint  # noqa: E402
import export_onnx  # noqa: E402
import losses  # noqa: E402
from model import GPT, GPTConfig  # noqa: E402
from optim import lr_at, make_optimizer, optim_config, set_hyperparameters  # noqa: E402
from validation import (RpcError, bad, get_advantages, get_aligned, get_clip, get_int, get_model_config,  # noqa: E402
                        get_num, get_old_logprobs, get_response_start, get_sequences, get_vocab)

if os.environ.get("TOOLSMITH_TRAINER_THREADS"):
    torch.set_num_threads(int(os.environ["TOOLSMITH_TRAINER_THREADS"]))

# Fault injection for tests, named as such: TOOLSMITH_TRAINER_FAULT_NAN_AT_STEP=N makes update N report a NaN loss.
FAULT_NAN_AT_STEP = int(os.environ["TOOLSMITH_TRAINER_FAULT_NAN_AT_STEP"]) if os.environ.get("TOOLSMITH_TRAINER_FAULT_NAN_AT_STEP") else None

METHODS = {"init", "load", "save", "reset_optimizer", "set_optim", "sft_step", "eval_loss", "logprobs", "policy_step",
           "export_onnx", "digest", "info", "sleep"}


def forward_logits(model, idx, attn):
    """Logits [B, T, V] for right-padded idx [B, T] with attn [B, T] 0/1: model.py's forward, no past."""
    B, T = idx.shape
    pos = torch.arange(T, dtype=torch.long, device=idx.device).unsqueeze(0).expand(B, T)
    logits, _ = model(idx, None, pos, attn)
    return logits


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()  # so that timings cover the GPU's work, not just its queueing


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

    def need_model(self):
        if self.model is None:
            raise RpcError("not_initialised", "call init or load first")

    def drop_gradients(self):
        if self.opt is not None:
            self.opt.zero_grad(set_to_none=True)

    def lr_now(self):
        return lr_at(self.optim_cfg, self.step - self.sched_start)

    def info(self, _params=None):
        return {
            "device": str(self.device), "torch_version": torch.__version__, "cuda": torch.cuda.is_available(),
            "initialised": self.model is not None, "step": self.step,
            "params": sum(p.numel() for p in self.model.parameters()) if self.model is not None else 0,
            "config": self.cfg.to_dict() if self.cfg is not None else None, "optim": self.optim_cfg,
        }

    def init(self, p):
        vocab = get_vocab(p)
        cfg = get_model_config(p, vocab)
        seed = get_int(p, "seed", 0)
        optim = optim_config(p.get("optim"))
        device = self._pick_device(p.get("device"))
        random.seed(seed)
        torch.manual_seed(seed)  # also seeds every CUDA device
        model = GPT(cfg).to(device)
        self.model, self.cfg, self.vocab, self.optim_cfg, self.device, self.step = model, cfg, list(vocab), optim, device, 0
        self.sched_start = 0
        self.opt = make_optimizer(self.model, self.optim_cfg)
        return self.info()

    def reset_optimizer(self, _p):
        self.need_model()
        self.opt = make_optimizer(self.model, self.optim_cfg)
        return {"step": self.step}

    def set_optim(self, p):
        """A new stage's optimiser settings: its schedule (warm-up, cosine) restarts at the current step; the AdamW
        moments carry over unless reset is true (the report resets them for stage 3)."""
        self.need_model()
        self.optim_cfg = optim_config(p.get("optim"), base=self.optim_cfg)
        self.sched_start = self.step
        if p.get("reset"):
            self.opt = make_optimizer(self.model, self.optim_cfg)
        set_hyperparameters(self.opt, self.optim_cfg)
        return {"step": self.step, "optim": self.optim_cfg}

    # -- checkpoints -------------------------------------------------------------------------------------------

    def save(self, p):
        self.need_model()
        path = p.get("path")
        if not isinstance(path, str) or not path:
            raise bad("path", "expected a file path")
        ckpt = {
            "format": 1, "config": self.cfg.to_dict(), "vocab": self.vocab,
            "model": {k: v.detach().cpu() for k, v in self.model.state_dict().items()},
            "optimizer": self.opt.state_dict(), "optim": self.optim_cfg, "step": self.step, "rng": checkpoint.rng_state(),
            "sched_start": self.sched_start,
        }
        return {"path": path, "bytes": checkpoint.write(path, ckpt), "step": self.step}

    def load(self, p):
        ckpt = checkpoint.read(p.get("path"))
        cd = dict(ckpt["config"])
        cd.pop("head_dim", None)
        cfg = GPTConfig(**cd)
        vocab = ckpt.get("vocab") or export_onnx.default_vocab()
        device = self._pick_device(p.get("device"))
        optim = optim_config(p.get("optim"), base=optim_config(ckpt.get("optim")))
        model = GPT(cfg)
        model.load_state_dict(ckpt["model"])
        model.to(device)
        self.model, self.cfg, self.vocab, self.optim_cfg, self.device = model, cfg, list(vocab), optim, device
        self.step = int(ckpt.get("step", 0))
        self.sched_start = int(ckpt.get("sched_start", 0))
        self.opt = make_optimizer(self.model, self.optim_cfg)
        if ckpt.get("optimizer") is not None and not p.get("reset_optimizer"):
            self.opt.load_state_dict(ckpt["optimizer"])
            # load_state_dict restores the stored hyper-parameters; the config (possibly overridden) wins.
            set_hyperparameters(self.opt, optim)
        checkpoint.restore_rng(ckpt.get("rng") or {})
        return self.info()

    def digest(self, _p):
        self.need_model()
        return {"model": checkpoint.digest(self.model), "step": self.step}

    def export_onnx(self, p):
        self.need_model()
        out = p.get("dir")
        if not isinstance(out, str) or not out:
            raise bad("dir", "expected a directory path")
        t0 = time.time()

        def fill(tmp):
            m = copy.deepcopy(self.model).cpu().eval()
            with torch.random.fork_rng(devices=[]):  # export() draws example inputs; keep the training RNG intact
                export_onnx.write_dir(m, self.cfg, self.vocab, tmp)

        out = checkpoint.write_dir(out, fill)
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
        lr = self.lr_now()
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
                logits = forward_logits(self.model, ids, attn)
                loss = losses.masked_cross_entropy(logits[:, :-1], ids[:, 1:], lm[:, 1:].to(self.device), masked)
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

    def logprobs(self, p):
        self.need_model()
        seqs = get_sequences(p, self.cfg.vocab_size, self.cfg.block_size)
        lens = [len(s) for s in seqs]
        rs = get_response_start(p, lens, required=False)
        out = [None] * len(seqs)
        self.model.eval()
        with torch.no_grad():
            for idxs in self._micro_batches(len(seqs), lens, p):
                ids, attn, _ = self._pad(seqs, idxs)
                lp, _ = losses.token_logprobs(forward_logits(self.model, ids, attn), ids)
                lp = lp.cpu().tolist()
                for r, i in enumerate(idxs):
                    row = [None] + lp[r][:lens[i] - 1]
                    out[i] = row[rs[i]:] if rs is not None else row
        return {"logprobs": out}  # non-finite values go out as null (rpc.send)

    # -- policy ------------------------------------------------------------------------------------------------

    def _response_columns(self, idxs, T, lens, rs, rows):
        """[len(idxs), T-1]: the response-aligned rows[i] at the columns that predict s[rs[i]:]; 0 elsewhere and for null."""
        out = torch.zeros(len(idxs), T - 1, dtype=torch.float32)
        for r, i in enumerate(idxs):
            if lens[i] > rs[i]:
                # response token t (t >= rs) is predicted at column t - 1
                out[r, rs[i] - 1:lens[i] - 1] = torch.tensor([0.0 if x is None else x for x in rows[i]], dtype=torch.float32)
        return out.to(self.device)

    def policy_step(self, p):
        self.need_model()
        seqs = get_sequences(p, self.cfg.vocab_size, self.cfg.block_size)
        lens = [len(s) for s in seqs]
        rs = get_response_start(p, lens, required=True)
        rlens = [n - r for n, r in zip(lens, rs)]
        rmask = get_aligned(p, "response_mask", rlens, "mask")
        old = get_old_logprobs(p, rlens, rmask)
        adv = get_advantages(p, len(seqs))
        eps_low, eps_high, dual = get_clip(p)
        masked = sum(sum(m) for m in rmask)
        # No signal: AdamW would still move the weights (decoupled weight decay, earlier momentum), so no step.
        skip = masked == 0 or all(a == 0 for a in adv)

        t0 = time.time()
        self.model.train()
        self.opt.zero_grad(set_to_none=True)
        denom = max(masked, 1)
        loss_sum, sums = 0.0, {}
        with torch.set_grad_enabled(not skip):
            for idxs in self._micro_batches(len(seqs), lens, p):
                ids, attn, T = self._pad(seqs, idxs)
                m = self._response_columns(idxs, T, lens, rs, rmask)
                o = self._response_columns(idxs, T, lens, rs, old)
                a = torch.tensor([float(adv[i]) for i in idxs], dtype=torch.float32, device=self.device).unsqueeze(1)
                lp, lsm = losses.token_logprobs(forward_logits(self.model, ids, attn), ids)
                loss, ratio, log_ratio = losses.policy_loss(lp, o, a, m, eps_low, eps_high, dual, denom)
                if not skip:
                    loss.backward()
                loss_sum += float(loss.detach())
                for k, v in losses.policy_stats(ratio, log_ratio, lsm, a, m, eps_low, eps_high, dual).items():
                    sums[k] = sums.get(k, 0.0) + v
        tokens = sum(lens)
        metrics = {"loss": loss_sum, **{k: v / denom for k, v in sums.items()}}
        if skip:
            sync(self.device)
            return {**metrics, "grad_norm": 0.0, "lr": self.lr_now(), "tokens": tokens, "masked_tokens": masked,
                    "tokens_per_s": tokens / max(time.time() - t0, 1e-9), "step": self.step, "skipped": True}
        return {**metrics, **self._apply_update(loss_sum, t0, tokens, masked), "skipped": False}

    def sleep(self, p):
        time.sleep(get_num(p, "seconds", 0.0))
        return {}


if __name__ == "__main__":
    rpc.serve(Trainer(), METHODS)
