"""
The trainer: one long-lived PyTorch process (or a group of ranks, dist.py) that owns the policy, a Hugging Face
model (hf_model.py), and its optimiser, driven over JSON lines on stdin/stdout (client: workers/trainer/client.ts).

    .venv/bin/python -u workers/trainer/trainer.py   (the virtual environment set-up builds from requirements.txt)
    N ranks: client.ts starts N of these itself (dist.py: a FileStore in a private folder, loopback only)

This file holds the Trainer (model, optimiser, steps) and is the entry point; the rest, by job:
rpc.py (the JSON-lines loop), dist.py (ranks, FSDP2), validation.py (params), optim.py (AdamW, lr schedule),
checkpoint.py (checkpoint directories on disk), losses.py (the losses and metrics, pure tensor functions),
batching.py (micro-batches and padding, the same number of rounds on every rank), response_tables.py (response-aligned
rows placed at the columns that predict them),
hf_model.py (the transformers model), lora.py (peft adapters), export_onnx.py (the ONNX export for the embedded
engine), char_tokenizer.py (the embedded model's tokenizer.json).

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

Python never tokenises: token ids travel as JSON arrays of ints. The tokenizer files (tokenizer.json,
tokenizer_config.json) belong to the model: init writes them for a char vocabulary (char_tokenizer.py), load reads
them from the model directory, and every checkpoint and export carries them; `tokenizer` hands them to the caller.

Alignment: for a sequence s of length L, "the logprob of token t" is log p(s[t] | s[:t]), t = 1..L-1 (s[0] has none).
A response starts at index response_start (>= 1); response-aligned arrays (response_mask, old_logprobs and the
logprobs method's output when response_start is given) have one entry per token s[response_start:].

Methods (params → result)
-------------------------
init {model: {arch?: "qwen3"|"qwen2"|"llama", n_layer, n_head, n_kv_head?, n_embd, block_size, intermediate_size?,
             rope_theta?, init_std?, qk_norm_gain? (hf_model.build)}, vocab: [str], seed: int, optim?: {lr, weight_decay, betas: [b1, b2], eps,
      warmup_steps, total_steps, schedule: "constant"|"cosine", min_lr_ratio, grad_clip}, device?: "auto"|"cpu"|"cuda",
      lora?: {rank, alpha, dropout, target_modules}, gradient_checkpointing?: bool}
     → info.  A randomly initialised model of that architecture with a char tokenizer over vocab (<eos> ends
     generation). Optimiser defaults: DEFAULT_OPTIM (optim.py; the paper's RL settings: lr 1e-6 after a 20-step
     warm-up).
load {path, optim?: overrides of the stored optimiser config, device?, reset_optimizer?: bool, fresh?: bool, lora?,
      gradient_checkpointing?} → info.  fresh: read only the weights and tokenizer (step 0, a new optimiser).  path is a directory in HF format: a model (step 0, fresh optimiser) or a
     checkpoint this trainer saved (checkpoint.py: weights, optimiser state through torch.distributed.checkpoint, so
     any rank count resumes it, RNG states, step, schedule, LoRA adapter).
save {path} → {path, bytes, step}.  The checkpoint directory, written into a sibling and swapped in whole
     (checkpoint.write_dir): never half-written. Its weights are plain HF format (from_pretrained, vLLM and SGLang
     load them as they are; with LoRA the merged model is there and the adapter beside it).
tokenizer {} → {files: {name: text}}: the model's tokenizer files.
set_optim {optim, reset?: bool} → {step, optim}.  A stage's optimiser settings: the schedule restarts at the current step.
set_threads {threads: int | null} → {threads}.  The cores this trainer may use from now on: a number caps every compute
     call's threads (the worker runs the engine beside it: async RL), null goes back to TOOLSMITH_TRAINER_THREADS or
     the measured policy. An operator's TOOLSMITH_TRAINER_THREADS wins over a number.
reset_optimizer {} → {step}.  Fresh AdamW moments (stage 3 of the recipe); the step counter (and so the lr
     schedule) keeps going.
sft_step {sequences: [[int]], loss_masks?: [[int]] (aligned with sequences; 1 = train on predicting this token,
     entry 0 is ignored; default all ones), micro_batch?: int (sequences per forward/backward, default all),
     micro_batch_tokens?: int (a token budget per forward/backward: rows × padded length; gradients accumulate)}
     → {loss, grad_norm, lr, tokens, masked_tokens, tokens_per_s, step}.  Loss = mean cross-entropy over all
     masked tokens of the batch (token-level).  grad_norm is the norm before clipping.
eval_loss {sequences, loss_masks?, micro_batch?} → {loss, tokens, masked_tokens, tokens_per_s} (no update).
logprobs {sequences, response_start?: [int], micro_batch?} → {logprobs: [[number|null]]}: without
     response_start, entry t of row i is the logprob of token t (entry 0 is null); with it, row i is aligned with
     the response tokens s[response_start[i]:].
policy_step {sequences, response_start: [int], response_mask: [[0|1]] (response-aligned; 1 = model token,
     0 = tool/env token), old_logprobs: [[number|null]] (response-aligned; null allowed where the mask is 0),
     advantages: [number] (one per sequence), eps_low?: 0.2, eps_high?: 0.28, dual_clip?: number|null,
     rollout_logprobs?: [[number|null]] (response-aligned; the engine's log-probs, null where it gave none),
     tis_mode?: "off"|"token"|"sequence"|"mask" (default "token"), tis_cap?: number > 1 (default 2), micro_batch?}
     → {loss, clip_frac_low, clip_frac_high, dual_clip_frac, approx_kl, entropy, grad_norm, lr, tokens,
        masked_tokens, tokens_per_s, step, skipped, tis_applied, tis_tokens, mismatch_kl, tis_mean_weight,
        tis_truncated_frac, tis_masked_frac, token_weights: [[number]], token_clip: [[0..5]]}.
     Loss (docs/method.md §5): -(1 / Σ masked tokens) Σ_i Σ_t w_{i,t} min(ρ Â_i, clip(ρ, 1-ε_low, 1+ε_high) Â_i),
     with dual-clip max(·, c Â_i) for Â_i < 0 when dual_clip = c; no KL term, no entropy term. w is the TIS weight
     (losses.tis_weights, a constant): from ρ_TIS = π_old / π_rollout = exp(old_logprobs - rollout_logprobs) per
     token, min(ρ_TIS, C) (token), min(Π_t ρ_TIS, C) per sequence (sequence), 0 outside [1/C, C] else 1 (mask), 1
     (off). Tokens without a rollout log-prob get w = 1; without any (the engine returned none) tis_applied is
     false and the step is the plain GRPO step. Over the tokens with a rollout log-prob (tis_tokens of them):
     mismatch_kl = mean of (ρ_TIS - 1) - log ρ_TIS (k3), tis_mean_weight, tis_truncated_frac (ρ_TIS > C in token /
     sequence mode), tis_masked_frac (mask mode). token_weights[i] / token_clip[i] are response-aligned: w (rounded
     to 6 decimals; 1 at mask-0 tokens) and the ClipState (contracts/trajectory.ts: 0 none, 1 clipped low, 2
     clipped high, 3 dual, 4 TIS-truncated, 5 TIS-masked; a PPO state wins over a TIS one; 0 at mask-0 tokens).
     clip_frac_low  = fraction of masked tokens where the lower clip binds (Â < 0 and ρ < 1-ε_low),
     clip_frac_high = fraction where the upper clip binds (Â > 0 and ρ > 1+ε_high),
     dual_clip_frac = fraction where the dual clip binds (Â < 0 and ρ > c);
     approx_kl = mean of (ρ - 1) - log ρ (the k3 estimator of KL(π_old || π_θ), ≥ 0); entropy = mean entropy of
     π_θ at the masked positions. Both are metrics only (computed without gradient).
     All advantages zero (or no masked token): the gradient is exactly zero, so the optimiser step is SKIPPED
     (skipped: true, step not advanced). AdamW would otherwise still move the weights through decoupled weight
     decay and the momentum of earlier steps, although the batch carries no signal.
export_onnx {dir} → {dir, files, step, seconds}.  Writes model.onnx, config.json and the tokenizer files into a fresh
     sibling directory dir + ".tmp-XXXX", then swaps it in with one atomic renameat2(RENAME_EXCHANGE) (Linux) and
     deletes the old one; where that call is missing, two renames (a loader may briefly find no directory, but never
     a half-written one).
export_hf {dir} → {dir, files, step, seconds}.  The weights as a plain HF model directory (LoRA merged in), for
     from_pretrained, vLLM and SGLang; swapped in whole.
digest {} → {model: sha256 hex of every parameter/buffer in state_dict order (the merged weights under LoRA), step}.
info {} → {device, torch_version, params, step, initialised, config, optim}.
sleep {seconds} → {} (tests and diagnostics).
shutdown {} → {} and the process exits.

Device: CUDA when available and device is not "cpu" (ROCm's torch.cuda too): bf16 compute with fp32 master weights
under FSDP2; on CPU fp32. Several ranks: see dist.py (each rank takes a share of the micro-batches; the results are
summed over ranks, so they equal one process's up to float rounding). Threads on CPU (threads.py): a number in
TOOLSMITH_TRAINER_THREADS fixes them; otherwise each kind of compute call keeps the faster of all cores and one thread
by measuring, so a busy neighbour does not stall the trainer's threads at every barrier.
"""
import math
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the sibling modules, from any cwd
import rpc  # noqa: E402  (first: it points fd 1 at stderr before torch is imported)

