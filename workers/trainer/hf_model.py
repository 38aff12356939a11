"""
The policy as a Hugging Face model: built from a small config (the embedded default, trained from scratch) or
loaded from a directory in HF format (config.json, *.safetensors, tokenizer.json, tokenizer_config.json), through
transformers' AutoModelForCausalLM, so the 15-minute demo and a 14B run share every line of the trainer.

Any decoder-only architecture transformers supports loads; `make_config` builds the ones `model init` offers
(Qwen3 by default; Qwen2 and Llama share its layout). Remote code is never run (trust_remote_code stays False).
"""
import json
import os

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM

ARCHS = {"qwen3": transformers.Qwen3Config, "qwen2": transformers.Qwen2Config, "llama": transformers.LlamaConfig}
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja")


def make_config(arch="qwen3", n_layer=4, n_embd=64, n_head=4, n_kv_head=None, vocab_size=128, block_size=512,
                intermediate_size=None, rope_theta=10000.0, init_std=0.02, eos_token_id=None, pad_token_id=None):
    """A transformers config from the sizes a recipe or `model init` gives. head_dim = n_embd / n_head; the MLP is
    4 × n_embd unless given; embeddings tied (as small Qwen3 models are). rope_theta 1e4 (Qwen3 uses 1e6 for its
    40K context; the embedded model's context is 512)."""
    if arch not in ARCHS:
        raise ValueError(f"arch must be one of {', '.join(ARCHS)}")
    kv = n_kv_head or n_head
    if n_embd % n_head or n_head % kv:
        raise ValueError("n_head must divide n_embd and n_kv_head must divide n_head")
    kw = dict(vocab_size=vocab_size, hidden_size=n_embd, intermediate_size=intermediate_size or 4 * n_embd,
              num_hidden_layers=n_layer, num_attention_heads=n_head, num_key_value_heads=kv,
              max_position_embeddings=block_size, initializer_range=init_std, tie_word_embeddings=True,
              rope_parameters={"rope_type": "default", "rope_theta": float(rope_theta)},
              eos_token_id=eos_token_id, pad_token_id=pad_token_id, bos_token_id=None)
    if arch in ("qwen3", "llama"):
        kw["head_dim"] = n_embd // n_head
    if arch == "qwen2":
        kw["use_sliding_window"] = False
    return ARCHS[arch](**kw)


def build(config, qk_norm_gain=None):
    """Random weights (the caller seeds torch first), float32, SDPA attention. qk_norm_gain (Qwen3 only) starts the
    per-head query/key RMSNorm gains at that value instead of 1: normalised queries and keys bound an attention logit
    by gain² × sqrt(head_dim), 4 for a 16-wide head at gain 1, too flat for a tiny model to single out one token of
    hundreds (copying a number from the problem), until the gains have grown."""
    model = AutoModelForCausalLM.from_config(config, attn_implementation="sdpa", dtype=torch.float32)
    if qk_norm_gain is not None:
        with torch.no_grad():
            for layer in model.model.layers:
                for norm in (getattr(layer.self_attn, "q_norm", None), getattr(layer.self_attn, "k_norm", None)):
                    if norm is not None:
                        norm.weight.fill_(float(qk_norm_gain))
    return model


def load(model_dir, dtype=torch.float32):
    """The model of an HF-format directory. Weights come from safetensors only (never a pickle)."""
    return AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype, attn_implementation="sdpa",
                                                use_safetensors=True, trust_remote_code=False)


def read_config(model_dir):
    return AutoConfig.from_pretrained(model_dir, trust_remote_code=False)


def block_size(config):
    return int(getattr(config, "max_position_embeddings", 0) or 0) or 2048


def summary(model):
    """The shape of the model, in the names the rest of Toolsmith uses (recipes, the engine, the Models page)."""
    c = model.config
    heads = c.num_attention_heads
    return {
        "architecture": (c.architectures or [type(model).__name__])[0] if getattr(c, "architectures", None) else type(model).__name__,
        "model_type": c.model_type, "n_layer": c.num_hidden_layers, "n_embd": c.hidden_size, "n_head": heads,
        "n_kv_head": getattr(c, "num_key_value_heads", None) or heads,
        "head_dim": getattr(c, "head_dim", None) or c.hidden_size // heads,
        "intermediate_size": getattr(c, "intermediate_size", None), "vocab_size": c.vocab_size,
        "block_size": block_size(c), "tie_word_embeddings": bool(getattr(c, "tie_word_embeddings", False)),
        "params": sum(p.numel() for p in model.parameters()),
    }


def tokenizer_files(model_dir):
    """{name: text} of the tokenizer files a model directory holds (copied into every checkpoint and export)."""
    out = {}
    for name in TOKENIZER_FILES:
        p = os.path.join(model_dir, name)
        if os.path.isfile(p):
            with open(p, encoding="utf-8") as f:
                out[name] = f.read()
    return out


def write_tokenizer_files(out_dir, files):
    for name, text in files.items():
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
            f.write(text)


def save(model, out_dir, tok_files, state_dict=None, max_shard_size="5GB"):
    """HF format into out_dir: config.json, generation_config.json, model.safetensors (sharded with an index when
    larger than max_shard_size), the tokenizer files. from_pretrained, vLLM and SGLang load it as it is."""
    model.save_pretrained(out_dir, state_dict=state_dict, safe_serialization=True, max_shard_size=max_shard_size)
    write_tokenizer_files(out_dir, tok_files)


def eos_id(tok_files):
    """The id of the tokenizer's eos token (tokenizer_config.json's eos_token, looked up in tokenizer.json)."""
    try:
        cfg = json.loads(tok_files.get("tokenizer_config.json", "{}"))
        tj = json.loads(tok_files["tokenizer.json"])
    except (KeyError, ValueError):
        return None
    eos = cfg.get("eos_token")
    eos = eos.get("content") if isinstance(eos, dict) else eos
    if not eos:
        return None
    for t in tj.get("added_tokens", []):
        if t.get("content") == eos:
            return t["id"]
    return (tj.get("model", {}).get("vocab") or {}).get(eos) if isinstance(tj.get("model", {}).get("vocab"), dict) else None
