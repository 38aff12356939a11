"""
A real TRL run as a producer of a foreign run (for the import tests): GRPOTrainer on CPU, a tiny random Llama and
a character tokenizer (no hub here), two reward functions with reward_weights, log_completions=True. TRL writes
<out>/completions/completions_{step:05d}.parquet itself; the test imports that folder.

usage: trl_grpo_producer.py OUT_DIR STEPS
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "workers", "trainer"))

import char_tokenizer  # noqa: E402
import torch  # noqa: E402
from datasets import Dataset  # noqa: E402
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast  # noqa: E402
from trl import GRPOConfig, GRPOTrainer  # noqa: E402


def digits(completions, **_):
    """1 when the completion holds a digit."""
    return [1.0 if any(c.isdigit() for c in text) else 0.0 for text in completions]


def short(completions, **_):
    """Shorter is better: 1 for an empty completion, less the longer it is."""
    return [1.0 / (1 + len(text)) for text in completions]


def main(out, steps):
    torch.manual_seed(0)
    tok_dir = os.path.join(out, "tokenizer")
    os.makedirs(tok_dir, exist_ok=True)
    vocab = [char_tokenizer.UNK, char_tokenizer.EOS] + list("0123456789+-*= ?abcdefghijklmnopqrstuvwxyzW")
    char_tokenizer.write(tok_dir, vocab, 256)
    tok = PreTrainedTokenizerFast.from_pretrained(tok_dir)
    model = LlamaForCausalLM(LlamaConfig(
        vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=2, max_position_embeddings=256, eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id, bos_token_id=None,
    ))
    data = Dataset.from_dict({"prompt": [f"What is {a}+{b}? " for a, b in [(2, 3), (4, 1), (7, 2), (5, 5)]]})
    args = GRPOConfig(
        output_dir=out, per_device_train_batch_size=4, num_generations=4, max_completion_length=6, max_steps=steps,
        learning_rate=1e-3, logging_steps=1, log_completions=True, report_to="none", save_strategy="no",
        use_cpu=True, bf16=False, reward_weights=[1.0, 0.5], seed=0, num_completions_to_print=0,
    )
    GRPOTrainer(model=model, processing_class=tok, reward_funcs=[digits, short], args=args,
                train_dataset=data).train()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