import torch  # noqa: E402

import batching  # noqa: E402
import char_tokenizer  # noqa: E402
import checkpoint  # noqa: E402
import dist  # noqa: E402
import export_onnx  # noqa: E402
import hf_model  # noqa: E402
import lifeline  # noqa: E402
import lora  # noqa: E402
import threads  # noqa: E402
import losses  # noqa: E402
import response_tables  # noqa: E402
from optim import init_state, lr_at, make_optimizer, optim_config, set_hyperparameters  # noqa: E402
from validation import (RpcError, bad, get_advantages, get_aligned, get_clip, get_int, get_model_config,  # noqa: E402
                        get_num, get_old_logprobs, get_response_start, get_rollout_logprobs, get_sequences, get_tis,
                        get_vocab)

THREADS = threads.policy_from_env()
torch.set_num_threads(THREADS.begin())
# Subnormal floats are 10-100× slower on x86 CPUs; after a few hundred steps AdamW's second moments and the
# attention weights of a small model are full of them (a 2,000-step SFT ran at a third of its speed). Flush to zero.
torch.set_flush_denormal(True)

# Fault injection for tests, named as such: TOOLSMITH_TRAINER_FAULT_NAN_AT_STEP=N makes update N report a NaN loss.
FAULT_NAN_AT_STEP = int(os.environ["TOOLSMITH_TRAINER_FAULT_NAN_AT_STEP"]) if os.environ.get("TOOLSMITH_TRAINER_FAULT_NAN_AT_STEP") else None

