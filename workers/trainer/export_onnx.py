"""
Export a Hugging Face decoder (Llama, Qwen2, Qwen3: hf_model.py) to ONNX for the embedded engine
(workers/engines/onnx-engine.ts), with an explicit KV cache.

    .venv/bin/python export_onnx.py --out DIR (--model HF_DIR | [--seed S] [--config JSON]) [--weights float32|int8|int4]

Writes into DIR:
  model.onnx      one graph for prefill and decode over a fixed-size cache the engine owns (no copies of it):
                    inputs  input_ids [batch, seq] int64, position_ids [batch, seq] int64,
                            attention_mask [batch, cache+seq] float32 (1 = a real cached/new token, 0 = empty),
                            past_key_<i> [batch, n_kv_head, head_dim, cache] float32 (keys stored transposed),
                            past_value_<i> [batch, n_kv_head, cache, head_dim] float32, i = 0..n_layer-1
                    outputs logits [batch, vocab] float32 (the last position's only),
                            logsumexp, entropy [batch] float64 (of softmax(logits): the sampler's log-probs and
                            entropies, computed here rather than by an exp over the vocabulary per token in the
                            engine's JavaScript, which at batch 16 took a fifth of its time; static graph only),
                            new_key_<i>, new_value_<i> [batch, n_kv_head, seq, head_dim] float32 (this call's
                            keys and values, which the engine writes into its cache itself)
                  batch, seq and cache are dynamic. Attention reads the cache in place: scores against the cached
                  keys and against the new keys are two MatMuls (no concat of the cache, no repeat for grouped
                  heads: the query heads of one kv head are folded into its rows).
                  The output projection reads the tied embedding itself (stored once); --weights int8/int4 stores
                  the projections blockwise-quantized (onnx_weights.py; com.microsoft MatMulNBits), default float32.
                  With --graph legacy the previous interface (present = past ++ new, full logits) is written
                  instead; bench:rollout runs the previous engine on it, side by side.
  config.json     the engine's view of the model: weights, vocab_size, n_layer, n_head, n_kv_head, head_dim, n_embd,
                  block_size, eos_token_id, model_type.
  tokenizer.json, tokenizer_config.json   the model's own (HF format).

transformers' forward keeps its cache in Python objects, which a traced graph cannot take as inputs; `Decoder`
below is the same computation over the model's own modules (its norms, projections, MLPs and rotary frequencies)
with the cache as plain tensors. tests/integration/engine-onnx.test.ts checks that the engine's greedy output
equals transformers' generate() on the same weights.

Without --model the weights are a random initialisation from --seed (tests): --config holds make_config's
arguments (n_layer, n_head, n_embd, block_size, ...), the vocabulary is default_vocab().
"""
import argparse
import inspect
import io
import json
import os
import sys
import time

import onnx
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import char_tokenizer  # noqa: E402
import hf_model  # noqa: E402
import onnx_weights  # noqa: E402

# Added to the attention scores of masked keys. Finite (not -inf) so a row can never turn into NaN; exp() of it
# underflows to exactly 0 in float32.
MASK_VALUE = -1e9


def default_vocab():
    """<unk>, <eos>, newline, then printable ASCII (space .. ~)."""
    return [char_tokenizer.UNK, char_tokenizer.EOS, "\n"] + [chr(c) for c in range(32, 127)]


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Decoder(torch.nn.Module):
    """A *ForCausalLM's forward with the KV cache as tensors. Query t may attend key j when attention_mask[b, j]
    is 1 and j <= past + t; cached keys are stored rotated, so the past needs no positions."""

    def __init__(self, hf):
        super().__init__()
        core = hf.model
        self.embed, self.layers, self.norm, self.lm_head = core.embed_tokens, core.layers, core.norm, hf.lm_head
        rot = core.rotary_emb
        if getattr(rot, "rope_type", "default") != "default":
            raise ValueError(f"rope_type {rot.rope_type!r}: the embedded engine exports the default RoPE only")
        self.register_buffer("inv_freq", rot.inv_freq.detach().clone().float(), persistent=False)
        self.rope_scale = float(getattr(rot, "attention_scaling", 1.0))
        c = hf.config
        self.n_head, self.n_kv = c.num_attention_heads, c.num_key_value_heads or c.num_attention_heads
        self.head_dim = getattr(c, "head_dim", None) or c.hidden_size // c.num_attention_heads

    def rope(self, position_ids):
        """cos, sin [B, 1, T, D] of the default RoPE at these positions."""
        freqs = position_ids.to(torch.float32).unsqueeze(-1) * self.inv_freq  # [B, T, D/2]
        emb = torch.cat((freqs, freqs), dim=-1)
        return (emb.cos() * self.rope_scale).unsqueeze(1), (emb.sin() * self.rope_scale).unsqueeze(1)

    def qkv(self, layer, x, cos, sin):
        """The layer's rotated queries [B, H, T, D], keys and values [B, kv, T, D] for x [B, T, C]."""
        B, T = x.shape[:2]
        a = layer.self_attn
        h = layer.input_layernorm(x)
        q = a.q_proj(h).view(B, T, self.n_head, self.head_dim)
        k = a.k_proj(h).view(B, T, self.n_kv, self.head_dim)
        v = a.v_proj(h).view(B, T, self.n_kv, self.head_dim).transpose(1, 2)
        if hasattr(a, "q_norm"):  # Qwen3 normalises each head's queries and keys
            q, k = a.q_norm(q), a.k_norm(k)
        q, k = q.transpose(1, 2), k.transpose(1, 2)
        return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin, v

    def forward(self, input_ids, position_ids, attention_mask, *flat_past):
        B, T = input_ids.shape
        P = flat_past[0].shape[2]
        cos, sin = self.rope(position_ids)
        key_idx = torch.arange(P + T, dtype=torch.long).unsqueeze(0)
        qry_idx = torch.arange(T, dtype=torch.long).unsqueeze(1) + P
        allowed = (key_idx <= qry_idx).to(torch.float32).unsqueeze(0).unsqueeze(0) * attention_mask.unsqueeze(1).unsqueeze(1)
        bias = (1.0 - allowed) * MASK_VALUE  # [B, 1, T, P+T]
        x = self.embed(input_ids)
        present = []
        for i, layer in enumerate(self.layers):
            q, k, v = self.qkv(layer, x, cos, sin)
            k = torch.cat([flat_past[2 * i], k], dim=2)
            v = torch.cat([flat_past[2 * i + 1], v], dim=2)
            present += [k, v]
            rep = self.n_head // self.n_kv  # grouped-query attention: each kv head serves rep query heads
            kk, vv = (k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)) if rep > 1 else (k, v)
            att = torch.softmax((q @ kk.transpose(-2, -1)) * (self.head_dim ** -0.5) + bias, dim=-1)
            y = (att @ vv).transpose(1, 2).reshape(B, T, self.n_head * self.head_dim)
            x = x + layer.self_attn.o_proj(y)
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        return (self.lm_head(self.norm(x)).float(), *present)


