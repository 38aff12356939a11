"""
Export the decoder (workers/trainer/model.py) to ONNX for the embedded engine (workers/engines/onnx-engine.ts).

    .venv/bin/python export_onnx.py --out DIR [--checkpoint PATH] [--seed S] [--config JSON]

Writes into DIR:
  model.onnx      one graph for prefill and decode:
                    inputs  input_ids [batch, seq] int64, position_ids [batch, seq] int64,
                            attention_mask [batch, past+seq] float32 (1 = real token, 0 = padding),
                            past_key_<i>, past_value_<i> [batch, n_head, past, head_dim] float32, i = 0..n_layer-1
                    outputs logits [batch, seq, vocab] float32,
                            present_key_<i>, present_value_<i> [batch, n_head, past+seq, head_dim] float32
                  batch, seq and past are dynamic. Prefill passes past = 0 (zero-length past tensors; ONNX
                  Runtime handles them, tested in tests/integration/engine-onnx.test.ts).
  tokenizer.json  {"type": "char", "vocab": [...], "unk_id": 0, "eos_id": 1}: token id = index in vocab.
  config.json     the model config (vocab_size, n_layer, n_head, n_embd, block_size, head_dim, ...).

Without --checkpoint the weights are a random initialisation from --seed (tests). A checkpoint is a torch.save()d
dict {"config": {...}, "model": state_dict, "vocab": [...] (optional)}; the trainer writes those.
--config is a JSON object overriding GPTConfig fields (ignored for fields a checkpoint sets).
"""
import argparse
import inspect
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checkpoint  # noqa: E402
from model import GPT, GPTConfig  # noqa: E402

UNK = "<unk>"
EOS = "<eos>"


def default_vocab():
    """<unk>, <eos>, newline, then printable ASCII (space .. ~)."""
    return [UNK, EOS, "\n"] + [chr(c) for c in range(32, 127)]


def build(args):
    vocab = default_vocab()
    overrides = json.loads(args.config) if args.config else {}
    if args.checkpoint:
        ckpt = checkpoint.read(args.checkpoint)  # the trainer's own reader: never unpickles
        vocab = ckpt.get("vocab", vocab)
        cfg_dict = dict(ckpt["config"])
        cfg_dict.pop("head_dim", None)
        cfg = GPTConfig(**cfg_dict)
        model = GPT(cfg)
        model.load_state_dict(ckpt["model"])
    else:
        torch.manual_seed(args.seed)
        cfg = GPTConfig(**{"vocab_size": len(vocab), **overrides})
        model = GPT(cfg)
    if cfg.vocab_size != len(vocab):
        raise SystemExit(f"vocab_size {cfg.vocab_size} != tokenizer vocab {len(vocab)}")
    return model.eval(), cfg, vocab


def export(model, cfg, out_dir):
    L = cfg.n_layer
    B, T, P = 2, 3, 4  # example sizes for tracing; all three axes are dynamic
    ids = torch.randint(0, cfg.vocab_size, (B, T), dtype=torch.long)
    pos = (torch.arange(T, dtype=torch.long) + P).unsqueeze(0).repeat(B, 1)
    mask = torch.ones(B, P + T, dtype=torch.float32)
    past = [torch.randn(B, cfg.n_head, P, cfg.head_dim) for _ in range(2 * L)]

    class Wrapper(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, position_ids, attention_mask, *flat_past):
            past_kv = [(flat_past[2 * i], flat_past[2 * i + 1]) for i in range(L)]
            logits, present = self.m(input_ids, past_kv, position_ids, attention_mask)
            flat = []
            for k, v in present:
                flat += [k, v]
            return (logits, *flat)

    past_names, present_names = [], []
    for i in range(L):
        past_names += [f"past_key_{i}", f"past_value_{i}"]
        present_names += [f"present_key_{i}", f"present_value_{i}"]
    dyn = {
        "input_ids": {0: "batch", 1: "seq"},
        "position_ids": {0: "batch", 1: "seq"},
        "attention_mask": {0: "batch", 1: "total"},
        "logits": {0: "batch", 1: "seq"},
    }
    for n in past_names:
        dyn[n] = {0: "batch", 2: "past"}
    for n in present_names:
        dyn[n] = {0: "batch", 2: "total"}
    path = os.path.join(out_dir, "model.onnx")
    extra = {}
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        extra["dynamo"] = False  # PyTorch >= 2.9 defaults to the dynamo exporter (needs onnxscript); keep TorchScript
    with torch.no_grad():
        torch.onnx.export(
            Wrapper(model), (ids, pos, mask, *past), path,
            input_names=["input_ids", "position_ids", "attention_mask"] + past_names,
            output_names=["logits"] + present_names,
            dynamic_axes=dyn, opset_version=14, do_constant_folding=True, **extra,
        )
    return path


def write_dir(model, cfg, vocab, out_dir):
    """model.onnx + tokenizer.json + config.json into out_dir (which must exist). Used by the CLI and the trainer."""
    export(model, cfg, out_dir)
    unk = vocab.index(UNK) if UNK in vocab else 0
    eos = vocab.index(EOS) if EOS in vocab else 1
    with open(os.path.join(out_dir, "tokenizer.json"), "w") as f:
        json.dump({"type": "char", "vocab": vocab, "unk_id": unk, "eos_id": eos}, f)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump({**cfg.to_dict(), "head_dim": cfg.head_dim}, f, indent=2)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--checkpoint")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--config", help='JSON overrides, e.g. {"n_layer": 2, "n_embd": 64}')
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    model, cfg, vocab = build(args)
    write_dir(model, cfg, vocab, args.out)
    print(json.dumps({"out": args.out, "params": sum(p.numel() for p in model.parameters())}))


if __name__ == "__main__":
    main()
