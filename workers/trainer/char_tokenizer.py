"""
A character-level tokenizer as a standard Hugging Face tokenizer.json, so the embedded model is an HF-format model
like any other (tokenizers/transformers load it in Python, @huggingface/tokenizers in TypeScript, same ids).

Encoding: a BPE model whose vocabulary is the single characters and which has no merges, so every character is one
token and a character outside the vocabulary is <unk>; entries longer than one character (the template's tags,
<|im_start|>, ...) are added tokens, matched first, longest first, as in Qwen's tokenizer. Decoding fuses the
pieces (no spaces between them). <unk> and <eos> are special tokens; <eos> ends generation.
"""
import json
import os

UNK = "<unk>"
EOS = "<eos>"

# ChatML, as Qwen writes it: the embedded template (workers/rollout/template.ts) renders the same tags itself.
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


def tokenizer_json(vocab):
    """The tokenizer.json object for vocab (token id = index)."""
    if UNK not in vocab:
        raise ValueError(f"the vocabulary needs {UNK}")
    special = {UNK, EOS}
    added = [{"id": i, "content": p, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": p in special} for i, p in enumerate(vocab) if len(p) > 1]
    return {
        "version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
        "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": {"type": "Fuse"},
        "model": {"type": "BPE", "dropout": None, "unk_token": UNK, "continuing_subword_prefix": None,
                  "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                  "vocab": {p: i for i, p in enumerate(vocab)}, "merges": []},
    }


def tokenizer_config(vocab, model_max_length):
    return {
        "tokenizer_class": "PreTrainedTokenizerFast", "unk_token": UNK, "eos_token": EOS if EOS in vocab else None,
        "pad_token": EOS if EOS in vocab else UNK, "model_max_length": model_max_length, "chat_template": CHAT_TEMPLATE,
        "clean_up_tokenization_spaces": False,
    }


def files(vocab, model_max_length):
    """{file name: text} of the tokenizer files of an HF model directory."""
    return {
        "tokenizer.json": json.dumps(tokenizer_json(vocab), ensure_ascii=False),
        "tokenizer_config.json": json.dumps(tokenizer_config(vocab, model_max_length), ensure_ascii=False, indent=2),
    }


def write(out_dir, vocab, model_max_length):
    for name, text in files(vocab, model_max_length).items():
        with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
            f.write(text)