class StaticDecoder(Decoder):
    """The same computation as Decoder over an engine-owned cache: key j < cache is attended when
    attention_mask[b, j] is 1 (the engine marks the positions it has filled); new key t' by query t when t' <= t."""

    def forward(self, input_ids, position_ids, attention_mask, *flat_past):
        B, T = input_ids.shape
        L = flat_past[1].shape[2]
        rep = self.n_head // self.n_kv
        cos, sin = self.rope(position_ids)
        past_bias = ((1.0 - attention_mask[:, :L]) * MASK_VALUE).view(B, 1, 1, L)
        causal = (torch.arange(T).unsqueeze(0) <= torch.arange(T).unsqueeze(1)).to(torch.float32)  # [T(query), T(key)]
        new_allowed = causal.view(1, 1, T, T) * attention_mask[:, L:].view(B, 1, 1, T)
        new_bias = ((1.0 - new_allowed) * MASK_VALUE).repeat(1, 1, rep, 1)  # [B, 1, rep*T, T], rows (r, t)
        scale = self.head_dim ** -0.5
        x = self.embed(input_ids)
        new = []
        for i, layer in enumerate(self.layers):
            q, k, v = self.qkv(layer, x, cos, sin)
            new += [k, v]
            # Query head h = kv * rep + r serves kv head kv (repeat_interleave's order): fold r into the rows.
            qg = q.reshape(B, self.n_kv, rep * T, self.head_dim)
            s_past = (qg @ flat_past[2 * i]) * scale + past_bias  # [B, kv, rep*T, L]
            s_new = (qg @ k.transpose(-2, -1)) * scale + new_bias  # [B, kv, rep*T, T]
            att = torch.softmax(torch.cat([s_past, s_new], dim=-1), dim=-1)
            y = att[..., :L] @ flat_past[2 * i + 1] + att[..., L:] @ v  # [B, kv, rep*T, D]
            y = y.reshape(B, self.n_head, T, self.head_dim).transpose(1, 2).reshape(B, T, self.n_head * self.head_dim)
            x = x + layer.self_attn.o_proj(y)
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        logits = self.lm_head(self.norm(x[:, -1])).float()
        # log-sum-exp and entropy of the next-token distribution, from the shifted logits (no cancellation), summed
        # in float64: a float32 sum over a 49,152-token vocabulary was off by up to 3e-5 nats.
        top = logits.amax(dim=-1, keepdim=True)
        d = logits - top
        e = d.exp()
        s = e.double().sum(dim=-1)
        log_s = s.log()
        lse = top.squeeze(-1).double() + log_s
        entropy = log_s - (e * d).double().sum(dim=-1) / s
        return (logits, lse, entropy, *new)


def engine_config(hf, tok_files, graph="static", weights="float32"):
    s = hf_model.summary(hf)
    return {"weights": weights, "model_type": s["model_type"], "vocab_size": s["vocab_size"], "n_layer": s["n_layer"],
            "n_head": s["n_head"], "n_kv_head": s["n_kv_head"], "head_dim": s["head_dim"], "n_embd": s["n_embd"],
            "block_size": s["block_size"], "eos_token_id": hf_model.eos_id(tok_files), "graph": graph}


