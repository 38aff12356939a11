"""
The GPU check (`npm run check:gpu`): one short, self-contained run of the trainer's GPU path on one device, with no
network, printing one JSON line:

    .venv/bin/python workers/trainer/gpu_check.py            # on a GPU machine (python3 where torch is installed)
    .venv/bin/python workers/trainer/gpu_check.py --cpu-smoke  # the same code path on CPU with a tiny model (tests)

It builds a Qwen3-architecture model from random weights (~0.5B parameters; nothing is downloaded), shards it with
FSDP2 (`fully_shard`, one rank: the code a torchrun group runs), runs SFT steps and GRPO policy steps in bf16 with
fp32 master weights using the trainer's own losses (losses.py), writes the weights in Hugging Face format
(safetensors, from the full state dict), reloads them with AutoModelForCausalLM.from_pretrained and compares logits.

Output fields: device, torch, transformers, parameters, dtype, world_size, tokens_per_s (forward + backward +
AdamW, SFT), mfu (6·N·tokens/s over the device's peak dense bf16 FLOP/s; attention FLOPs not counted),
peak_memory_gib, sft_loss_first/last, policy_loss, policy_step_max_weight_change, reload_logits_equal (the reloaded model gives exactly the logits
of the state that was saved), reload_max_abs_diff, seconds. Without a GPU (and without --cpu-smoke) it says so and
exits 0.
"""
import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # one JSON line on stdout, no bars on stderr
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402

from losses import masked_cross_entropy, policy_loss, token_logprobs  # noqa: E402

# Peak dense bf16 FLOP/s by device name (vendor figures, no sparsity); unknown devices report mfu null.
PEAK_BF16 = {"H200": 989e12, "H100": 989e12, "A100": 312e12, "MI300X": 1307e12, "L40S": 362e12}

# ~0.5B parameters: Qwen3-0.6B's shape with 24 layers instead of 28 (most of it is the 151,936-token embedding).
FULL = dict(vocab_size=151_936, hidden_size=1024, intermediate_size=3072, num_hidden_layers=24, num_attention_heads=16,
            num_key_value_heads=8, head_dim=128, max_position_embeddings=4096)
SMOKE = dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, head_dim=16, max_position_embeddings=256)


def peak_flops(device):
    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name(device)
    return next((v for k, v in PEAK_BF16.items() if k in name), None)


def build(cfg_kwargs, seed):
    from transformers import AutoModelForCausalLM, Qwen3Config
    torch.manual_seed(seed)
    return AutoModelForCausalLM.from_config(Qwen3Config(**cfg_kwargs), dtype=torch.float32)


def shard(model, device, bf16):
    """FSDP2: each decoder layer, then the root. bf16 compute with fp32 master weights and fp32 gradient reduction."""
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if bf16 else MixedPrecisionPolicy()
    model.to(device)
    for layer in model.model.layers:
        fully_shard(layer, mp_policy=mp)
    fully_shard(model, mp_policy=mp)
    return model


def sft_step(model, opt, ids, mask):
    logits = model(input_ids=ids).logits
    loss = masked_cross_entropy(logits[:, :-1], ids[:, 1:], mask, mask.sum())
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss.item()


def policy_step(model, opt, ids, mask, adv):
    with torch.no_grad():
        old, _ = token_logprobs(model(input_ids=ids).logits, ids)
    logp, _ = token_logprobs(model(input_ids=ids).logits, ids)
    loss, _ratio, _log_ratio = policy_loss(logp, old, adv, mask, 0.2, 0.28, None, mask.sum())
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    return loss.item()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cpu-smoke", action="store_true", help="tiny model on CPU (gloo): the code path, not the figures")
    ap.add_argument("--steps", type=int, default=None)
    a = ap.parse_args()
    t_start = time.time()
    if not torch.cuda.is_available() and not a.cpu_smoke:
        print(json.dumps({"gpu": False, "message": "no GPU visible to PyTorch: nothing to check (exit 0)", "torch": torch.__version__}))
        return 0
    import transformers
    gpu = not a.cpu_smoke
    device = torch.device("cuda", 0) if gpu else torch.device("cpu")
    # A group of one meets in memory (no store socket); gloo's/NCCL's own listeners stay on loopback (dist.py).
    for k in ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME"):
        os.environ.setdefault(k, "lo")
    dist.init_process_group("nccl" if gpu else "gloo", store=dist.HashStore(), rank=0, world_size=1)
    cfg = FULL if gpu else SMOKE
    batch, seq = (8, 1024) if gpu else (2, 32)
    steps = a.steps or (10 if gpu else 3)
    try:
        model = shard(build(cfg, 0), device, bf16=gpu)
        params = sum(p.numel() for p in model.parameters())
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.0, fused=gpu)
        g = torch.Generator(device="cpu").manual_seed(1)
        ids = torch.randint(0, cfg["vocab_size"], (batch, seq), generator=g).to(device)
        mask = torch.ones(batch, seq - 1, device=device)
        if gpu:
            torch.cuda.reset_peak_memory_stats(device)
        first = sft_step(model, opt, ids, mask)  # warm-up (allocations, kernels), not timed
        sync = torch.cuda.synchronize if gpu else (lambda: None)
        sync()
        t0 = time.perf_counter()
        last = first
        for _ in range(steps):
            last = sft_step(model, opt, ids, mask)
        sync()
        tps = steps * batch * seq / (time.perf_counter() - t0)
        adv = (torch.arange(batch, device=device) % 2 * 2 - 1).float()[:, None]  # one advantage per sequence, ±1
        probe = model.model.layers[0].mlp.down_proj.weight
        before = probe.full_tensor().detach().clone()
        pol = policy_step(model, opt, ids, mask, adv)
        moved = (probe.full_tensor().detach() - before).abs().max().item()
        peak = peak_flops(device)
        mem = torch.cuda.max_memory_allocated(device) / 2**30 if gpu else None
        equal, diff = save_and_reload(model, cfg, ids[:2, :128].cpu())
        out = {
            "gpu": gpu, "device": torch.cuda.get_device_name(device) if gpu else "cpu", "torch": torch.__version__,
            "transformers": transformers.__version__, "parameters": params, "dtype": "bf16 (fp32 master)" if gpu else "fp32",
            "world_size": dist.get_world_size(), "batch": [batch, seq], "tokens_per_s": round(tps, 1),
            "mfu": round(6 * params * tps / peak, 4) if peak else None, "peak_memory_gib": round(mem, 2) if mem is not None else None,
            "sft_loss_first": round(first, 4), "sft_loss_last": round(last, 4), "policy_loss": round(pol, 6), "policy_step_max_weight_change": moved,
            "reload_logits_equal": equal, "reload_max_abs_diff": diff, "seconds": round(time.time() - t_start, 1),
        }
        print(json.dumps(out))
    finally:
        dist.destroy_process_group()
    return 0


def save_and_reload(model, cfg, ids):
    """The full state dict → an HF-format directory (safetensors) → from_pretrained; logits must match exactly."""
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
    from transformers import AutoModelForCausalLM
    sd = get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))
    saved = build(cfg, 0)
    saved.load_state_dict(sd)
    saved.eval()
    with tempfile.TemporaryDirectory() as d:
        saved.save_pretrained(d, safe_serialization=True)
        reloaded = AutoModelForCausalLM.from_pretrained(d, dtype=torch.float32).eval()
        with torch.no_grad():
            want = saved(input_ids=ids).logits
            got = reloaded(input_ids=ids).logits
    diff = (want - got).abs().max().item()
    return bool(torch.equal(want, got)), diff


if __name__ == "__main__":
    sys.exit(main())
