"""Test helper: a small random model written as a GGUF file the way llama.cpp's converter writes one, and the
logits of a model directory, so that the GGUF import can be checked against its source.

    write_gguf.py write OUT.gguf --arch llama|qwen2|qwen3|gpt2 [--quant Q8_0|F32] [--no-chat-template]
        prints {"logits": [...], "ids": [...]}: the source model's logits for a fixed prompt
    write_gguf.py logits DIR     prints {"logits": [...]} for the same prompt, the model loaded from DIR

The tokenizer is byte-level BPE (GGUF's "gpt2" model): the 256 byte symbols, a few merges and ChatML's tokens.
`--arch gpt2` writes a file whose architecture Toolsmith does not import (the import must refuse it by name).
"""
import argparse
import json
import sys

import numpy as np
import torch

IDS = [5, 17, 42, 99, 3, 250, 7, 64]
TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
            "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def byte_symbols():
    # GPT-2's bytes_to_unicode: every byte as a printable character.
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def permute(w, n_head, n_head_kv):
    # llama.cpp's convert_hf_to_gguf.py LlamaModel.permute: GGUF stores Llama's q and k rows interleaved.
    if n_head_kv is not None and n_head != n_head_kv:
        n_head = n_head_kv
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def write(a):
    import gguf
    from transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM, Qwen3Config, Qwen3ForCausalLM

    syms = byte_symbols()
    merges = ["Ġ t", "h e", "Ġt he", "i n", "1 2"]
    tokens = syms + [m.replace(" ", "") for m in merges] + ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    types = [1] * (len(tokens) - 3) + [3, 3, 3]
    V, H, L, NH, NKV, I = len(tokens), 64, 2, 4, 2, 128
    common = dict(vocab_size=V, hidden_size=H, num_hidden_layers=L, num_attention_heads=NH, num_key_value_heads=NKV,
                  intermediate_size=I, max_position_embeddings=256, rms_norm_eps=1e-6, tie_word_embeddings=False,
                  bos_token_id=V - 3, eos_token_id=V - 1)
    torch.manual_seed(0)
    if a.arch == "qwen3":
        model = Qwen3ForCausalLM(Qwen3Config(head_dim=H // NH, **common))
    elif a.arch == "qwen2":  # q, k and v with biases; rotary in halves (NEOX), so stored unpermuted
        model = Qwen2ForCausalLM(Qwen2Config(**common))
    else:
        model = LlamaForCausalLM(LlamaConfig(**common))
    model.eval()
    with torch.no_grad():
        for p in model.parameters():  # norms away from 1 and biases away from 0, so a missed tensor shows
            p.add_(torch.randn_like(p) * 0.02)
        logits = model(torch.tensor([IDS])).logits[0].tolist()
    arch = {"llama": gguf.MODEL_ARCH.LLAMA, "qwen2": gguf.MODEL_ARCH.QWEN2, "qwen3": gguf.MODEL_ARCH.QWEN3,
            "gpt2": gguf.MODEL_ARCH.LLAMA}[a.arch]
    names = gguf.get_tensor_name_map(arch, L)
    w = gguf.GGUFWriter(a.out, a.arch)
    w.add_name("toolsmith-test")
    w.add_block_count(L)
    w.add_context_length(256)
    w.add_embedding_length(H)
    w.add_feed_forward_length(I)
    w.add_head_count(NH)
    w.add_head_count_kv(NKV)
    w.add_rope_freq_base(model.config.rope_parameters["rope_theta"])
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_dimension_count(H // NH)
    if a.arch == "qwen3":
        w.add_key_length(H // NH)
        w.add_value_length(H // NH)
    quant = gguf.GGMLQuantizationType[a.quant]
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0 if a.quant == "Q8_0" else gguf.LlamaFileType.ALL_F32)
    w.add_vocab_size(V)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(V - 3)
    w.add_eos_token_id(V - 1)
    if not a.no_chat_template:
        w.add_chat_template(TEMPLATE)
    for hf_name, p in model.state_dict().items():
        data = p.detach().float().numpy()
        permuted = a.arch in ("llama", "gpt2")  # llama.cpp's converter permutes Llama's q and k only
        if permuted and hf_name.endswith("q_proj.weight"):
            data = permute(data, NH, NH)
        elif permuted and hf_name.endswith("k_proj.weight"):
            data = permute(data, NH, NKV)
        name = names.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        if name is None:
            sys.exit(f"no GGUF name for {hf_name}")
        if data.ndim == 2 and quant != gguf.GGMLQuantizationType.F32:
            w.add_tensor(name, gguf.quants.quantize(data, quant), raw_dtype=quant)
        else:
            w.add_tensor(name, data.astype(np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    print(json.dumps({"ids": IDS, "logits": logits}))


def logits(a):
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(a.dir, dtype=torch.float32)
    model.eval()
    with torch.no_grad():
        print(json.dumps({"logits": model(torch.tensor([IDS])).logits[0].tolist()}))


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    wp = sub.add_parser("write")
    wp.add_argument("out")
    wp.add_argument("--arch", default="llama")
    wp.add_argument("--quant", default="Q8_0")
    wp.add_argument("--no-chat-template", action="store_true")
    lp = sub.add_parser("logits")
    lp.add_argument("dir")
    args = p.parse_args()
    write(args) if args.cmd == "write" else logits(args)
