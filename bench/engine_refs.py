"""bench:engine's Python side (bench/engine-models.ts runs it with the trainer's interpreter; prints one JSON line).

  engine_refs.py transformers --model DIR --prompt TEXT --batch N --tokens T --rounds R --threads K
      transformers' generate() on the Hugging Face directory: N copies of the prompt, do_sample, temperature 1,
      top_p 1, top_k 0, max_new_tokens T, KV cache on, torch threads K; generated tokens (each row up to and including
      its end-of-sequence token) / wall time, median of R rounds.
  engine_refs.py mismatch --model DIR --prompt TEXT --samples FILE --threads K
      the trainer-vs-engine log-prob mismatch: FILE holds the engine's samples ([{tokenIds, logprobs}], temperature
      1); transformers (float32) scores each sample's tokens after the prompt; |engine - transformers| per token,
      mean and max over all tokens.
  engine_refs.py limits --model DIR --threads K
      what this machine allows: float32 weight bytes and FLOPs per token (2 x parameters) of the model, memory
      bandwidth (numpy copy of a 256 MiB array: read + write bytes / time, best of 5) and sgemm GFLOP/s (numpy
      float32 matmul, OpenBLAS with K threads, shapes of a batch-16 decode step's largest projection, best of 5).
"""

import argparse
import json
import os
import sys
import time


def transformers_rate(a):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(a.threads)
    tok = AutoTokenizer.from_pretrained(a.model)
    model = AutoModelForCausalLM.from_pretrained(a.model, dtype=torch.float32).eval()
    enc = tok([a.prompt] * a.batch, return_tensors="pt")
    n_prompt = enc["input_ids"].shape[1]
    eos = model.generation_config.eos_token_id
    eos = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
    pad = tok.pad_token_id if tok.pad_token_id is not None else next(iter(eos), 0)
    runs, tokens = [], 0
    for r in range(a.rounds):
        torch.manual_seed(r)
        t0 = time.perf_counter()
        with torch.inference_mode():
            out = model.generate(
                **enc,
                do_sample=True,
                temperature=1.0,
                top_p=1.0,
                top_k=0,
                max_new_tokens=a.tokens,
                use_cache=True,
                pad_token_id=pad,
            )
        dt = time.perf_counter() - t0
        tokens = 0
        for row in out[:, n_prompt:].tolist():
            for t in row:
                tokens += 1
                if t in eos:
                    break
        runs.append(tokens / dt)
    runs.sort()
    return {"tps": runs[len(runs) // 2], "tokens": tokens, "prompt_tokens": n_prompt, "runs": runs}


def mismatch(a):
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(a.threads)
    tok = AutoTokenizer.from_pretrained(a.model)
    model = AutoModelForCausalLM.from_pretrained(a.model, dtype=torch.float32).eval()
    prompt = tok(a.prompt)["input_ids"]
    with open(a.samples) as f:
        samples = json.load(f)
    diffs = []
    with torch.inference_mode():
        for s in samples:
            ids = torch.tensor([prompt + s["tokenIds"]])
            lp = torch.log_softmax(model(ids).logits[0, len(prompt) - 1 : -1].float(), dim=-1)
            ref = lp.gather(1, ids[0, len(prompt) :].unsqueeze(1)).squeeze(1)
            diffs += (torch.tensor(s["logprobs"]) - ref).abs().tolist()
    return {"tokens": len(diffs), "mean_abs": sum(diffs) / len(diffs), "max_abs": max(diffs)}


def limits(a):
    import numpy as np
    from safetensors import safe_open

    params = 0
    with safe_open(os.path.join(a.model, "model.safetensors"), "np") as f:
        for k in f.keys():
            params += int(np.prod(f.get_slice(k).get_shape()))
    with open(os.path.join(a.model, "config.json")) as fh:
        cfg = json.load(fh)
    # Tied embeddings are stored once and read once per token (as the output projection).
    src = np.ones(64 * 1024 * 1024, dtype=np.float32)
    dst = np.empty_like(src)
    best = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t0)
    bandwidth = 2 * src.nbytes / best / 1e9
    # A batch-16 decode step's largest matmul: 16 rows x hidden times hidden x vocab (the output projection), float32.
    h, v = cfg["hidden_size"], cfg["vocab_size"]
    x = np.random.default_rng(0).standard_normal((16, h), dtype=np.float32)
    w = np.random.default_rng(1).standard_normal((h, v), dtype=np.float32)
    best = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(10):
            x @ w
        best = min(best, (time.perf_counter() - t0) / 10)
    gflops_16 = 2 * 16 * h * v / best / 1e9
    # And a large square sgemm: the cores' compute peak as BLAS reaches it.
    n = 1024
    m1 = np.random.default_rng(2).standard_normal((n, n), dtype=np.float32)
    best = 1e9
    for _ in range(5):
        t0 = time.perf_counter()
        m1 @ m1
        best = min(best, time.perf_counter() - t0)
    gflops_sq = 2 * n**3 / best / 1e9
    return {
        "params": params,
        "weight_bytes": params * 4,
        "flops_per_token": 2 * params,
        "bandwidth_gbs": bandwidth,
        "gflops_batch16_shape": gflops_16,
        "gflops_square": gflops_sq,
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["transformers", "mismatch", "limits"])
    p.add_argument("--samples")
    p.add_argument("--model", required=True)
    p.add_argument("--prompt", default="")
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--tokens", type=int, default=96)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    out = {"transformers": transformers_rate, "mismatch": mismatch, "limits": limits}[a.mode](a)
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