METHODS = {"init", "load", "save", "reset_optimizer", "set_optim", "set_threads", "sft_step", "eval_loss", "logprobs",
           "policy_step", "export_onnx", "export_hf", "digest", "info", "sleep", "tokenizer"}


def forward_logits(model, idx, attn):
    """Logits [B, T, V] (float32) for right-padded idx [B, T] with attn [B, T] 0/1: positions 0.. per row."""
    return model(input_ids=idx, attention_mask=attn.long(), use_cache=False).logits.float()


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()  # so that timings cover the GPU's work, not just its queueing


class Trainer:
    def __init__(self, device):
        self.model = None
        self.opt = None
        self.summary = None
        self.tok_files = None
        self.lora = None
        self.base_dir = None  # the directory a LoRA adapter applies to
        self.optim_cfg = None
        self.step = 0
        self.sched_start = 0  # the step the current optimiser schedule (warm-up, cosine) started at
        self.home = device  # the rank's device (dist.setup)
        self.device = device
        # One thread tuner per kind of call: a forward-only logprobs pass costs a third of an update per token.
        self.thread_policies = {}

    # -- set-up ------------------------------------------------------------------------------------------------

    def _pick_device(self, want):
        want = want or "auto"
        if want not in ("auto", "cpu", "cuda"):
            raise bad("device", "expected 'auto', 'cpu' or 'cuda'")
        if want == "cuda" and self.home.type != "cuda":
            raise bad("device", "cuda requested but not available")
        return torch.device("cpu") if want == "cpu" else self.home

    def need_model(self):
        if self.model is None:
            raise RpcError("not_initialised", "call init or load first")

    def drop_gradients(self):
        if self.opt is not None:
            self.opt.zero_grad(set_to_none=True)

    def lr_now(self):
        return lr_at(self.optim_cfg, self.step - self.sched_start)

    def info(self, _params=None):
        # A sharded parameter is a DTensor, whose numel() is the whole tensor's: no rank count to multiply by.
        trainable = sum(p.numel() for p in self.model.parameters() if p.requires_grad) if self.model is not None else 0
        return {
            "device": str(self.device), "torch_version": torch.__version__, "cuda": torch.cuda.is_available(),
            "initialised": self.model is not None, "step": self.step, "world_size": dist.WORLD,
            "params": self.summary["params"] if self.summary else 0, "trainable_params": trainable,
            "config": self.summary, "optim": self.optim_cfg, "lora": self.lora,
            "threads": {kind: t.describe() for kind, t in self.thread_policies.items()} or THREADS.describe(),
        }

    def _install(self, model, p, tok_files, lora_cfg, base_dir, adapter=None):
        """Make model (a plain transformers model on the CPU) the policy: LoRA (with a checkpoint's adapter tensors
        when given), device, sharding, optimiser."""
        device = self._pick_device(p.get("device"))
        self.summary = hf_model.summary(model)
        if p.get("gradient_checkpointing"):
            model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
            model.config.use_cache = False
        if lora_cfg:
            model = lora.wrap(model, lora_cfg)
            if adapter is not None:
                lora.load_adapter(model, adapter)
        model = model.to(device)
        model = dist.shard(model, device, bf16=device.type == "cuda")
        self.model, self.device, self.tok_files, self.lora, self.base_dir = model, device, tok_files, lora_cfg, base_dir
        self.opt = make_optimizer(self.model, self.optim_cfg)

    def init(self, p):
        vocab = get_vocab(p)
        mc = get_model_config(p, vocab)
        seed = get_int(p, "seed", 0)
        self.optim_cfg = optim_config(p.get("optim"))
        if p.get("lora"):
            raise bad("lora", "LoRA needs a pretrained base: load a model (recipe model {kind: 'model'}), not init")
        random.seed(seed)
        torch.manual_seed(seed)  # also seeds every CUDA device
        eos = vocab.index(char_tokenizer.EOS) if char_tokenizer.EOS in vocab else None
        gain = mc.pop("qk_norm_gain", None)
        try:
            cfg = hf_model.make_config(**mc, vocab_size=len(vocab), eos_token_id=eos, pad_token_id=eos)
        except ValueError as e:
            raise bad("model", str(e))
        self.step, self.sched_start = 0, 0
        self._install(hf_model.build(cfg, qk_norm_gain=gain), p, char_tokenizer.files(vocab, mc["block_size"]), None, None)
        return self.info()

    def reset_optimizer(self, _p):
        self.need_model()
        self.opt = make_optimizer(self.model, self.optim_cfg)
        return {"step": self.step}

    def set_threads(self, p):
        n = p.get("threads")
        if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n < 1):
            raise bad("threads", "must be a positive integer or null")
        fixed_by_operator = (os.environ.get("TOOLSMITH_TRAINER_THREADS") or "auto").strip() != "auto"
        self.threads_cap = None if n is None or fixed_by_operator else n
        # Each kind of call starts over under the new budget (its old measurements were of another machine state).
        self.thread_policies.clear()
        return {"threads": self.threads_cap}

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

    def tokenizer(self, _p):
        self.need_model()
        return {"files": self.tok_files}

    # -- checkpoints -------------------------------------------------------------------------------------------

    def _full_state(self):
        return dist.full_state_dict(self.model)

    def _plain_model(self, full):
        """Rank 0: a plain transformers model on the CPU holding the current weights (LoRA merged in)."""
        if self.lora:
            return lora.merged(self.model, full)
        m = hf_model.build(self.model.config)
        m.load_state_dict(full, strict=False)  # tied weights appear twice in full; load_state_dict takes either
        return m.eval()

    def save(self, p):
        self.need_model()
        path = p.get("path")
        if not isinstance(path, str) or not path:
            raise bad("path", "expected a checkpoint directory path")
        full = self._full_state()  # a collective: every rank takes part
        state = {"step": self.step, "sched_start": self.sched_start, "optim": self.optim_cfg, "lora": self.lora,
                 "base_dir": self.base_dir, "world_size": dist.WORLD}

        def weights(tmp):
            if self.lora:
                checkpoint.write_adapter(tmp, lora.adapter_state(self.model, full), self.model, self.base_dir)
            else:
                hf_model.save(self.model, tmp, self.tok_files, state_dict=full)
            hf_model.write_tokenizer_files(tmp, self.tok_files)

        out = checkpoint.save(path, weights, self.model, self.opt, state)
        return {"path": out, "bytes": checkpoint.dir_bytes(out) if dist.is_main() else 0, "step": self.step}

    def load(self, p):
        path = checkpoint.model_dir(p.get("path"))
        # fresh: a model to start from (a registered model): only its weights and tokenizer are read, never a
        # trainer state or optimiser files that happen to lie beside them.
        state = None if p.get("fresh") else checkpoint.read_state(path)  # None: a plain model directory
        self.optim_cfg = optim_config(p.get("optim"), base=optim_config(state["optim"]) if state else None)
        adapter = None
        if state and state.get("lora"):  # a LoRA checkpoint: the base it was trained on, then its adapter
            lora_cfg, base_dir = state["lora"], state["base_dir"]
            model = hf_model.load(base_dir)
            adapter = checkpoint.read_adapter(path)
        else:
            lora_cfg = lora.config(p.get("lora"))
            base_dir = path if lora_cfg else None
            model = hf_model.load(path)
        tok_files = hf_model.tokenizer_files(path)
        if "tokenizer.json" not in tok_files:
            raise bad("path", f"{path} has no tokenizer.json")
        self._install(model, p, tok_files, lora_cfg, base_dir, adapter)
        self.step = int(state["step"]) if state else 0
        self.sched_start = int(state["sched_start"]) if state else 0
        if state and not p.get("reset_optimizer"):
            if checkpoint.has_optimizer(path):
                init_state(self.opt)
                checkpoint.load_optimizer(path, self.model, self.opt)
            set_hyperparameters(self.opt, self.optim_cfg)  # the config (possibly overridden) wins over stored ones
        if state:
            checkpoint.restore_rng(state.get("rng") or {})
        return self.info()

    def digest(self, _p):
        self.need_model()
        full = self._full_state()
        if not dist.is_main():
            return {}
        sd = self._plain_model(full).state_dict() if self.lora else full
        return {"model": checkpoint.digest_state(sd), "step": self.step}

    def _export(self, p, write):
        """write(model, tmp): the current weights (LoRA merged in) as a plain model on the CPU of rank 0, into a
        fresh directory swapped in at p["dir"] whole, like every directory the trainer writes."""
        self.need_model()
        out = p.get("dir")
        if not isinstance(out, str) or not out:
            raise bad("dir", "expected a directory path")
        t0 = time.time()
        full = self._full_state()  # a collective: every rank takes part
        if not dist.is_main():
            return {}
        m = self._plain_model(full)
        out = checkpoint.write_dir(out, lambda tmp: write(m, tmp))
        return {"dir": out, "files": sorted(os.listdir(out)), "step": self.step, "seconds": time.time() - t0}

    def export_hf(self, p):
        """A plain HF model directory: what from_pretrained, vLLM and SGLang load."""
        return self._export(p, lambda m, tmp: hf_model.save(m, tmp, self.tok_files))

    def export_onnx(self, p):
        weights = p.get("weights", "float32")
        if weights not in export_onnx.onnx_weights.WEIGHTS:
            raise bad("weights", f"expected one of {', '.join(export_onnx.onnx_weights.WEIGHTS)}")

        def write(m, tmp):
            with torch.random.fork_rng(devices=[]):  # export() draws example inputs; keep the training RNG intact
                export_onnx.write_dir(m, self.tok_files, tmp, weights=weights)
        return self._export(p, write)

    def _backward(self, loss, weight):
        # FSDP averages gradients over ranks; each rank's loss is its share of the batch's sum, so scale back up.
        (loss * (weight * (dist.WORLD if dist.sharded() else 1))).backward()

    def _apply_update(self, loss_sum, t0, tokens, masked):
        """Gradients are accumulated; check, clip, step. Raises nan_loss without stepping on non-finite values."""
        params = [q for q in self.model.parameters() if q.requires_grad]
        max_norm = self.optim_cfg["grad_clip"]
        gn = dist.to_local_scalar(torch.nn.utils.clip_grad_norm_(params, max_norm if max_norm else float("inf")))
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

    def _seqs(self, p):
        return get_sequences(p, self.summary["vocab_size"], self.summary["block_size"])

    # -- SFT ---------------------------------------------------------------------------------------------------

    def _sft(self, p, train):
        self.need_model()
        seqs = self._seqs(p)
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
            for idxs, w in batching.rounds(len(seqs), lens, p, self.summary["vocab_size"]):
                ids, attn, T = batching.pad(seqs, idxs, self.device)
                lm = torch.zeros(len(idxs), T, dtype=torch.float32)
                for r, i in enumerate(idxs):
                    lm[r, :lens[i]] = torch.tensor(masks[i], dtype=torch.float32)
                logits = forward_logits(self.model, ids, attn)
                loss = losses.masked_cross_entropy(logits[:, :-1], ids[:, 1:], lm[:, 1:].to(self.device), masked)
                if train:
                    self._backward(loss, w)
                loss_sum += w * float(loss.detach())
        loss_sum = dist.all_sum([loss_sum], self.device)[0]
        tokens = sum(lens)
        if not train:
            if not math.isfinite(loss_sum):
                raise RpcError("nan_loss", f"non-finite eval loss ({loss_sum})")
            sync(self.device)
            return {"loss": loss_sum, "tokens": tokens, "masked_tokens": masked,
                    "tokens_per_s": tokens / max(time.time() - t0, 1e-9)}
        return {"loss": loss_sum, **self._apply_update(loss_sum, t0, tokens, masked)}

    def _threaded(self, kind, fn, p):
        """Run fn(p) with the thread count kind's policy picks, and tell the policy how long it took per token."""
        if self.device.type != "cpu" or dist.WORLD > 1:
            return fn(p)
        policy = self.thread_policies.get(kind)
        if policy is None:
            cap = getattr(self, "threads_cap", None)
            policy = self.thread_policies[kind] = threads.FixedThreads(cap) if cap else threads.policy_from_env()
        n = policy.begin()
        if n != torch.get_num_threads():
            torch.set_num_threads(n)
        t0 = time.perf_counter()
        out = fn(p)
        seqs = p.get("sequences") if isinstance(p, dict) else None
        policy.end(time.perf_counter() - t0, sum(len(s) for s in seqs) if isinstance(seqs, list) else 1)
        return out

    def sft_step(self, p):
        return self._threaded("sft_step", lambda q: self._sft(q, True), p)

    def eval_loss(self, p):
        return self._threaded("eval_loss", lambda q: self._sft(q, False), p)

    # -- log-probs ---------------------------------------------------------------------------------------------

    def logprobs(self, p):
        return self._threaded("logprobs", self._logprobs, p)

    def _logprobs(self, p):
        self.need_model()
        seqs = self._seqs(p)
        lens = [len(s) for s in seqs]
        rs = get_response_start(p, lens, required=False)
        # Each rank fills its rows of one dense [N, T-1] table; a sum over ranks assembles it on every rank.
        table = torch.zeros(len(seqs), max(lens) - 1, dtype=torch.float64, device=self.device)
        self.model.eval()
        with torch.no_grad():
            for idxs, w in batching.rounds(len(seqs), lens, p, self.summary["vocab_size"]):
                ids, attn, T = batching.pad(seqs, idxs, self.device)
                lp, _ = losses.token_logprobs(forward_logits(self.model, ids, attn), ids)
                if w:
                    for r, i in enumerate(idxs):
                        table[i, :T - 1] = lp[r].double()
        table = dist.all_sum_tensor(table).cpu().tolist()
        out = []
        for i, n in enumerate(lens):
            row = [None] + table[i][:n - 1]
            out.append(row[rs[i]:] if rs is not None else row)
        return {"logprobs": out}  # non-finite values go out as null (rpc.send)

    # -- policy ------------------------------------------------------------------------------------------------

    def _tis(self, p, rlens, rmask, old):
        """The TIS weights of the whole batch (losses.tis_weights) and its metrics. They depend on the request only,
        not on the model, so every rank computes them for every sequence: no collective."""
        mode, cap = get_tis(p)
        roll = get_rollout_logprobs(p, rlens)
        old_t, _ = response_tables.response_table(old, rlens)
        m_t, _ = response_tables.response_table(rmask, rlens)
        roll_t, given = response_tables.response_table(roll if roll is not None else [[] for _ in rlens], rlens)
        valid = m_t * given
        w, truncated, masked, st = losses.tis_weights(old_t, roll_t, valid, mode, cap)
        n = st["tokens"]
        metrics = {
            "tis_applied": mode != "off" and n > 0, "tis_tokens": int(n),
            "mismatch_kl": st["mismatch_kl"] / n if n else 0.0, "tis_mean_weight": st["weight"] / n if n else 1.0,
            "tis_truncated_frac": st["truncated"] / n if n else 0.0, "tis_masked_frac": st["masked"] / n if n else 0.0,
        }
        return w, truncated, masked, metrics

    def policy_step(self, p):
        return self._threaded("policy_step", self._policy_step, p)

    def _policy_step(self, p):
        self.need_model()
        seqs = self._seqs(p)
        lens = [len(s) for s in seqs]
        rs = get_response_start(p, lens, required=True)
        rlens = [n - r for n, r in zip(lens, rs)]
        rmask = get_aligned(p, "response_mask", rlens, "mask")
        old = get_old_logprobs(p, rlens, rmask)
        adv = get_advantages(p, len(seqs))
        eps_low, eps_high, dual = get_clip(p)
        tis_w, tis_trunc, tis_masked, tis_metrics = self._tis(p, rlens, rmask, old)
        masked = sum(sum(m) for m in rmask)
        # No signal: AdamW would still move the weights (decoupled weight decay, earlier momentum), so no step.
        skip = masked == 0 or all(a == 0 for a in adv)

        t0 = time.time()
        self.model.train()
        self.opt.zero_grad(set_to_none=True)
        denom = max(masked, 1)
        loss_sum, sums = 0.0, {}
        # Each rank fills the PPO clip states of its own rows; a sum over ranks assembles the batch's on rank 0.
        ppo = torch.zeros(tis_w.shape, dtype=torch.uint8, device=self.device)
        with torch.set_grad_enabled(not skip):
            for idxs, w in batching.rounds(len(seqs), lens, p, self.summary["vocab_size"]):
                ids, attn, T = batching.pad(seqs, idxs, self.device)
                m = response_tables.response_columns(idxs, T, lens, rs, rmask, self.device)
                o = response_tables.response_columns(idxs, T, lens, rs, old, self.device)
                tw = response_tables.table_columns(idxs, T, lens, rs, tis_w, self.device)
                a = torch.tensor([float(adv[i]) for i in idxs], dtype=torch.float32, device=self.device).unsqueeze(1)
                lp, lsm = losses.token_logprobs(forward_logits(self.model, ids, attn), ids)
                loss, ratio, log_ratio = losses.policy_loss(lp, o, a, m, eps_low, eps_high, dual, denom, weight=tw)
                if not skip:
                    self._backward(loss, w)
                loss_sum += w * float(loss.detach())
                for k, v in losses.policy_stats(ratio, log_ratio, lsm, a, m, eps_low, eps_high, dual).items():
                    sums[k] = sums.get(k, 0.0) + w * v
                if w:
                    cs = losses.ppo_clip_states(ratio, a, m, eps_low, eps_high, dual).to(torch.uint8)
                    for r, i in enumerate(idxs):
                        ppo[i, :rlens[i]] = cs[r, rs[i] - 1:lens[i] - 1]
        keys = sorted(sums)
        total = dist.all_sum([loss_sum] + [sums[k] for k in keys], self.device)
        loss_sum, sums = total[0], dict(zip(keys, total[1:]))
        ppo = dist.all_sum_tensor(ppo).cpu()
        tokens = sum(lens)
        metrics = {"loss": loss_sum, **{k: v / denom for k, v in sums.items()}, **tis_metrics,
                   **self._token_outputs(tis_w, losses.clip_states(ppo, tis_trunc, tis_masked), rlens)}
        if skip:
            sync(self.device)
            return {**metrics, "grad_norm": 0.0, "lr": self.lr_now(), "tokens": tokens, "masked_tokens": masked,
                    "tokens_per_s": tokens / max(time.time() - t0, 1e-9), "step": self.step, "skipped": True}
        return {**metrics, **self._apply_update(loss_sum, t0, tokens, masked), "skipped": False}

    @staticmethod
    def _token_outputs(weights, clip, rlens):
        """Response-aligned per-token arrays for the token view: TIS weights rounded to 6 decimals (a compact JSON
        line: 1.0 stays "1.0"; the division of two exact integers gives the double nearest the 6-decimal value, so
        it prints as such), and ClipStates."""
        if not dist.is_main():  # only rank 0 answers
            return {}
        wr = (torch.round(weights * 1e6) / 1e6).tolist()
        cl = clip.tolist()
        return {"token_weights": [wr[i][:n] for i, n in enumerate(rlens)], "token_clip": [cl[i][:n] for i, n in enumerate(rlens)]}

    def sleep(self, p):
        time.sleep(get_num(p, "seconds", 0.0))
        return {}


if __name__ == "__main__":
    lifeline.die_with_parent()
    os.umask(0o077)  # checkpoints and exports are owner-only (0700 folders, 0600 files)
    rpc.serve(Trainer(dist.setup()), METHODS)