def export(hf, out_dir, graph="static", weights="float32"):
    """Trace the decoder into out_dir/model.onnx; graph "static" (the engine's) or "legacy" (see the header); weights
    as onnx_weights.store writes them (the static graph only: legacy stays as it was, for the bench)."""
    legacy = graph == "legacy"
    if weights not in onnx_weights.WEIGHTS or (legacy and weights != "float32"):
        raise ValueError(f"weights {weights!r}: one of {', '.join(onnx_weights.WEIGHTS)} (float32 for --graph legacy)")
    dec = (Decoder if legacy else StaticDecoder)(hf.float().eval()).eval()
    cfg = hf.config
    L = cfg.num_hidden_layers
    B, T, P = 2, 3, 4  # example sizes for tracing; all three axes are dynamic
    ids = torch.randint(0, cfg.vocab_size, (B, T), dtype=torch.long)
    pos = (torch.arange(T, dtype=torch.long) + P).unsqueeze(0).repeat(B, 1)
    mask = torch.ones(B, P + T, dtype=torch.float32)
    past = []
    for _ in range(L):
        k = torch.randn(B, dec.n_kv, P, dec.head_dim)
        past += [k if legacy else k.transpose(-2, -1).contiguous(), torch.randn(B, dec.n_kv, P, dec.head_dim)]
    past_names, out_names = [], []
    for i in range(L):
        past_names += [f"past_key_{i}", f"past_value_{i}"]
        out_names += [f"present_key_{i}", f"present_value_{i}"] if legacy else [f"new_key_{i}", f"new_value_{i}"]
    dyn = {"input_ids": {0: "batch", 1: "seq"}, "position_ids": {0: "batch", 1: "seq"},
           "attention_mask": {0: "batch", 1: "total"}, "logits": {0: "batch", 1: "seq"} if legacy else {0: "batch"}}
    stats = [] if legacy else ["logsumexp", "entropy"]
    for n in stats:
        dyn[n] = {0: "batch"}
    for j, n in enumerate(past_names):
        dyn[n] = {0: "batch", 2: "past"} if legacy or j % 2 else {0: "batch", 3: "past"}
    for n in out_names:
        dyn[n] = {0: "batch", 2: "total" if legacy else "seq"}
    path = os.path.join(out_dir, "model.onnx")
    extra = {}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        extra["dynamo"] = False  # PyTorch >= 2.9 defaults to the dynamo exporter (needs onnxscript); keep TorchScript
    buf = io.BytesIO()  # rewritten in memory before the one write (the float32 graph is ~0.5 GB for SmolLM2)
    with torch.no_grad():
        torch.onnx.export(dec, (ids, pos, mask, *past), buf,
                          input_names=["input_ids", "position_ids", "attention_mask"] + past_names,
                          output_names=["logits"] + stats + out_names,
                          dynamic_axes=dyn, opset_version=17, do_constant_folding=True, **extra)
    model = onnx.load_from_string(buf.getvalue())
    del buf
    if not legacy:
        onnx_weights.store(model, weights)
    onnx.save(model, path)
    return path


def write_dir(hf, tok_files, out_dir, graph="static", weights="float32"):
    """model.onnx + config.json + the tokenizer files into out_dir (which must exist). Used by the CLI and the trainer."""
    export(hf, out_dir, graph, weights)
    hf_model.write_tokenizer_files(out_dir, tok_files)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(engine_config(hf, tok_files, graph, weights), f, indent=2)


def build(args):
    """(model, tokenizer files) from --model or a random initialisation."""
    if args.model:
        return hf_model.load(args.model).eval(), hf_model.tokenizer_files(args.model)
    vocab = default_vocab()
    mc = json.loads(args.config) if args.config else {}
    mc.pop("vocab_size", None)
    torch.manual_seed(args.seed)
    cfg = hf_model.make_config(**mc, vocab_size=len(vocab), eos_token_id=1, pad_token_id=1)
    return hf_model.build(cfg).eval(), char_tokenizer.files(vocab, cfg.max_position_embeddings)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--model", help="an HF-format model directory")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--config", help='make_config arguments as JSON, e.g. {"n_layer": 2, "n_embd": 64}')
    ap.add_argument("--graph", choices=["static", "legacy"], default="static", help="the engine's graph, or the previous one (bench)")
    ap.add_argument("--weights", choices=list(onnx_weights.WEIGHTS), default="float32",
                    help="the linear layers' weights: float32, or int8/int4 blockwise (onnx_weights.py)")
    ap.add_argument("--save-hf", help="also save the model itself (HF format) into this directory (tests)")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    model, tok_files = build(args)
    t0 = time.perf_counter()
    write_dir(model, tok_files, args.out, args.graph, args.weights)
    seconds = time.perf_counter() - t0  # the export alone, as the trainer re-exports its in-memory model each step
    if args.save_hf:
        os.makedirs(args.save_hf, exist_ok=True)
        hf_model.save(model, args.save_hf, tok_files)
    print(json.dumps({"out": args.out, "params": sum(p.numel() for p in model.parameters()), "seconds": round(seconds, 2)}))


if __name__ == "__main__":
    main()
