"""
The baseline of bench:trainer: raw transformers forward + backward + AdamW step on the same model config and the
same batches the trainer gets, in one process with no RPC, no validation, no metrics. Prints one JSON line.

    .venv/bin/python raw_step_bench.py BATCHES.json CONFIG_JSON
BATCHES.json: [[seq, ...], ...] (token ids); each batch is right-padded, loss on every next token.
CONFIG_JSON: hf_model.make_config's arguments (vocab_size included).
"""
import json
import os
import sys
import time

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hf_model  # noqa: E402  (only make_config/build: the model is transformers' own class)

if os.environ.get("TOOLSMITH_TRAINER_THREADS"):
    torch.set_num_threads(int(os.environ["TOOLSMITH_TRAINER_THREADS"]))
batches = json.load(open(sys.argv[1]))
cfg = hf_model.make_config(**json.loads(sys.argv[2]))
torch.manual_seed(0)
model = hf_model.build(cfg)
model.train()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
tokens = 0
t0 = None
for i, batch in enumerate(batches):
    if i == 1:
        t0 = time.perf_counter()  # the first batch warms up allocators
    T = max(len(s) for s in batch)
    ids = torch.zeros(len(batch), T, dtype=torch.long)
    attn = torch.zeros(len(batch), T, dtype=torch.long)
    for r, s in enumerate(batch):
        ids[r, :len(s)] = torch.tensor(s)
        attn[r, :len(s)] = 1
    logits = model(input_ids=ids, attention_mask=attn, use_cache=False).logits
    mask = attn[:, 1:].float()
    nll = F.cross_entropy(logits[:, :-1].reshape(-1, cfg.vocab_size).float(), ids[:, 1:].reshape(-1), reduction="none")
    loss = (nll * mask.reshape(-1)).sum() / mask.sum()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    if i >= 1:
        tokens += sum(len(s) for s in batch)
print(json.dumps({"tokens": tokens, "seconds": time.perf_counter() - t0, "tokens_per_s": tokens / (time.perf_counter() - t0)}))
